"""The console's live endpoints (``EventSource``, authenticated by the session cookie).

``/live/runs`` follows the rows of an open runs list: a row whose status or attempts changed
is sent again, rendered by the same template; newer runs are counted, not inserted (the list
does not move under the reader), and the page offers to show them.

``/runs/{id}/live`` serves the run's event stream, the same
:func:`controller.entry.service.events.stream` the API's ``/v1/runs/{id}/events`` serves,
from after the last line the page rendered (``?after=N``), or after the last line the browser
received when it reconnects by itself (``Last-Event-ID``): a reload or a dropped connection
neither loses nor repeats a line.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from controller.entry.console.routes.deps import RunId, Viewer, run_of
from controller.entry.console.routes.runs import filters_of
from controller.entry.console.templating import ENV
from controller.entry.console.viewer import state_of
from controller.entry.console.views.run_rows import MAX_TEXT, Filters, RunLine, line_of, runs_page
from controller.entry.service import events
from controller.entry.service.auth import Principal
from controller.entry.service.events import sse
from controller.entry.service.schemas import RunOut

router = APIRouter()
#: How often an open run page's stream looks at the run's files (the API's stream: every 0.25 s). A
#: node's end is written by the run's own process, which wakes no stream: this bounds how late a
#: page sees it (the issue asks for 100 ms), at the cost of one row read per open page per poll.
LIVE_POLL_SECONDS = 0.05
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def last_seen(request: Request, after: int) -> int:
    """The last line the browser has: its ``Last-Event-ID`` when it reconnects, else ``after``."""
    header = request.headers.get("last-event-id", "")
    return int(header) if header.isascii() and header.isdigit() and len(header) < 12 else after


async def numbered(body: AsyncIterator[str], skip: int) -> AsyncIterator[str]:
    """The stream with each ``line`` event numbered (its SSE id), the first ``skip`` lines left out."""
    count = 0
    async for chunk in body:
        if chunk.startswith("event: line\n"):
            count += 1
            if count <= skip:
                continue
            chunk = f"id: {count}\n{chunk}"
        yield chunk


@router.get("/runs/{run_id}/live")
def run_live(run_id: RunId, request: Request, who: Viewer,
             after: Annotated[int, Query(ge=0, le=10**9)] = 0) -> StreamingResponse:
    """The run's events after line ``after`` (or ``Last-Event-ID``), until it ends."""
    row, run_dir = run_of(request, who, run_id)
    state = state_of(request)
    body = events.stream(run_dir, lambda: state.store.get(row.id), lambda r: RunOut.of(r).model_dump(mode="json"),
                         state.draining.is_set,
                         lambda seconds: state.signals.wait(row.id, min(seconds, LIVE_POLL_SECONDS)))
    return StreamingResponse(numbered(body, last_seen(request, after)), media_type="text/event-stream",
                             headers=SSE_HEADERS)


ROW_POLL_SECONDS = 1.0
MAX_IDS = 100


def _row_html(line: RunLine, who: Principal) -> str:
    return ENV.get_template("_run_row.html").render(line=line, viewer=who)


async def _runs_events(request: Request, who: Principal, filters: Filters, ids: list[str]) -> AsyncIterator[str]:
    """``row`` when a listed run changes (its row, rendered), ``new`` when runs newer than the page exist."""
    state = state_of(request)
    shown: dict[str, RunLine] = {}
    newest = ids[0] if ids else ""
    quiet, announced = 0.0, 0
    while not state.draining.is_set():
        now = time.time()
        for run_id in ids:
            row = await asyncio.to_thread(state.store.get, run_id)
            if row is None or not who.sees(row):
                continue
            line = line_of(row, now)
            before = shown.get(run_id)
            if before is not None and (before.status, before.attempts) != (line.status, line.attempts):
                yield sse("row", {"id": run_id, "html": _row_html(line, who)})
                quiet = 0.0
            shown[run_id] = line
        page = await asyncio.to_thread(runs_page, state.store, who, Filters(**{**filters.__dict__, "cursor": ""}))
        fresh = next((i for i, line in enumerate(page.lines) if line.id == newest), len(page.lines))
        if fresh != announced:
            announced = fresh
            yield sse("new", {"count": fresh})
        quiet += ROW_POLL_SECONDS
        if quiet >= events.KEEPALIVE_SECONDS:
            quiet = 0.0
            yield ": keep-alive\n\n"
        await asyncio.sleep(ROW_POLL_SECONDS)


@router.get("/live/runs")
def runs_live(request: Request, who: Viewer, status: str = "", agent: str = "", target: str = "", q: str = "",
              ids: Annotated[str, Query(max_length=MAX_IDS * 130)] = "") -> StreamingResponse:
    """The runs list's changes while it is open: changed rows and the count of newer runs."""
    listed = [i for i in ids.split(",") if i][:MAX_IDS]
    filters = filters_of(status, agent, target[:128], q[:MAX_TEXT], "")
    return StreamingResponse(_runs_events(request, who, filters, listed), media_type="text/event-stream",
                             headers=SSE_HEADERS)
