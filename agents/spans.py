"""Start and end events of a graph node, with the node and attempt bound as log context.

While a node runs, ``node`` and ``attempt`` are bound with contextvars, so everything logged
inside it (a sandbox execution, a library's warning) says which node and attempt it
belongs to, on top of the run's ``run_id``, ``agent`` and ``target``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import structlog

from agents.ports.errors import RunPaused, refused

log = structlog.get_logger("sandloop.node")


class NodeSpan:
    """``with NodeSpan(node, attempt) as span: ...; span.end(outcome, attempt, detail)``."""

    def __init__(self, node: str, attempt: int) -> None:
        self.node = node
        self.attempt = attempt
        self._started = 0.0
        self._tokens: Mapping[str, Any] = {}
        self._ended = False

    def __enter__(self) -> NodeSpan:
        self._tokens = structlog.contextvars.bind_contextvars(node=self.node, attempt=self.attempt)
        self._started = time.monotonic()
        log.info("node.started")
        return self

    def end(self, outcome: str, attempt: int, detail: str = "") -> float:
        """Log the node's end with its outcome and duration; return the duration in seconds.

        ``attempt`` is the attempt the node ended in: generate starts attempt 1 and refine
        the next one, so it can differ from the attempt the node started in.
        """
        seconds = time.monotonic() - self._started
        log.info("node.finished", outcome=outcome, attempt=attempt, duration_seconds=round(seconds, 6),
                 detail=detail[:500])
        self._ended = True
        return seconds

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if isinstance(exc, RunPaused):  # stopped on purpose (e.g. waiting for a reply): not a failure
                log.info("node.paused", duration_seconds=round(time.monotonic() - self._started, 6),
                         reason=str(exc)[:500])
            elif exc is not None and not self._ended:
                fields = {"duration_seconds": round(time.monotonic() - self._started, 6),
                          "error_type": type(exc).__name__, "error": str(exc)[:500]}
                if refused(exc):  # the user's input was refused: loop.refused says it (warning), once
                    log.info("node.refused", **fields)
                else:
                    log.error("node.failed", **fields)
        finally:
            structlog.contextvars.reset_contextvars(**self._tokens)
