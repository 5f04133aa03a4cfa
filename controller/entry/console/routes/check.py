"""``/checks/{id}``: a check's verdicts; ``/checks/{id}/verdicts/{name}``: one parser's code and difference."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Path, Request
from fastapi.responses import RedirectResponse, Response

from controller.entry.console.routes.deps import RunId, Viewer, run_of
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.console.views.attempts import read_text
from controller.entry.console.views.check_page import options_of, submission_files, verdict_lines
from controller.entry.console.views.code import highlighted
from controller.entry.console.views.lines import window
from controller.entry.service.check_models import CheckOut
from controller.entry.service.problems import Problem
from controller.runner.dispatch import CONSOLE_FILE, is_check

router = APIRouter()
Name = Annotated[str, Path(min_length=1, max_length=200)]


@router.get("/checks/{check_id}")
def check_page(check_id: RunId, request: Request, who: Viewer) -> Response:
    """The check: status, verdicts (one row per parser or submission), its lines."""
    row, run_dir = run_of(request, who, check_id)
    if not is_check(row):
        return RedirectResponse(f"/runs/{quote(row.id, safe='')}", status_code=303)
    document = CheckOut.of(row)
    return page(request, "check.html", title=f"Check {row.id}", row=row, check=document,
                verdicts=verdict_lines(document.summary), options=options_of(row),
                lines=window(run_dir / CONSOLE_FILE, None), viewer=who,
                live=None if row.ended else f"/runs/{quote(row.id, safe='')}/live")


@router.get("/checks/{check_id}/verdicts/{name:path}")
def verdict_page(check_id: RunId, name: Name, request: Request, who: Viewer) -> Response:
    """One checked parser or submission: its verdict and first difference, and its code (a name may hold
    ``/``: a parser found in a class zip's folder, ``alice/icici_parser.py``)."""
    row, _ = run_of(request, who, check_id)
    document = CheckOut.of(row) if is_check(row) else None
    verdict = next((v for v in verdict_lines(document.summary if document else None) if v.name == name), None)
    if verdict is None:
        raise Problem(404, f"check {row.id} has no verdict for {name[:80]!r}")
    files = [(shown, *highlighted(read_text(path), shown, anchor=f"C{number}"))
             for number, (shown, path) in enumerate(submission_files(state_of(request).settings, row, name), 1)]
    return page(request, "verdict.html", title=f"{name} in check {row.id}", row=row, verdict=verdict, files=files,
                viewer=who)
