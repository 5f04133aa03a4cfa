"""The ``/v1/runs`` endpoints."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from agents.ports.artefacts import SUMMARY_FILE
from controller.entry.service import artefacts, blueprint_submit, events
from controller.entry.service.auth import Caller, Principal
from controller.entry.service.check_models import CheckOut
from controller.entry.service.idempotency import REPLAYED, idempotency
from controller.entry.service.problems import Problem, refuse_while_draining, validation_line
from controller.entry.service.schemas import PROBLEMS, ArtefactEntry, RunList, RunOut, RunRequest
from controller.entry.service.state import ServiceState, state_of
from controller.entry.service.submit import accept, accept_upload
from controller.entry.service.uploads import read_upload
from controller.platform.store import Idempotency, RunRow, RunStatus
from controller.runner import dispatch
from controller.runner.dispatch import remove_upload

router = APIRouter(prefix="/v1/runs", tags=["runs"], responses=PROBLEMS)
RunId = Annotated[str, Path(min_length=1, max_length=128, description="The run's id.")]
_TEXT = {".py", ".txt", ".md", ".csv", ".jsonl", ".idr", ".diff", ".log", ".toml"}


def visible_run(state: ServiceState, caller: Principal, run_id: str) -> RunRow:
    """The run ``run_id`` if the caller may see it; 404 alike for absent and another tenant's."""
    row = state.store.get(run_id)
    if row is None or not caller.sees(row):
        raise Problem(404, f"no run {run_id[:128]}")
    return row


_MULTIPART_SCHEMA = {
    "type": "object", "required": ["statement"],
    "properties": {
        "statement": {"type": "string", "format": "binary", "description": "The statement PDF."},
        "result": {"type": "string", "format": "binary", "description": "Optional result.csv to compare with."},
        "target_toml": {"type": "string", "format": "binary", "description": "Optional target.toml."},
        "target": {"type": "string", "description": "A name for the uploaded target (default: upload)."},
        "agent": {"type": "string"}, "max_attempts": {"type": "integer", "minimum": 1, "maximum": 50},
        "coder": {"type": "string", "enum": ["offline", "gemini", "openai", "ollama"]},
    },
}
_SUBMIT_BODY = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": {"oneOf": [RunRequest.model_json_schema(),
                                              blueprint_submit.BlueprintJSON.model_json_schema()]}},
    "multipart/form-data": {"schema": _MULTIPART_SCHEMA},
}}}


@router.post("", status_code=202, response_model=RunOut, summary="Start a run on a named or an uploaded target",
             openapi_extra=_SUBMIT_BODY, responses={415: PROBLEMS[422] | {"description": "Neither JSON nor multipart"}})
async def submit_run(request: Request, caller: Caller) -> JSONResponse:
    """Queue a loop on ``target`` (JSON: a folder of the service's data/), on an uploaded statement
    (multipart), or on a blueprint sent with its files (JSON with ``blueprint``, or multipart with a
    ``blueprint`` part: docs/api.md); 202 once it is stored durably. With an ``Idempotency-Key`` a
    repeated request gets the run the first one made (200)."""
    state = state_of(request)
    refuse_while_draining(state.draining.is_set(), "runs")
    submission = await _submission(request, state, caller)
    key = idempotency(request, "/v1/runs", submission.fields, submission.files)
    if (earlier := await run_in_threadpool(replayed, state, caller, key)) is not None:
        return earlier
    row = await run_in_threadpool(submission.accept, key)
    return submitted(state, RunOut.of(row), row)


@dataclass(frozen=True)
class Submission:
    """A read submission: what identifies it (its fields and files) and how to accept it."""

    fields: dict[str, Any]
    files: list[tuple[str, str, bytes]]
    accept: Callable[[Idempotency | None], RunRow]


async def _submission(request: Request, state: ServiceState, caller: Principal) -> Submission:
    """The submission in the request's body: a blueprint (multipart or JSON), an uploaded target
    (multipart) or a named target (JSON)."""
    settings, store, owner = state.settings, state.store, caller.name
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data" and await blueprint_submit.is_blueprint_upload(request):
        blueprint = await blueprint_submit.read_blueprint_upload(request, settings)
    elif kind == "multipart/form-data":
        body, files = await read_upload(request, settings.service.upload_parts)
        return Submission(body.model_dump(mode="json"), [(name, name, data) for name, data in sorted(files.items())],
                          partial(accept_upload, settings, store, owner, body, files))
    elif kind in ("application/json", "") and blueprint_submit.is_blueprint_json(raw := await request.body()):
        blueprint = blueprint_submit.from_json(raw)
    elif kind in ("application/json", ""):
        named = _run_request(raw)
        return Submission(named.model_dump(mode="json"), [], partial(accept, settings, store, owner, named))
    else:
        raise Problem(415, f"send application/json or multipart/form-data, not {kind[:60]!r}")
    return Submission(blueprint.request.model_dump(mode="json"), blueprint_submit.request_files(blueprint),
                      partial(blueprint_submit.accept_blueprint, settings, store, owner, blueprint))


def replayed(state: ServiceState, caller: Principal, key: Idempotency | None) -> JSONResponse | None:
    """The answer to a request whose ``Idempotency-Key`` made a run already (200, that run), else None.

    Raises:
        IdempotencyConflict: the key came with another request (422).
    """
    if key is None:
        return None
    earlier = state.store.replay(caller.name, key, keep_seconds=state.settings.service.idempotency_seconds)
    if earlier is None:
        return None
    document = CheckOut.of(earlier) if dispatch.is_check(earlier) else RunOut.of(earlier)
    return accepted(document, 200, {REPLAYED: "true"})


def submitted(state: ServiceState, document: RunOut | CheckOut, row: RunRow) -> JSONResponse:
    """The answer to an accepted submission: 202, or 200 with ``Idempotent-Replayed`` when a
    concurrent request with the same key made the run first (found inside the store's transaction)."""
    if row.replayed:
        return accepted(document, 200, {REPLAYED: "true"})
    state.submitted.set()
    return accepted(document, 202)


def accepted(document: RunOut | CheckOut, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    """A run's (or check's) document as the answer to its submission."""
    return JSONResponse(document.model_dump(mode="json"), status_code=status,
                        headers={"Location": document.links.self, **(headers or {})})


def _run_request(raw: bytes) -> RunRequest:
    try:
        return RunRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise Problem(422, validation_line(exc.errors())) from None


@router.get("", response_model=RunList, summary="List runs, newest first")
def list_runs(request: Request, caller: Caller,
              target: Annotated[str | None, Query(max_length=128)] = None,
              status: RunStatus | None = None,
              limit: Annotated[int, Query(ge=1, le=100)] = 20,
              cursor: Annotated[str | None, Query(max_length=20)] = None) -> RunList:
    """The caller's runs (an admin: everyone's), filtered by target and status."""
    page = state_of(request).store.list_runs(owner=None if caller.admin else caller.name, target=target,
                                      status=status, limit=limit, cursor=cursor)
    return RunList(runs=[RunOut.of(r) for r in page.runs], next_cursor=page.cursor)


@router.get("/{run_id}", response_model=RunOut, summary="A run's status and summary")
def get_run(run_id: RunId, request: Request, caller: Caller) -> RunOut:
    """Status, attempts and, once it ended, the summary the CLI prints."""
    return RunOut.of(visible_run(state_of(request), caller, run_id))


@router.post("/{run_id}/cancel", status_code=202, response_model=RunOut, summary="Cancel a run")
def cancel_run(run_id: RunId, request: Request, caller: Caller) -> RunOut:
    """A queued run is cancelled at once; a running one is interrupted (its containers removed)."""
    state = state_of(request)
    row = visible_run(state, caller, run_id)
    if row.ended:
        raise Problem(409, f"run {run_id} has ended already ({row.status})")
    after = state.store.cancel(run_id) or row
    if after.ended and after.upload_held:  # cancelled before a worker had it: nobody else removes it now
        remove_upload(state.settings, state.store, run_id)
    state.signals.notify(run_id)
    return RunOut.of(after)


@router.post("/{run_id}/resume", status_code=202, response_model=RunOut, summary="Resume a stopped run")
def resume_run(run_id: RunId, request: Request, caller: Caller) -> RunOut:
    """Queue an ``error`` or ``cancelled`` run again; a worker continues it from its last checkpoint
    (the CLI's ``run --resume``). A run that never started, or that finished, cannot be resumed (409)."""
    state = state_of(request)
    row = visible_run(state, caller, run_id)
    run_dir = state.settings.runs_dir / row.id
    if row.status not in ("error", "cancelled"):
        raise Problem(409, f"run {run_id} is {row.status}: only a run that ended in error or was cancelled resumes")
    if not dispatch.resumable(run_dir):
        raise Problem(409, f"run {run_id} has no run.json: it stopped before it started; submit it again")
    if (run_dir / SUMMARY_FILE).is_file():
        raise Problem(409, f"run {run_id} already finished (see its summary.json): submit it again")
    after = state.store.requeue(run_id, quota=state.settings.service.quota_per_token)
    if after is None:
        raise Problem(409, f"run {run_id} changed meanwhile; see GET /v1/runs/{run_id}")
    state.submitted.set()
    return RunOut.of(after)


@router.get("/{run_id}/events", summary="The run's progress as Server-Sent Events",
            response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "status, line, node_started, node, question and end events, each "
                                            "with its number as id (docs/api.md)"}})
def run_events(run_id: RunId, request: Request, caller: Caller,
               after: Annotated[int | None, Query(ge=0, le=events.MAX_ID,
                                                  description="Start after this event id (as Last-Event-ID).")] = None,
               last_event_id: Annotated[str | None, Header(
                   description="Resume after this id (anything else: from the start).")] = None,
               ) -> StreamingResponse:
    """From the run's first event (or after ``Last-Event-ID`` / ``after``); ends when the run ends."""
    state = state_of(request)
    row = visible_run(state, caller, run_id)
    body = event_stream(state, row.id, events.last_event_id(last_event_id, after))
    return StreamingResponse(body, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def event_stream(state: ServiceState, run_id: str, after: int) -> AsyncIterator[str]:
    """The run's events after ``after`` as SSE text (the API's stream; the console serves the same)."""
    return events.stream(lambda: state.store.get(run_id),
                         lambda seen: state.store.events(run_id, after=seen, limit=events.BATCH),
                         lambda r: RunOut.of(r).model_dump(mode="json"), state.draining.is_set,
                         state.signals.pause_for(run_id), after=after)


@router.get("/{run_id}/artefacts", response_model=list[ArtefactEntry], summary="The files of a run")
def list_artefacts(run_id: RunId, request: Request, caller: Caller) -> list[ArtefactEntry]:
    """Every regular file in the run's folder (symlinks are neither listed nor followed)."""
    state = state_of(request)
    row = visible_run(state, caller, run_id)
    return [ArtefactEntry(path=p, bytes=n) for p, n in artefacts.listing(state.settings.runs_dir / row.id)]


@router.get("/{run_id}/artefacts/{path:path}", summary="One file of a run",
            response_class=StreamingResponse,
            responses={200: {"content": {"text/plain": {}, "application/octet-stream": {}}}})
def get_artefact(run_id: RunId, path: str, request: Request, caller: Caller) -> StreamingResponse:
    """A file under the run's folder: parser.py, result.json, diff.txt, summary.json, …"""
    state = state_of(request)
    row = visible_run(state, caller, run_id)
    run_dir = state.settings.runs_dir / row.id
    file = artefacts.safe_file(run_dir, path)
    body, size = artefacts.served(artefacts.open_file(file),
                                  dispatch.scrubber(state.settings, row))
    media = ("application/json" if file.suffix == ".json"
             else "text/plain; charset=utf-8" if file.suffix in _TEXT else "application/octet-stream")
    return StreamingResponse(body, media_type=media,
                             headers={"X-Content-Type-Options": "nosniff", "Content-Length": str(size),
                                      "Content-Security-Policy": "default-src 'none'"})
