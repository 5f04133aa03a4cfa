"""The graph memory (seed 002's GraphMemory): facts through the memory port, the conversation beside them.

Two stores, one object:

- the **facts** (each field's current value, every value ever given with its time, source,
  previous value, temporal context and reasoning, and the conflicts) live in a
  :class:`~agents.ports.memory.GraphStore` the controller gives the run: the subject's memory
  (``run --subject NAME``: it persists across conversations), or the run's own;
- the **conversation** (each turn's question, reply and what the resolver made of it; the
  decision role's answers; edges with reasons; the traversal; node snapshots) is this run's
  alone: a :class:`~agents.ports.memory.ConversationLog` the controller gives the run (the run
  folder's ``conversation.sqlite``, or the service's database), or one in RAM for a check.

Writes are idempotent per turn and per decision step: the facts of a turn are one
:class:`~agents.ports.memory.MemoryWrite`, applied at most once per ``(run, turn)``, and the
turn's record is kept after it; a run killed in between runs the node again on resume, which
finds the turn applied and changes nothing twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from agents.intake.models import LIFE_EVENT, Decision, FactUpdate, Question, Resolution, Scalar
from agents.ports.memory import (
    ConflictWrite,
    ConversationLog,
    FieldWrite,
    GraphStore,
    MemoryConversationLog,
    MemoryView,
    MemoryWrite,
)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


class GraphMemory:
    """Node data, field history and conflicts (``facts``), with this conversation's turns, edges and traversal."""

    def __init__(self, facts: GraphStore, log: ConversationLog | None, run_id: str, now: Clock = utc_now,
                 target: str = "") -> None:
        self.facts = facts
        self.log: ConversationLog = log if log is not None else MemoryConversationLog()
        self.run_id = run_id
        self.target = target  # whose conversation: kept with every write (what a follower's run looks for)
        self.now = now

    def close(self) -> None:
        """Release both stores."""
        self.log.close()
        self.facts.close()

    def _at(self) -> str:
        return self.now().astimezone(UTC).isoformat(timespec="milliseconds")

    # -- node data -------------------------------------------------------------------------

    def view(self) -> MemoryView:
        """Everything the facts store holds now (the port's read form)."""
        return self.facts.view()

    def get_all_nodes_data(self) -> dict[str, dict[str, Scalar | None]]:
        """Every node's current values (a skipped field is None)."""
        return self.view().values()

    def skipped(self) -> set[tuple[str, str]]:
        """(node, field) of every field the user skipped and has not answered since."""
        return {(node.name, f.name) for node in self.view().nodes for f in node.fields if f.skipped}

    def not_understood(self) -> list[str]:
        """``Node.field`` of every field marked not understood (three unreadable answers) and not answered since."""
        return sorted(f"{node.name}.{f.name}" for node in self.view().nodes for f in node.fields
                      if f.skipped and f.history and f.history[-1].source == "not_understood")

    def cleared(self) -> set[tuple[str, str]]:
        """(node, field) of every field a life event emptied and no answer has filled since."""
        return {(node.name, f.name) for node in self.view().nodes for f in node.fields
                if f.value is None and not f.skipped and f.history and f.history[-1].source == LIFE_EVENT}

    def updated_at(self) -> dict[tuple[str, str], str]:
        """When each field with a current value got it (ISO 8601, UTC)."""
        return {(node.name, f.name): f.updated_at for node in self.view().nodes for f in node.fields if f.updated_at}

    def add_node_snapshot(self, node: str, data: dict[str, Scalar | None]) -> None:
        """Keep a node's data as it was when the node was completed."""
        self.log.put("snapshots", 0, json.dumps(data), self._at(), name=node, replace=True)

    def get_field_history(self, node: str, field: str) -> list[dict[str, Any]]:
        """Every value given for a field, oldest first (every conversation's, for a subject)."""
        found = self.view().node(node)
        memory = found.field(field) if found else None
        return [asdict(change) for change in memory.history] if memory else []

    def conflicts(self, *, open_only: bool = False) -> list[dict[str, Any]]:
        """Conflicts, oldest first (only the unresolved ones with ``open_only``)."""
        view = self.view()
        return [asdict(c) for c in (view.open_conflicts() if open_only else view.conflicts)]

    def has_conflicts(self, node: str) -> bool:
        """The node has an unresolved conflict."""
        return any(c.node == node for c in self.view().open_conflicts())

    def get_node_with_history(self, node: str) -> dict[str, Any]:
        """A node's values with each field's history and the node's conflicts (the seed's audit view)."""
        found = self.view().node(node)
        fields = found.fields if found else ()
        return {"data": found.values() if found else {},
                "history": {f.name: [asdict(c) for c in f.history] for f in fields},
                "conflicts": [c for c in self.conflicts() if c["node"] == node]}

    # -- turns -----------------------------------------------------------------------------

    def turn_result(self, turn: int) -> Resolution | None:
        """The resolver's output for ``turn`` if that turn was already applied."""
        kept = self.log.get("turns", turn)
        return None if kept is None else Resolution.from_json(json.loads(kept)["resolution"])

    def apply_updates(self, turn: int, question: Question, reply: str, resolution: Resolution) -> bool:
        """Apply one turn's facts (once: False when they were applied before) and keep the turn.

        A fact of its field's own time replaces the current value and the history keeps the
        previous; other times are history only; a contradiction opens a conflict; a correction
        (or a confirmation) closes the field's open conflicts; a refreshed field is stamped anew.
        """
        at = self._at()
        applied = self.facts.commit(self._write(turn, at, resolution))
        self.log.put("turns", turn, json.dumps({"question": question.to_json(), "reply": reply,
                                                "resolution": resolution.to_json()}), at)
        return applied

    def _write(self, turn: int, at: str, resolution: Resolution) -> MemoryWrite:
        values = self.get_all_nodes_data()
        fields: list[FieldWrite] = []
        conflicts: list[ConflictWrite] = []
        closed: list[tuple[str, str, str]] = []
        for update in resolution.updates:
            previous = values.get(update.node, {}).get(update.field)
            why = f"{update.reasoning} (from {update.words!r})" if update.words else update.reasoning  # its words kept
            fields.append(FieldWrite(update.node, update.field, update.value, update.temporal, update.source,
                                     why, update.current, update.is_correction, update.skipped))
            if update.current and update.conflict:
                conflicts.append(ConflictWrite(update.node, update.field, previous, update.value))
            elif update.current and update.is_correction:
                closed.append((update.node, update.field, "corrected by the user"))
                if previous is not None and previous != update.value:
                    conflicts.append(_closed(update, previous))
        for key in resolution.refreshed:
            node, _, name = key.partition(".")
            fields.append(FieldWrite(node, name, values.get(node, {}).get(name), source="confirmation",
                                     reasoning="the user confirmed the held value is still right"))
        close = ((resolution.keep_conflict, "confirmed: the newer value stands"),) \
            if resolution.keep_conflict is not None else ()
        return MemoryWrite(self.run_id, turn, at, tuple(fields), tuple(conflicts), close, tuple(closed),
                           target=self.target)

    # -- traversal -------------------------------------------------------------------------

    def visit(self, step: int, node: str) -> None:
        """Record that decision ``step`` (0: the start) went to ``node``; idempotent per step."""
        self.log.put("traversal", step, json.dumps(node), self._at())

    def add_edge(self, step: int, from_node: str, to_node: str, reason: str) -> None:
        """Record decision ``step``'s edge with its reason, and the visit; idempotent per step."""
        self.log.put("edges", step, json.dumps({"from": from_node, "to": to_node, "reason": reason}), self._at())
        self.visit(step, to_node)

    def decision(self, step: int) -> Decision | None:
        """Decision ``step`` if it was already made (a resumed run does not ask the role again)."""
        kept = self.log.get("decisions", step)
        return None if kept is None else Decision(**json.loads(kept))

    def record_decision(self, step: int, from_node: str, decision: Decision) -> None:
        """Keep decision ``step`` and, when it names a next node, its edge and visit; idempotent per step."""
        self.log.put("decisions", step, json.dumps(asdict(decision)), self._at())
        if decision.next_node not in (None, from_node) and not decision.visited_all:
            self.add_edge(step, from_node, str(decision.next_node), decision.reason)

    def traversal(self) -> list[str]:
        """The nodes in the order they were visited."""
        return [str(json.loads(entry.data)) for entry in self.log.entries("traversal")]

    def get_last_node(self) -> str | None:
        """The node visited last."""
        order = self.traversal()
        return order[-1] if order else None

    def edges(self) -> list[dict[str, Any]]:
        """Every edge with its reason, in order."""
        return [{"step": entry.step, **json.loads(entry.data), "at": entry.at} for entry in self.log.entries("edges")]

    def export(self) -> dict[str, Any]:
        """The whole graph as one JSON document (``graph.json`` in the run folder)."""
        view = self.view()
        return {
            "subject": view.subject,
            "runs": list(view.runs),
            "nodes": view.values(),
            "skipped": sorted(f"{n}.{f}" for n, f in self.skipped()),
            "history": {f"{node.name}.{f.name}": [asdict(c) for c in f.history] for node in view.nodes
                        for f in node.fields},
            "conflicts": [asdict(c) for c in view.conflicts],
            "edges": self.edges(),
            "traversal": self.traversal(),
            "snapshots": {entry.name: json.loads(entry.data) for entry in self.log.entries("snapshots")},
        }

    def transcript(self) -> list[dict[str, Any]]:
        """Each turn: the question, the reply and what the resolver made of it."""
        return [{"turn": entry.step, **json.loads(entry.data)} for entry in self.log.entries("turns")]


def _closed(update: FactUpdate, previous: Scalar) -> ConflictWrite:
    """A contradiction the reply itself resolved (a correction or a life event), recorded as such."""
    why = "life event" if update.source == "life_event" else "explicit correction"
    return ConflictWrite(update.node, update.field, previous, update.value, resolved=True, resolution=why)
