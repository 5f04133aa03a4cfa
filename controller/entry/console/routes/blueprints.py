"""``/blueprints/new``: write a blueprint in the browser and run it (issue 41).

Paste or edit the blueprint.json (a scenario's template fills its sections to start from), attach
the files its tools and validators read, and submit: the blueprint is validated against its model
first, each mistake said at the member it is about, then it is accepted exactly as ``POST /v1/runs``
accepts a blueprint (:func:`controller.entry.service.blueprint_submit.accept_blueprint`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile

from agents.ports.editor import DocumentEditor
from agents.ports.errors import PlatformError
from agents.registry import AGENTS
from controller.entry.console import forms
from controller.entry.console.routes.deps import Viewer
from controller.entry.console.routes.submit import not_draining
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.service.auth import Principal
from controller.entry.service.blueprint_submit import (
    MAX_BLUEPRINT_BYTES,
    MAX_FILES,
    BlueprintUpload,
    accept_blueprint,
    run_request,
)
from controller.entry.service.problems import Problem, status_of, validation_line

router = APIRouter()
TEXT_FIELDS = ("target", "max_attempts")
AGENT = "blueprint"
#: The template a blank editor starts from.
BLANK = "custom"


def editor() -> DocumentEditor:
    """The blueprint agent's editor port."""
    found = AGENTS[AGENT].info.editor
    if found is None:  # the registry's blueprint agent has one: a test of the registry says so
        raise RuntimeError("the blueprint agent states no editor")
    return found


def editor_page(request: Request, who: Principal, text: str, scenario: str = "", status: int = 200,
                errors: list[tuple[str, str]] | None = None, field_errors: dict[str, str] | None = None,
                values: dict[str, str] | None = None) -> Response:
    """The editor with ``text`` in it, and what was wrong: at the blueprint (by member) or at a field."""
    return page(request, "blueprint_editor.html", status=status, title="New blueprint", viewer=who, text=text,
                scenario=scenario, scenarios=editor().starts(), errors=errors or [], field_errors=field_errors or {},
                values=values or {})


@router.get("/blueprints/new")
def new_blueprint(request: Request, who: Viewer, scenario: str = "") -> Response:
    """The editor; ``?scenario=`` fills it with that scenario's template (an unknown one: custom's)."""
    chosen = scenario if scenario in editor().starts() else BLANK
    return editor_page(request, who, editor().template(chosen), chosen)


@router.get("/blueprints/schema.json")
def blueprint_schema(who: Viewer) -> Response:
    """The blueprint's JSON Schema, which the editor validates against."""
    return JSONResponse(editor().schema())


@router.post("/blueprints/new")
async def submit_blueprint(request: Request, who: Viewer) -> Response:
    """Validate the blueprint and its files; run it, or show the editor again with what is wrong."""
    not_draining(request)
    form = await request.form(max_files=MAX_FILES, max_fields=len(TEXT_FIELDS) + 2,
                              max_part_size=MAX_BLUEPRINT_BYTES)
    forms.check_csrf(request, form)
    text = form.get("blueprint")
    text = text if isinstance(text, str) else ""
    values = {name: forms.text(form, name) for name in TEXT_FIELDS}
    checked = editor().check(text)
    if not checked.valid or checked.document is None:
        return editor_page(request, who, text, status=422, errors=checked.errors, values=values)
    files = {f.filename or "": await f.read() for f in _files(form)}
    missing = [name for name in checked.files if name not in files]
    if missing:
        line = f"attach the file(s) the blueprint's tools read: {', '.join(missing)}"
        return editor_page(request, who, text, status=422, field_errors={"data": line}, values=values)
    state = state_of(request)
    try:
        request_options = run_request(values["target"] or None, checked.document,
                                      int(values["max_attempts"]) if values["max_attempts"].isdigit() else None, None)
        upload = BlueprintUpload(text.encode("utf-8"), request_options, files)
        row = await run_in_threadpool(accept_blueprint, state.settings, state.store, who.name, upload)
    except (ValidationError, Problem, PlatformError) as exc:
        status, line = _refusal(exc)
        where = "target" if line.startswith("target") else "data" if "file" in line else "blueprint"
        return editor_page(request, who, text, status=status, values=values,
                           **_said_at(where, line))
    state.submitted.set()
    return RedirectResponse(f"/runs/{row.id}", status_code=303)


def _files(form: FormData) -> list[UploadFile]:
    return [f for f in form.getlist("data") if isinstance(f, UploadFile) and f.filename]


def _refusal(exc: ValidationError | Problem | PlatformError) -> tuple[int, str]:
    if isinstance(exc, ValidationError):
        return 422, validation_line(exc.errors())
    return (exc.status, exc.detail) if isinstance(exc, Problem) else (status_of(exc), exc.one_line())


def _said_at(where: str, line: str) -> dict[str, Any]:
    """The service's refusal at the blueprint (as its whole) or at a field."""
    if where == "blueprint":
        return {"errors": [("(the blueprint)", line)]}
    return {"field_errors": {where: line}}
