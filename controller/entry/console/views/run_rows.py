"""The runs list: one row per run or check, and the filters in the query string."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, get_args
from urllib.parse import quote, urlencode

from controller.entry.service.auth import Principal
from controller.platform.store import RunRow, RunStatus, RunStore
from controller.runner.dispatch import is_check

STATUSES: tuple[str, ...] = get_args(RunStatus)
PAGE_SIZE = 25
MAX_TEXT = 100


@dataclass(frozen=True)
class Filters:
    """The runs list's query: status, agent, target, free text and the page's cursor."""

    status: str = ""
    agent: str = ""
    target: str = ""
    q: str = ""
    cursor: str = ""

    def query(self, **change: str) -> str:
        """This query with ``change`` applied, as ``?…`` (empty values left out)."""
        values = {**self.__dict__, **change}
        pairs = {key: value for key, value in values.items() if value}
        return "?" + urlencode(pairs) if pairs else "?"

    @property
    def active(self) -> bool:
        """Whether anything but the page is filtered."""
        return bool(self.status or self.agent or self.target or self.q)


@dataclass(frozen=True)
class RunLine:
    """One row of the list."""

    id: str
    href: str
    kind: str
    status: str
    agent: str
    target: str
    owner: str
    attempts: str
    duration: float | None
    started: float


def attempts_of(row: RunRow) -> str:
    """Attempts made, "n of max" when the summary says both (a check: how many it checked)."""
    summary: dict[str, Any] = row.summary or {}
    made, most = summary.get("attempts"), summary.get("max_attempts") or row.options.get("max_attempts")
    if is_check(row):
        return str(len(summary.get("verdicts") or [])) if summary else "—"
    if isinstance(made, int) and not isinstance(made, bool):
        return f"{made} of {most}" if isinstance(most, int) else str(made)
    return "—"


def duration_of(row: RunRow, now: float) -> float | None:
    """From the start to the end (or to now, while it runs)."""
    if row.started_at is None:
        return None
    return (row.finished_at if row.finished_at is not None else now) - row.started_at


def line_of(row: RunRow, now: float) -> RunLine:
    """The list's row for ``row``."""
    check = is_check(row)
    return RunLine(id=row.id, href=f"/{'checks' if check else 'runs'}/{quote(row.id, safe='')}",
                   kind="check" if check else "run",
                   status=row.status, agent=row.agent, target=row.target, owner=row.owner,
                   attempts=attempts_of(row), duration=duration_of(row, now),
                   started=row.started_at if row.started_at is not None else row.created_at)


@dataclass(frozen=True)
class RunsPage:
    """One page of the list, newest first."""

    lines: list[RunLine]
    filters: Filters
    next_cursor: str | None


def runs_page(store: RunStore, viewer: Principal, filters: Filters) -> RunsPage:
    """The viewer's runs (an admin: everyone's) under ``filters``."""
    page = store.list_runs(owner=None if viewer.admin else viewer.name, target=filters.target or None,
                           status=filters.status or None,  # type: ignore[arg-type]  # checked by Filters' maker
                           agent=filters.agent or None, text=filters.q or None, limit=PAGE_SIZE,
                           cursor=filters.cursor or None)
    now = time.time()
    return RunsPage([line_of(row, now) for row in page.runs], filters, page.cursor)
