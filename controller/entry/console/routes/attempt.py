"""``/runs/{id}/attempts/{n}``: one attempt; ``…/stdout`` and ``…/stderr``: its output, paged."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from controller.entry.console.routes.deps import RunId, Viewer, run_of
from controller.entry.console.templating import page
from controller.entry.console.views.ansi import ansi_html
from controller.entry.console.views.attempt_page import attempt_view
from controller.entry.console.views.attempts import attempt
from controller.entry.console.views.lines import window
from controller.entry.console.views.nodes import node_states
from controller.entry.service.problems import Problem

router = APIRouter()
Number = Annotated[int, Path(ge=1, le=100_000)]


@router.get("/runs/{run_id}/attempts/{number}")
def attempt_page(run_id: RunId, number: Number, request: Request, who: Viewer,
                 only: Annotated[bool, Query()] = False) -> Response:
    """The attempt: code, output, frame diff (``only``: differing rows only), checks, diagnostics."""
    row, run_dir = run_of(request, who, run_id)
    found = attempt(run_dir, number, node_states(run_dir).ends)
    if found is None:
        raise Problem(404, f"run {row.id} has no attempt {number}")
    view = attempt_view(found, run_dir, row.target)
    return page(request, "attempt.html", title=f"Attempt {number} of {row.id}", row=row, view=view, only=only,
                viewer=who, ansi=ansi_html)


@router.get("/runs/{run_id}/attempts/{number}/{stream}")
def attempt_output(run_id: RunId, number: Number, stream: Literal["stdout", "stderr"], request: Request,
                   who: Viewer, lines: Annotated[int, Query(ge=1, le=10**9)] = 1) -> Response:
    """A window of the attempt's stdout or stderr (never the whole of a long one)."""
    row, run_dir = run_of(request, who, run_id)
    if attempt(run_dir, number, []) is None:
        raise Problem(404, f"run {row.id} has no attempt {number}")
    win = window(run_dir / "attempts" / str(number) / f"{stream}.txt", lines)
    return page(request, "output.html", title=f"{stream} of attempt {number} of {row.id}", row=row, number=number,
                stream=stream, win=win, viewer=who, ansi=ansi_html)
