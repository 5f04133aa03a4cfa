"""``/submit``: start a run on a named or an uploaded target, or a check of parsers or submissions.

Each refusal is the service's one line, shown next to the field it is about
(:mod:`controller.entry.console.views.refusals`), with what was typed kept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData

from agents.ports.errors import PlatformError
from agents.registry import agent_for_target
from agents.targets import known_targets
from controller.entry.console import forms
from controller.entry.console.routes.deps import Viewer
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.console.views.refusals import field_of, validation_field
from controller.entry.console.views.submissions import (
    CHECK_FIELDS,
    RUN_FIELDS,
    files_of,
    target_files,
    text_fields,
    unzip_into,
)
from controller.entry.service.auth import Principal
from controller.entry.service.check_models import CheckRequest
from controller.entry.service.check_submit import CheckUpload, accept_check, check_parts
from controller.entry.service.problems import Problem, status_of, validation_line
from controller.entry.service.schemas import RunRequest, form_fields
from controller.entry.service.submit import accept, accept_folder, accept_upload
from controller.entry.service.uploads import require_free_space
from controller.platform.store import RunRow

router = APIRouter()
MAX_FORM_FIELDS = 16
FILES_AND_FOLDER = ("statement", "result", "target_toml", "folder")


def targets(request: Request) -> list[tuple[str, str]]:
    """The service's named targets with their agents, for the form's list."""
    data_dir = state_of(request).settings.data_dir
    found = []
    for name in known_targets(data_dir):
        try:
            found.append((name, agent_for_target(data_dir, name).name))
        except PlatformError:
            continue
    return found


def submit_page(request: Request, who: Viewer, form: str = "", errors: dict[str, str] | None = None,
                values: dict[str, Any] | None = None, status: int = 200) -> Response:
    """The Submit page; ``form`` names the form that was refused (its ``errors`` and ``values``)."""
    return page(request, "submit.html", status=status, title="Submit", viewer=who, targets=targets(request),
                failed=form, errors=errors or {}, values=values or {})


@router.get("/submit")
def submit_form(request: Request, who: Viewer) -> Response:
    """The three forms: a named target, an uploaded one, a check."""
    return submit_page(request, who)


async def _multipart(request: Request) -> FormData:
    service = state_of(request).settings.service
    form = await request.form(max_files=service.check_files + len(FILES_AND_FOLDER), max_fields=MAX_FORM_FIELDS,
                              max_part_size=forms.MAX_FIELD_BYTES)
    forms.check_csrf(request, form)
    return form


#: Refusals about more than one input, said next to the first of them (their start → the field).
SAID_AT = {"choose the statement": "statement", "a check needs": "parser"}


def _refused(exc: ValidationError | Problem | PlatformError, fields: tuple[str, ...]) -> tuple[int, dict[str, str]]:
    """The status and the field → line of a refusal."""
    if isinstance(exc, ValidationError):
        return 422, {validation_field(exc.errors(), fields): validation_line(exc.errors())}
    status, line = (exc.status, exc.detail) if isinstance(exc, Problem) else (status_of(exc), exc.one_line())
    said_at = next((field for start, field in SAID_AT.items() if line.startswith(start)), None)
    return status, {said_at or field_of(line, fields): line}


async def _submission(request: Request, who: Principal, form_id: str, fields: dict[str, Any],
                      names: tuple[str, ...], accept_it: Callable[[], Awaitable[RunRow]],
                      kind: str = "runs") -> Response:
    """Accept with ``accept_it``: the new run's page, or the form again with the refusal at its field."""
    try:
        row = await accept_it()
    except (ValidationError, Problem, PlatformError) as exc:
        status, errors = _refused(exc, names)
        return submit_page(request, who, form_id, errors, fields, status)
    return _accepted(request, row, kind)


def _accepted(request: Request, row: RunRow, kind: str = "runs") -> Response:
    state_of(request).submitted.set()
    return RedirectResponse(f"/{kind}/{quote(row.id, safe='')}", status_code=303)


def not_draining(request: Request) -> None:
    if state_of(request).draining.is_set():
        raise Problem(503, "the service is shutting down and accepts no runs; try again in a minute")


@router.post("/submit/run")
async def submit_run(request: Request, who: Viewer) -> Response:
    """A run on a target of the service's data folder (the API's JSON submission)."""
    not_draining(request)
    fields = text_fields(await forms.posted(request), RUN_FIELDS)
    state = state_of(request)

    async def accept_it() -> RunRow:
        run = RunRequest.model_validate(form_fields(fields))
        return await run_in_threadpool(accept, state.settings, state.store, who.name, run)

    return await _submission(request, who, "run", fields, RUN_FIELDS, accept_it)


@router.post("/submit/upload")
async def submit_upload(request: Request, who: Viewer) -> Response:
    """A run on an uploaded target: its files, or its whole folder as one zip."""
    not_draining(request)
    form = await _multipart(request)
    fields = {"target": "upload", **text_fields(form, RUN_FIELDS)}
    settings, store = state_of(request).settings, state_of(request).store

    async def accept_it() -> RunRow:
        run = RunRequest.model_validate(form_fields(fields))
        folder = files_of(form, "folder")
        if folder:
            data = await folder[0].read()
            require_free_space(settings, len(data))
            return await run_in_threadpool(accept_folder, settings, store, who.name, run,
                                           lambda target: unzip_into(data, target, settings.service))
        files = await target_files(form)
        if "statement.pdf" not in files:
            raise Problem(422, "choose the statement PDF, or the target's whole folder as a zip")
        return await run_in_threadpool(accept_upload, settings, store, who.name, run, files)

    return await _submission(request, who, "upload", fields, (*RUN_FIELDS, *FILES_AND_FOLDER), accept_it)


@router.post("/submit/check")
async def submit_check(request: Request, who: Viewer) -> Response:
    """A check of parser files or zipped submissions against a target (the API's ``POST /v1/checks``)."""
    not_draining(request)
    form = await _multipart(request)
    fields = text_fields(form, CHECK_FIELDS)
    state = state_of(request)

    async def accept_it() -> RunRow:
        upload = CheckUpload(CheckRequest(target="upload"))
        upload.parsers = [(f.filename or "", await f.read()) for f in files_of(form, "parser")]
        upload.zips = [(f.filename or "", await f.read()) for f in files_of(form, "submission")]
        check_parts(upload, fields)
        upload.request = CheckRequest.model_validate(fields)
        return await run_in_threadpool(accept_check, state.settings, state.store, who.name, upload)

    return await _submission(request, who, "check", fields, (*CHECK_FIELDS, "parser", "submission"), accept_it,
                             "checks")
