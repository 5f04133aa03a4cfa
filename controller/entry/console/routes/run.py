"""``/runs/{id}``: a run's page, its files, and the Cancel and Resume buttons."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from pydantic import ValidationError

from controller.entry.console import forms
from controller.entry.console.routes.deps import RunId, Viewer, run_of
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.console.views.run_page import run_view
from controller.entry.service import artefacts
from controller.entry.service.conversation import ReplyIn, send_input
from controller.entry.service.problems import Problem, validation_line
from controller.entry.service.routes import cancel_run, resume_run
from controller.runner.dispatch import is_check, scrubber

router = APIRouter()
Node = Annotated[str, Query(max_length=64, pattern=r"^[A-Za-z0-9_-]*$")]
Start = Annotated[int | None, Query(ge=1, le=10**9)]


@router.get("/runs/{run_id}")
def run_page(run_id: RunId, request: Request, who: Viewer, node: Node = "", lines: Start = None) -> Response:
    """The run: facts, graph, progress lines (the last ones, or from ``lines``), attempts and files."""
    row, _ = run_of(request, who, run_id)
    if is_check(row):
        return RedirectResponse(f"/checks/{quote(row.id, safe='')}", status_code=303)
    state = state_of(request)
    view = run_view(state.settings, state.store, row, node, lines)
    return page(request, "run.html", title=f"Run {row.id}", run=view, viewer=who, reply_error="", reply_value="")


@router.get("/runs/{run_id}/files/{path:path}")
def run_file(run_id: RunId, path: str, request: Request, who: Viewer) -> Response:
    """One file of the run, as a download (never rendered by the browser)."""
    row, run_dir = run_of(request, who, run_id)
    body, size = artefacts.served(artefacts.open_file(artefacts.safe_file(run_dir, path)),
                                  scrubber(state_of(request).settings, row))
    name = path.rsplit("/", 1)[-1]
    return StreamingResponse(body, media_type="application/octet-stream", headers={
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name, safe='')}",
        "Content-Length": str(size), "Content-Security-Policy": "default-src 'none'"})


@router.get("/runs/{run_id}/cancel")
def cancel_form(run_id: RunId, request: Request, who: Viewer) -> Response:
    """Ask before cancelling (a form, so it works without a script); an ended run's page says it has ended."""
    row, _ = run_of(request, who, run_id)
    if row.ended:
        return RedirectResponse(_back(request, run_id) + "?cancel=ended", status_code=303)
    return _confirm_cancel(request, row.id, "check" if is_check(row) else "run")


@router.post("/runs/{run_id}/cancel")
async def cancel(run_id: RunId, request: Request, who: Viewer) -> Response:
    """Cancel the run once confirmed (the API's cancel: at once if queued or waiting, else its worker
    interrupts it). Unconfirmed, the question; a run that has ended meanwhile, its page saying so."""
    form = await forms.posted(request)
    if forms.text(form, "confirm") != "yes":
        return cancel_form(run_id, request, who)
    try:
        cancel_run(run_id, request, who)
    except Problem as exc:
        if exc.status != 409:
            raise
        return RedirectResponse(_back(request, run_id) + "?cancel=ended", status_code=303)
    return RedirectResponse(_back(request, run_id), status_code=303)


def _confirm_cancel(request: Request, run_id: str, kind: str) -> Response:
    back = _back(request, run_id)
    return page(request, "confirm.html", title=f"Cancel {kind} {run_id}?", question=f"Cancel {kind} {run_id}?",
                consequence=(f"The {kind} stops at once if it is queued or waiting, else its worker interrupts it "
                             "and removes its containers. What it wrote so far is kept; an interrupted run "
                             "can be resumed from its last checkpoint."),
                action=f"/runs/{quote(run_id, safe='')}/cancel", confirm_label=f"Cancel the {kind}",
                back=back, back_label=f"Keep it running (back to the {kind})")


@router.post("/runs/{run_id}/resume")
async def resume(run_id: RunId, request: Request, who: Viewer) -> Response:
    """Queue a stopped run again from its last checkpoint (the API's resume, with its refusals)."""
    await forms.posted(request)
    resume_run(run_id, request, who)
    return RedirectResponse(_back(request, run_id), status_code=303)


def _back(request: Request, run_id: str) -> str:
    row = state_of(request).store.get(run_id)
    kind = "checks" if row is not None and is_check(row) else "runs"
    return f"/{kind}/{quote(run_id, safe='')}"


@router.post("/runs/{run_id}/reply")
async def reply(run_id: RunId, request: Request, who: Viewer) -> Response:
    """Answer the question a waiting conversation asked (the API's ``POST /v1/runs/{id}/input``)."""
    form = await forms.posted(request)
    text = forms.text(form, "reply")
    try:
        send_input(run_id, ReplyIn(reply=text), request, who)
    except (ValidationError, Problem) as exc:
        line = validation_line(exc.errors()) if isinstance(exc, ValidationError) else exc.detail
        row, _ = run_of(request, who, run_id)
        state = state_of(request)
        view = run_view(state.settings, state.store, row, "", None)
        status = 422 if isinstance(exc, ValidationError) else exc.status
        return page(request, "run.html", status=status, title=f"Run {row.id}", run=view, viewer=who,
                    reply_error=line.replace("invalid reply", "your reply"), reply_value=text)
    return RedirectResponse(f"/runs/{quote(run_id, safe='')}#conversation", status_code=303)
