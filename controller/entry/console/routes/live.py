"""The console's live endpoints (``EventSource``, authenticated by the session cookie).

``/runs/{id}/live`` serves the run's event stream, the same
:func:`controller.entry.service.events.stream` the API's ``/v1/runs/{id}/events`` serves,
from after the last line the page rendered (``?after=N``), or after the last line the browser
received when it reconnects by itself (``Last-Event-ID``): a reload or a dropped connection
neither loses nor repeats a line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from controller.entry.console.routes.deps import RunId, Viewer, run_of
from controller.entry.console.viewer import state_of
from controller.entry.service import events
from controller.entry.service.schemas import RunOut

router = APIRouter()
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
                         state.draining.is_set, lambda seconds: state.signals.wait(row.id, seconds))
    return StreamingResponse(numbered(body, last_seen(request, after)), media_type="text/event-stream",
                             headers=SSE_HEADERS)
