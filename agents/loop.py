"""What every agent loop shares: the node event, the timing/logging node decorator, and
streaming a compiled graph while reporting each node as it finishes.

Agents keep their own state, context, nodes and routers; this module is only the plumbing
that would otherwise be copied between them.

No crash leaves a run without a record: whatever a node raises (a bug, a library's error on
hostile input, the engine failing), :func:`stream_graph` logs it with its traceback, hands
the last state to the agent's ``on_crash`` (which writes ``summary.json`` with status
``error``) and raises a :class:`~agents.ports.errors.PlatformError`, so the run's observer
records it as ``error`` and the CLI prints one line and exits 3. Ctrl-C is not a crash, and
neither is a refusal of the user's input (a :class:`~agents.ports.errors.UsageError`, exit 2,
e.g. a PDF that is no statement): it is recorded the same way but logged as ``loop.refused``
at warning level with its one line and no frames.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import structlog
from langgraph.runtime import Runtime

from agents.ports.artefacts import SUMMARY_FILE, ArtefactStore
from agents.ports.errors import PlatformError, RunPaused, refused
from agents.ports.events import NodeEvent, OnEvent
from agents.spans import NodeSpan
from agents.untrusted_text import one_line

log = structlog.get_logger("sandloop.loop")

Update = dict[str, Any]


#: Called with the last state the graph reached and the error the run ends with.
OnCrash = Callable[[dict[str, Any], PlatformError], None]


def summary_on_crash(artefacts: ArtefactStore, summarise: Callable[[Any], Any]) -> OnCrash:
    """Write ``summary.json`` with status ``error`` for a loop that stopped on an exception:
    ``summarise`` makes the agent's summary (a dataclass with ``status`` and ``last_problem``) of the last state."""

    def write(state: dict[str, Any], error: PlatformError) -> None:
        summary = replace(summarise(state), status="error", last_problem=error.one_line())
        artefacts.write_json(SUMMARY_FILE, summary.to_json())

    return write


class LoopCrashed(PlatformError):
    """Something unexpected was raised inside an agent loop (a bug): the run ends as ``error``."""

    exit_code = 3

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"the agent loop stopped on an unexpected {type(cause).__name__}: "
                         f"{one_line(str(cause), 200) or '(no message)'}",
                         hint="the run is recorded with status error; its events.jsonl holds the traceback")
        self.cause = cause
NodeFn = Callable[[Any, Runtime[Any]], tuple[Update, str, str]]


def node(name: str) -> Callable[[NodeFn], Callable[[Any, Runtime[Any]], Update]]:
    """Wrap a node returning (update, outcome, detail): time it, log its start and end with
    node and attempt bound as log context, and add a :class:`NodeEvent` to ``events``."""

    def wrap(fn: NodeFn) -> Callable[[Any, Runtime[Any]], Update]:
        @functools.wraps(fn)
        def timed(state: Any, runtime: Runtime[Any]) -> Update:
            with NodeSpan(name, state.get("attempt", 0)) as span:
                started = time.monotonic()
                update, outcome, detail = fn(state, runtime)
                attempt = update.get("attempt", state.get("attempt", 0))
                event = NodeEvent(name, attempt, outcome, time.monotonic() - started, detail)
                span.end(outcome, attempt, detail)
            return {**update, "events": [event]}

        return timed

    return wrap


def stream_graph(
    graph: Any,
    context: Any,
    recursion_limit: int,
    on_event: OnEvent,
    on_crash: OnCrash | None = None,
    checkpoint: Any = None,
) -> dict[str, Any]:
    """Run ``graph`` to its end, calling ``on_event`` per node; return the final state.

    With a ``checkpoint`` (:class:`agents.ports.run.CheckpointHandle`) every node's update
    is saved before the next node starts; a resumed run continues from the last one.

    Raises:
        PlatformError: a node raised one (e.g. the engine failed), or :class:`LoopCrashed`
            wrapping anything else; ``on_crash`` has been called first.
    """
    final: dict[str, Any] = {}
    config: dict[str, Any] = {"recursion_limit": recursion_limit}
    inputs: dict[str, Any] | None = {}
    extra: dict[str, Any] = {}
    if checkpoint is not None:
        config.update(checkpoint.config)
        inputs = None if checkpoint.resume else {}
        extra["durability"] = "sync"
    try:
        for mode, chunk in graph.stream(inputs, config, context=context,
                                        stream_mode=["updates", "values"], **extra):
            if mode == "updates":
                for update in chunk.values():
                    for event in (update or {}).get("events", []):
                        on_event(event)
            else:
                final = chunk
    except RunPaused:  # stopped on purpose, checkpoint kept: no record, the run is not over
        raise
    except Exception as exc:  # noqa: BLE001 - the one place a loop's unexpected failure is turned into a record
        _record_crash(final, exc, on_crash)
    return final


def _record_crash(final: dict[str, Any], exc: Exception, on_crash: OnCrash | None) -> None:
    """Log the crash, let ``on_crash`` write the run's record, and re-raise it typed."""
    error = exc if isinstance(exc, PlatformError) else LoopCrashed(exc)
    if refused(error):  # the user's input, refused in one line: not a crash, no frames
        log.warning("loop.refused", error_type=type(exc).__name__, error=error.one_line())
    else:
        log.error("loop.crashed", error_type=type(exc).__name__, error=error.one_line(), exc_info=exc)
    if on_crash is not None:
        try:
            on_crash(final, error)
        except Exception as crash_exc:  # noqa: BLE001 - the original error is what the run ends with
            log.error("loop.crash_record_failed", error_type=type(crash_exc).__name__,
                      error=str(crash_exc)[:300])
    if error is exc:
        raise exc
    raise error from exc
