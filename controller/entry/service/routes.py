"""The ``/v1/runs`` endpoints."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from agents.ports.artefacts import SUMMARY_FILE
from controller.entry.service import artefacts, blueprint_submit, child, events
from controller.entry.service.auth import Principal, principal
from controller.entry.service.problems import Problem, validation_line
from controller.entry.service.schemas import PROBLEMS, ArtefactEntry, RunList, RunOut, RunRequest
from controller.entry.service.state import ServiceState
from controller.entry.service.submit import accept, accept_upload
from controller.entry.service.uploads import read_upload
from controller.platform.store import RunRow, RunStatus

router = APIRouter(prefix="/v1/runs", tags=["runs"], responses=PROBLEMS)
Caller = Annotated[Principal, Depends(principal)]
RunId = Annotated[str, Path(min_length=1, max_length=128, description="The run's id.")]
_TEXT = {".py", ".txt", ".md", ".csv", ".jsonl", ".idr", ".diff", ".log", ".toml"}


def _state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.service
    return state


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
    ``blueprint`` part: docs/api.md); 202 once it is stored durably."""
    state = _state(request)
    if state.draining.is_set():
        raise Problem(503, "the service is shutting down and accepts no runs", headers={"Retry-After": "30"})
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data" and await blueprint_submit.is_blueprint_upload(request):
        upload = await blueprint_submit.read_blueprint_upload(request, state.settings)
        row = await run_in_threadpool(blueprint_submit.accept_blueprint, state.settings, state.store, caller.name, upload)
    elif kind == "multipart/form-data":
        body, files = await read_upload(request, state.settings.service.upload_parts)
        row = await run_in_threadpool(accept_upload, state.settings, state.store, caller.name, body, files)
    elif kind in ("application/json", "") and blueprint_submit.is_blueprint_json(raw := await request.body()):
        upload = blueprint_submit.from_json(raw)
        row = await run_in_threadpool(blueprint_submit.accept_blueprint, state.settings, state.store, caller.name, upload)
    elif kind in ("application/json", ""):
        body = _run_request(await request.body())
        row = await run_in_threadpool(accept, state.settings, state.store, caller.name, body)
    else:
        raise Problem(415, f"send application/json or multipart/form-data, not {kind[:60]!r}")
    state.submitted.set()
    document = RunOut.of(row)
    return JSONResponse(document.model_dump(mode="json"), status_code=202,
                        headers={"Location": document.links.self})


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
    page = _state(request).store.list_runs(owner=None if caller.admin else caller.name, target=target,
                                      status=status, limit=limit, cursor=cursor)
    return RunList(runs=[RunOut.of(r) for r in page.runs], next_cursor=page.cursor)


@router.get("/{run_id}", response_model=RunOut, summary="A run's status and summary")
def get_run(run_id: RunId, request: Request, caller: Caller) -> RunOut:
    """Status, attempts and, once it ended, the summary the CLI prints."""
    return RunOut.of(visible_run(_state(request), caller, run_id))


@router.post("/{run_id}/cancel", status_code=202, response_model=RunOut, summary="Cancel a run")
def cancel_run(run_id: RunId, request: Request, caller: Caller) -> RunOut:
    """A queued run is cancelled at once; a running one is interrupted (its containers removed)."""
    state = _state(request)
    row = visible_run(state, caller, run_id)
    if row.ended:
        raise Problem(409, f"run {run_id} has ended already ({row.status})")
    after = state.store.cancel(run_id)
    return RunOut.of(after or row)


@router.post("/{run_id}/resume", status_code=202, response_model=RunOut, summary="Resume a stopped run")
def resume_run(run_id: RunId, request: Request, caller: Caller) -> RunOut:
    """Queue an ``error`` or ``cancelled`` run again; a worker continues it from its last checkpoint
    (the CLI's ``run --resume``). A run that never started, or that finished, cannot be resumed (409)."""
    state = _state(request)
    row = visible_run(state, caller, run_id)
    run_dir = state.settings.runs_dir / row.id
    if row.status not in ("error", "cancelled"):
        raise Problem(409, f"run {run_id} is {row.status}: only a run that ended in error or was cancelled resumes")
    if not child.resumable(run_dir):
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
                             "description": "status, line, node and end events (docs/api.md)"}})
def run_events(run_id: RunId, request: Request, caller: Caller) -> StreamingResponse:
    """From the start for a late subscriber; ends when the run ends."""
    state = _state(request)
    row = visible_run(state, caller, run_id)
    run_dir = state.settings.runs_dir / row.id
    body = events.stream(run_dir, lambda: state.store.get(row.id),
                         lambda r: RunOut.of(r).model_dump(mode="json"), state.draining.is_set,
                         lambda seconds: state.signals.wait(row.id, seconds))
    return StreamingResponse(body, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/{run_id}/artefacts", response_model=list[ArtefactEntry], summary="The files of a run")
def list_artefacts(run_id: RunId, request: Request, caller: Caller) -> list[ArtefactEntry]:
    """Every regular file in the run's folder (symlinks are neither listed nor followed)."""
    state = _state(request)
    row = visible_run(state, caller, run_id)
    return [ArtefactEntry(path=p, bytes=n) for p, n in artefacts.listing(state.settings.runs_dir / row.id)]


@router.get("/{run_id}/artefacts/{path:path}", summary="One file of a run",
            response_class=StreamingResponse,
            responses={200: {"content": {"text/plain": {}, "application/octet-stream": {}}}})
def get_artefact(run_id: RunId, path: str, request: Request, caller: Caller) -> StreamingResponse:
    """A file under the run's folder: parser.py, result.json, diff.txt, summary.json, …"""
    state = _state(request)
    row = visible_run(state, caller, run_id)
    file = artefacts.safe_file(state.settings.runs_dir / row.id, path)
    fd = artefacts.open_file(file)
    media = ("application/json" if file.suffix == ".json"
             else "text/plain; charset=utf-8" if file.suffix in _TEXT else "application/octet-stream")
    return StreamingResponse(_chunks(fd), media_type=media,
                             headers={"X-Content-Type-Options": "nosniff",
                                      "Content-Length": str(os.fstat(fd).st_size),
                                      "Content-Security-Policy": "default-src 'none'"})


def _chunks(fd: int) -> Iterator[bytes]:
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(65536):
            yield chunk
