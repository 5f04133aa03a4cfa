"""``GET /v1/runs/{id}/events``: the run's progress as Server-Sent Events.

Two files of the run folder are followed from their start, so a late subscriber gets the
whole run: ``console.txt`` (the lines ``python -m controller run`` printed, which the worker
copies there) as ``line`` events, and ``events.jsonl`` (the run's structured log) whose
``node.started`` records become ``started`` events (the running node) and ``node.finished``
records ``node`` events. A ``status`` event comes first and an
``end`` event, with the final run document, last; the stream ends when the run has ended
and both files are read, or when the service drains. While a conversation's run waits for a
reply (status ``waiting``), its question (``question.json``) is sent once as a ``question``
event and the stream stays open: the run's next lines follow once the reply is posted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from agents.ports.replies import PendingQuestion, read_question
from controller.platform.observability.recorder import EVENTS_FILE
from controller.platform.store import RunRow

CONSOLE_FILE = "console.txt"
#: Longest line kept; the rest of a longer one is dropped (a hostile parser's message).
MAX_LINE = 64 * 1024
#: Most bytes read from a file per poll.
READ_CHUNK = 1024 * 1024
POLL_SECONDS = 0.25
KEEPALIVE_SECONDS = 15.0


class Tail:
    """Complete lines appended to a file since the last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self._partial = b""

    def read(self) -> list[str]:
        """The new complete lines (decoded, bounded)."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read(READ_CHUNK)
        except OSError:
            return []
        self.offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > MAX_LINE:
            self._partial = self._partial[:MAX_LINE]
        return [line[:MAX_LINE].decode("utf-8", "replace") for line in lines]


def started_event(line: str) -> dict[str, Any] | None:
    """A ``started`` event from one events.jsonl record, if it is a node's start (the running node)."""
    record = _record(line)
    if record is None or record.get("event") != "node.started":
        return None
    return {"node": str(record.get("node", "")), "attempt": _int(record.get("attempt"))}


def _record(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def node_event(line: str) -> dict[str, Any] | None:
    """A ``node`` event from one events.jsonl record, if it is a node's end."""
    record = _record(line)
    if record is None or record.get("event") != "node.finished":
        return None
    return {"node": str(record.get("node", "")), "attempt": _int(record.get("attempt")),
            "outcome": str(record.get("outcome", "")), "seconds": _float(record.get("duration_seconds")),
            "detail": str(record.get("detail", ""))}


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def question_event(run_id: str, pending: PendingQuestion) -> dict[str, Any]:
    """The ``question`` event: what a waiting run asks, and where the reply goes."""
    return {"id": run_id, "turn": pending.turn, "question": pending.question, "reply": f"/v1/runs/{run_id}/input"}


def sse(event: str, data: dict[str, Any]) -> str:
    """One Server-Sent Event (``json.dumps`` keeps ``data`` on one line)."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


async def stream(run_dir: Path, load: Callable[[], RunRow | None], document: Callable[[RunRow], dict[str, Any]],
                 stopping: Callable[[], bool], pause: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 ) -> AsyncIterator[str]:
    """The events of the run in ``run_dir``; ``load`` reads its row, ``stopping`` says the service drains,
    ``pause`` waits between reads (at most the given seconds; sooner when the run is known to change)."""
    console, log = Tail(run_dir / CONSOLE_FILE), Tail(run_dir / EVENTS_FILE)
    row = await asyncio.to_thread(load)
    if row is None:
        return
    yield sse("status", {"id": row.id, "status": row.status})
    quiet_since = time.monotonic()
    asked = 0
    while True:
        row = await asyncio.to_thread(load)  # before the files: a row that has ended has its files complete
        sent = False
        for text in await asyncio.to_thread(console.read):
            yield sse("line", {"text": text})
            sent = True
        for text in await asyncio.to_thread(log.read):
            for kind, data in (("started", started_event(text)), ("node", node_event(text))):
                if data is not None:
                    yield sse(kind, data)
                    sent = True
        if row is None or row.ended:
            if row is not None:
                yield sse("end", document(row))
            return
        pending = await asyncio.to_thread(read_question, run_dir) if row.status == "waiting" else None
        if pending is not None and pending.turn != asked:
            asked = pending.turn
            yield sse("question", question_event(row.id, pending))
            sent = True
        if stopping():
            yield sse("draining", {"id": row.id, "status": row.status})
            return
        now = time.monotonic()
        if sent:
            quiet_since = now
        elif now - quiet_since > KEEPALIVE_SECONDS:
            quiet_since = now
            yield ": keep-alive\n\n"
        await pause(POLL_SECONDS)
