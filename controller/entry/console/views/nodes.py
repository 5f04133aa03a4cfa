"""Which nodes of a run's graph ended how, and which one runs: read from the run's ``events.jsonl``.

Only ``node.started`` and ``node.finished`` records count; the file is our own log, but it is
read bounded all the same (:data:`MAX_BYTES`, lines that are not JSON objects skipped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from controller.entry.console.views.paths import local_names
from controller.platform.observability.recorder import EVENTS_FILE

MAX_BYTES = 16 * 1024 * 1024
#: Outcomes that are a node's failure whatever the agent (each agent's own reasons are added).
FAILED = frozenset({"failed", "error", "crashed", "fail", "gave_up", "gave up"})


@dataclass(frozen=True)
class NodeEnd:
    """A node that ended: in which attempt, how, how long it took and its one-line detail."""

    node: str
    attempt: int
    outcome: str
    seconds: float
    detail: str


@dataclass
class NodeStates:
    """The ended nodes in order, and the node started last without an end (the running one)."""

    ends: list[NodeEnd] = field(default_factory=list)
    running: str = ""

    def classes(self, failures: frozenset[str], live: bool) -> dict[str, str]:
        """Each node's class in the graph: ``done`` or ``failed`` by its last end, ``running`` while live."""
        states = {end.node: ("failed" if end.outcome in failures | FAILED else "done") for end in self.ends}
        if live and self.running:
            states[self.running] = "running"
        return states


def _records(path: Path) -> Iterator[dict[str, object]]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES)
    except OSError:
        return
    for raw in data.splitlines():
        if b'"node.' not in raw:
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _seconds(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def node_states(run_dir: Path) -> NodeStates:
    """The run's node ends and its running node (paths in a detail named as in the run folder)."""
    states = NodeStates()
    for record in _records(run_dir / EVENTS_FILE):
        node = str(record.get("node", ""))[:64]
        if record.get("event") == "node.started":
            states.running = node
        elif record.get("event") == "node.finished":
            attempt = record.get("attempt")
            states.ends.append(NodeEnd(node, attempt if isinstance(attempt, int) else 0,
                                       str(record.get("outcome", ""))[:64], _seconds(record.get("duration_seconds")),
                                       local_names(str(record.get("detail", ""))[:2000], run_dir.name)))
            if states.running == node:
                states.running = ""
    return states
