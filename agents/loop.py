"""What every agent loop shares: the node event, the timing/logging node decorator, and
streaming a compiled graph while reporting each node as it finishes.

Agents keep their own state, context, nodes and routers; this module is only the plumbing
that would otherwise be copied between them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from controller.observability.spans import NodeSpan

Update = dict[str, Any]


@dataclass(frozen=True)
class NodeEvent:
    """One node's run, as the progress display and the logs report it."""

    node: str
    attempt: int
    outcome: str
    seconds: float
    detail: str = ""


OnEvent = Callable[[NodeEvent], None]
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


def stream_graph(graph: Any, context: Any, recursion_limit: int, on_event: OnEvent,
                 checkpoint: Any = None) -> dict[str, Any]:
    """Run ``graph`` to its end, calling ``on_event`` per node; return the final state.

    With a ``checkpoint`` (:class:`controller.checkpoints.Checkpoint`) every node's update
    is saved before the next node starts; a resumed run continues from the last one.
    """
    final: dict[str, Any] = {}
    config: dict[str, Any] = {"recursion_limit": recursion_limit}
    inputs: dict[str, Any] | None = {}
    extra: dict[str, Any] = {}
    if checkpoint is not None:
        config.update(checkpoint.config)
        inputs = None if checkpoint.resume else {}
        extra["durability"] = "sync"
    for mode, chunk in graph.stream(inputs, config, context=context, stream_mode=["updates", "values"], **extra):
        if mode == "updates":
            for update in chunk.values():
                for event in (update or {}).get("events", []):
                    on_event(event)
        else:
            final = chunk
    return final
