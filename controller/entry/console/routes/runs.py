"""``/``: the runs list, filtered in the query string, paged, newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from agents.registry import AGENTS
from controller.entry.console.routes.deps import Viewer
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.entry.console.views.run_rows import MAX_TEXT, STATUSES, Filters, runs_page
from controller.entry.service.problems import Problem

router = APIRouter()


def filters_of(status: str, agent: str, target: str, q: str, cursor: str) -> Filters:
    """The list's filters, each checked (422 with the field's line otherwise).

    Raises:
        Problem: 422.
    """
    if status and status not in STATUSES:
        raise Problem(422, f"unknown status {status[:40]!r} (one of: {', '.join(STATUSES)})")
    if agent and agent not in AGENTS:
        raise Problem(422, f"unknown agent {agent[:40]!r} (one of: {', '.join(sorted(AGENTS))})")
    return Filters(status=status, agent=agent, target=target.strip(), q=q.strip(), cursor=cursor)


@router.get("/")
def runs(request: Request, who: Viewer,
         status: Annotated[str, Query(max_length=20)] = "", agent: Annotated[str, Query(max_length=64)] = "",
         target: Annotated[str, Query(max_length=128)] = "", q: Annotated[str, Query(max_length=MAX_TEXT)] = "",
         cursor: Annotated[str, Query(max_length=20)] = "") -> Response:
    """The viewer's runs and checks (an admin: everyone's)."""
    filters = filters_of(status, agent, target, q, cursor)
    listing = runs_page(state_of(request).store, who, filters)
    return page(request, "runs.html", title="Runs", listing=listing, statuses=STATUSES, agents=sorted(AGENTS),
                viewer=who)
