"""``/compare?a=RUN[:N]&b=RUN[:N]``: two runs or attempts side by side (``only=1``: differences only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from controller.entry.console.routes.deps import Viewer, run_of
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.console.views.compare_page import compare, parse_side, side
from controller.entry.service.problems import Problem

router = APIRouter()
SideText = Annotated[str, Query(max_length=140)]


@router.get("/compare")
def compare_page(request: Request, who: Viewer, a: SideText = "", b: SideText = "",
                 only: Annotated[bool, Query()] = False) -> Response:
    """The comparison, or the form to choose the two sides (with the viewer's recent runs of a's target)."""
    sides = []
    for text in (a, b):
        if not text.strip():
            continue
        try:
            run_id, number = parse_side(text)
        except ValueError as exc:
            raise Problem(422, f"{exc}: give RUN or RUN:ATTEMPT") from None
        row, run_dir = run_of(request, who, run_id)
        sides.append(side(row, run_dir, number))
        if number is not None and sides[-1].attempt is None:
            raise Problem(404, f"run {row.id} has no attempt {number}")
    result = compare(sides[0], sides[1]) if len(sides) == 2 else None
    target = sides[0].row.target if sides else None
    recent = state_of(request).store.list_runs(owner=None if who.admin else who.name, target=target, status=None,
                                               limit=16, cursor=None).runs
    recent = [r for r in recent if not sides or r.id != sides[0].row.id][:15]  # never the run itself
    return page(request, "compare.html", title="Compare", a=a, b=b, only=only, result=result, recent=recent,
                viewer=who)
