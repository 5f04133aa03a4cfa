"""The console's live endpoints (``EventSource``, authenticated by the session cookie).

``/runs/{id}/live`` serves the run's journal exactly as the API's ``/v1/runs/{id}/events``
does (:func:`controller.entry.service.routes.event_stream`): each event carries its id, the
page names the stream after the last event it rendered (``?after=N``), and a browser that
reconnects by itself sends ``Last-Event-ID``; so a reload or a dropped connection neither loses
nor repeats a line.

``/live/runs`` follows the rows of an open runs list: a row whose status or attempts changed
is sent again, rendered by the same template; newer runs are counted, not inserted (the list
does not move under the reader), and the page offers to show them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from controller.entry.console.routes.deps import RunId, Viewer, run_of
from controller.entry.console.routes.runs import filters_of
from controller.entry.console.templating import ENV
from controller.entry.console.viewer import state_of
from controller.entry.console.views.paths import local_names
from controller.entry.console.views.run_rows import MAX_TEXT, Filters, RunLine, line_of, runs_page
from controller.entry.service import events
from controller.entry.service.auth import Principal
from controller.entry.service.events import sse
from controller.entry.service.routes import event_stream

router = APIRouter()
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@router.get("/runs/{run_id}/live")
def run_live(run_id: RunId, request: Request, who: Viewer,
             after: Annotated[int | None, Query(ge=0, le=events.MAX_ID)] = None,
             last_event_id: Annotated[str | None, Header()] = None) -> StreamingResponse:
    """The run's events after ``after`` (or ``Last-Event-ID``), until it ends."""
    row, _ = run_of(request, who, run_id)
    body = event_stream(state_of(request), row.id, events.last_event_id(last_event_id, after))
    return StreamingResponse(_local(body, row.id), media_type="text/event-stream", headers=SSE_HEADERS)


async def _local(body: AsyncIterator[str], run_id: str) -> AsyncIterator[str]:
    """The API's events with paths named as in the run folder, as the page names them (no server
    path in a page; the JSON stays valid: only path characters, never a quote, are taken out)."""
    async for chunk in body:
        yield local_names(chunk, run_id)


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
