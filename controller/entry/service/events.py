"""``GET /v1/runs/{id}/events``: the run's journal as Server-Sent Events, resumable by id.

The store journals everything that happens to a run, numbered 1, 2, 3 … without gaps
(:mod:`controller.platform.store.sql`): its status changes (``status``), the lines its process
printed (``line``, copied by the worker), its nodes' starts and ends (``node_started``,
``node``), its questions (``question``) and its end (``end``, whose data is the final run
document). Each SSE event carries its number as ``id:``; a client that reconnects with
``Last-Event-ID: N`` (or ``?after=N``) gets exactly the events after N, with no gap and no
repeat, from any replica and across restarts: the journal is in the store, not in a process.

The stream ends after the run's final ``end`` event, or with a ``draining`` event (no id) when
the service shuts down; an ``end`` followed by more events (the run was resumed) is sent as a
``status`` event. A run from before the journal existed has none: its stream is its end.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from controller.platform.store import RunEvent, RunRow

#: Events read from the store at once.
BATCH = 500
POLL_SECONDS = 0.25
#: The longest an idle stream waits before it reads the journal again (a notice wakes it sooner).
IDLE_POLL_SECONDS = 2.0
#: How often an idle stream reads the run's row too.
ROW_CHECK_SECONDS = 5.0
KEEPALIVE_SECONDS = 15.0
#: ``Last-Event-ID`` / ``after`` beyond this is not an id the service gave.
MAX_ID = 10**12

Load = Callable[[], RunRow | None]
Read = Callable[[int], list[RunEvent]]
Pause = Callable[[float], Awaitable[None]]


def sse(event: str, data: dict[str, Any], event_id: int | None = None) -> str:
    """One Server-Sent Event (``json.dumps`` keeps ``data`` on one line)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data)}\n\n"


#: A longer ``Last-Event-ID`` is no id of ours (and is never converted: ``int`` of a huge string is slow).
MAX_HEADER = 32


def last_event_id(header: str | None, after: int | None) -> int:
    """Where a stream starts: after the ``Last-Event-ID`` header's number, else ``after``, else 0.

    A header that is not a number this service gave (a browser may send anything, of any length)
    counts as 0: the stream starts from the beginning, as docs/api.md says, never a 422.
    """
    if header is not None and len(header) <= MAX_HEADER and header.strip().isascii() and header.strip().isdigit():
        return min(int(header.strip()), MAX_ID)
    return min(after or 0, MAX_ID)


def render(event: RunEvent, row: RunRow, document: Callable[[RunRow], dict[str, Any]]) -> tuple[str, bool]:
    """The SSE text of one journal event, and whether it is the run's final end."""
    if event.kind != "end":
        return sse(event.kind, event.data, event.seq), False
    if row.ended and event.seq >= row.last_event:
        return sse("end", document(row), event.seq), True
    return sse("status", event.data, event.seq), False  # an end the run was resumed from


async def stream(load: Load, read: Read, document: Callable[[RunRow], dict[str, Any]], stopping: Callable[[], bool],
                 pause: Pause, *, after: int = 0) -> AsyncIterator[str]:
    """The run's events after number ``after``: ``load`` reads its row, ``read(n)`` its journal after n,
    ``stopping`` says the service drains, ``pause`` waits until the run may have changed (at most the
    given seconds; sooner when this process's worker wrote to it).

    An idle stream reads the journal less and less often (from every :data:`POLL_SECONDS` to every
    :data:`IDLE_POLL_SECONDS`): a run of this process wakes it at once anyway, and many followers of
    quiet runs must not keep the store busy. The row is read only to judge an ``end``, and now and
    then while idle (a run that ended without a final end event in its journal).
    """
    row = await _call(load)
    if row is None:
        return
    if row.ended and row.last_event == 0:  # before the journal existed
        yield sse("end", document(row))
        return
    wait, quiet_since, checked = POLL_SECONDS, time.monotonic(), time.monotonic()
    while True:
        # The journal before the row: an end read in the batch is the final one only if the row,
        # read after it, has ended with it as its last event; else the run was resumed since.
        batch: list[RunEvent] = await asyncio.to_thread(read, after)
        now = time.monotonic()
        if batch or now - checked > ROW_CHECK_SECONDS:
            row, checked = await _call(load), now
            if row is None:
                return
        for event in batch:
            text, final = render(event, row, document)
            yield text
            after = event.seq
            if final:
                return
        if len(batch) >= BATCH:
            continue
        if not batch and row.ended and after >= row.last_event:  # no final end journaled: end anyway
            yield sse("end", document(row))
            return
        if stopping():
            yield sse("draining", {"id": row.id, "status": row.status})
            return
        if batch:
            wait, quiet_since = POLL_SECONDS, now
        else:
            wait = min(wait * 2, IDLE_POLL_SECONDS)
            if now - quiet_since > KEEPALIVE_SECONDS:
                quiet_since = now
                yield ": keep-alive\n\n"
        await pause(wait)


async def _call(function: Callable[[], Any]) -> Any:
    return await asyncio.to_thread(function)
