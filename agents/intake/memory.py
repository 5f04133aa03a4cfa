"""The graph memory (seed 002's GraphMemory), persisted per run in SQLite under the run folder.

Tables: ``fields`` (each field's current value or skip), ``history`` (every value ever given,
with time, source, previous value, temporal context and reasoning: nothing is lost),
``conflicts``, ``edges`` (with reasons), ``traversal``, ``snapshots`` (a node's data when it
was completed), ``turns`` (each reply with its question and the resolver's output) and
``decisions`` (each of the decision role's answers).

Writes are idempotent per turn and per decision step, in one transaction each: a run killed
after a node wrote here but before its checkpoint was saved runs that node again on resume,
which then finds its turn recorded and returns the stored result instead of applying it twice.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.intake.models import Decision, FactUpdate, Question, Resolution, Scalar

MEMORY_FILE = "graph.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS fields (node TEXT, field TEXT, value TEXT, skipped INTEGER, updated_at TEXT,
                                   PRIMARY KEY (node, field));
CREATE TABLE IF NOT EXISTS history (id INTEGER PRIMARY KEY, node TEXT, field TEXT, value TEXT, previous TEXT,
                                    temporal TEXT, source TEXT, is_correction INTEGER, applied INTEGER,
                                    confidence REAL, reasoning TEXT, turn INTEGER, at TEXT);
CREATE TABLE IF NOT EXISTS conflicts (id INTEGER PRIMARY KEY, node TEXT, field TEXT, old TEXT, new TEXT,
                                      turn INTEGER, at TEXT, resolved INTEGER, resolution TEXT);
CREATE TABLE IF NOT EXISTS edges (step INTEGER PRIMARY KEY, from_node TEXT, to_node TEXT, reason TEXT, at TEXT);
CREATE TABLE IF NOT EXISTS traversal (step INTEGER PRIMARY KEY, node TEXT, at TEXT);
CREATE TABLE IF NOT EXISTS snapshots (node TEXT PRIMARY KEY, data TEXT, at TEXT);
CREATE TABLE IF NOT EXISTS turns (turn INTEGER PRIMARY KEY, question TEXT, reply TEXT, resolution TEXT, at TEXT);
CREATE TABLE IF NOT EXISTS decisions (step INTEGER PRIMARY KEY, decision TEXT, at TEXT);
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _dump(value: Scalar | None) -> str:
    return json.dumps(value)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class GraphMemory:
    """Node data, field history, conflicts, edges and traversal of one run."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        """Release the file."""
        self.db.close()

    # -- node data -------------------------------------------------------------------------

    def get_all_nodes_data(self) -> dict[str, dict[str, Scalar | None]]:
        """Every node's current values (a skipped field is None)."""
        data: dict[str, dict[str, Scalar | None]] = {}
        for node, field, value in self.db.execute("SELECT node, field, value FROM fields ORDER BY node, field"):
            data.setdefault(node, {})[field] = _load(value)
        return data

    def skipped(self) -> set[tuple[str, str]]:
        """(node, field) of every field the user skipped and has not answered since."""
        return set(self.db.execute("SELECT node, field FROM fields WHERE skipped = 1"))

    def add_node_snapshot(self, node: str, data: dict[str, Scalar | None]) -> None:
        """Keep a node's data as it was when the node was completed."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO snapshots VALUES (?, ?, ?)", (node, json.dumps(data), _now()))

    def get_field_history(self, node: str, field: str) -> list[dict[str, Any]]:
        """Every value given for a field, oldest first."""
        rows = self.db.execute("SELECT value, previous, temporal, source, is_correction, applied, confidence, "
                               "reasoning, turn, at FROM history WHERE node = ? AND field = ? ORDER BY id",
                               (node, field))
        keys = ("value", "previous", "temporal", "source", "is_correction", "applied", "confidence", "reasoning",
                "turn", "at")
        return [{**dict(zip(keys, row)), "value": _load(row[0]), "previous": _load(row[1]),
                 "is_correction": bool(row[4]), "applied": bool(row[5])} for row in rows]

    def get_node_with_history(self, node: str) -> dict[str, Any]:
        """A node's values with each field's history and the node's conflicts (the seed's audit view)."""
        data = self.get_all_nodes_data().get(node, {})
        fields = {f for n, f in self.db.execute("SELECT node, field FROM history WHERE node = ?", (node,))} | set(data)
        return {"data": data, "history": {f: self.get_field_history(node, f) for f in sorted(fields)},
                "conflicts": [c for c in self.conflicts() if c["node"] == node]}

    # -- turns -----------------------------------------------------------------------------

    def turn_result(self, turn: int) -> Resolution | None:
        """The resolver's output for ``turn`` if that turn was already applied."""
        row = self.db.execute("SELECT resolution FROM turns WHERE turn = ?", (turn,)).fetchone()
        return None if row is None else Resolution.from_json(json.loads(row[0]))

    def apply_updates(self, turn: int, question: Question, reply: str, resolution: Resolution) -> bool:
        """Apply one turn's updates in one transaction; False (and nothing done) if it was applied.

        A new present value replaces the current one and the history keeps the previous;
        past and future values are history only; a contradiction opens a conflict; a
        correction (or a confirmation) closes the field's open conflicts.
        """
        at = _now()
        with self.db:
            done = self.db.execute("SELECT 1 FROM turns WHERE turn = ?", (turn,)).fetchone()
            if done:
                return False
            self.db.execute("INSERT INTO turns VALUES (?, ?, ?, ?, ?)",
                            (turn, json.dumps(question.to_json()), reply, json.dumps(resolution.to_json()), at))
            for update in resolution.updates:
                self._apply(turn, update, at)
            if resolution.keep_conflict is not None:
                self._close(resolution.keep_conflict, "confirmed: the newer value stands", at)
        return True

    def _apply(self, turn: int, update: FactUpdate, at: str) -> None:
        row = self.db.execute("SELECT value FROM fields WHERE node = ? AND field = ?",
                              (update.node, update.field)).fetchone()
        previous = None if row is None else _load(row[0])
        applies = update.temporal == "present"
        self.db.execute("INSERT INTO history (node, field, value, previous, temporal, source, is_correction, applied, "
                        "confidence, reasoning, turn, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (update.node, update.field, _dump(update.value), _dump(previous), update.temporal,
                         update.source, int(update.is_correction), int(applies), update.confidence,
                         update.reasoning, turn, at))
        if not applies:
            return
        self.db.execute("INSERT OR REPLACE INTO fields VALUES (?, ?, ?, ?, ?)",
                        (update.node, update.field, _dump(update.value), int(update.skipped), at))
        if update.conflict:
            self.mark_conflict(update.node, update.field, previous, update.value, turn, at)
        elif update.is_correction:
            self._close_field(update.node, update.field, "corrected by the user", at)
            if previous is not None and previous != update.value:
                self._record_closed(update, previous, turn, at)

    # -- conflicts -------------------------------------------------------------------------

    def mark_conflict(self, node: str, field: str, old: Scalar | None, new: Scalar | None, turn: int,
                      at: str) -> None:
        """Record an unresolved contradiction (the newer value stands until confirmed)."""
        self.db.execute("INSERT INTO conflicts (node, field, old, new, turn, at, resolved, resolution) "
                        "VALUES (?, ?, ?, ?, ?, ?, 0, '')", (node, field, _dump(old), _dump(new), turn, at))

    def _record_closed(self, update: FactUpdate, previous: Scalar, turn: int, at: str) -> None:
        why = "life event" if update.reasoning.startswith("life event") else "explicit correction"
        self.db.execute("INSERT INTO conflicts (node, field, old, new, turn, at, resolved, resolution) "
                        "VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                        (update.node, update.field, _dump(previous), _dump(update.value), turn, at, why))

    def _close(self, conflict: int, resolution: str, at: str) -> None:
        self.db.execute("UPDATE conflicts SET resolved = 1, resolution = ? WHERE id = ? AND resolved = 0",
                        (f"{resolution} ({at})", conflict))

    def _close_field(self, node: str, field: str, resolution: str, at: str) -> None:
        self.db.execute("UPDATE conflicts SET resolved = 1, resolution = ? WHERE node = ? AND field = ? "
                        "AND resolved = 0", (f"{resolution} ({at})", node, field))

    def conflicts(self, *, open_only: bool = False) -> list[dict[str, Any]]:
        """Conflicts, oldest first (only the unresolved ones with ``open_only``)."""
        where = " WHERE resolved = 0" if open_only else ""
        rows = self.db.execute(f"SELECT id, node, field, old, new, turn, at, resolved, resolution FROM conflicts"
                               f"{where} ORDER BY id")
        return [{"id": r[0], "node": r[1], "field": r[2], "old": _load(r[3]), "new": _load(r[4]), "turn": r[5],
                 "at": r[6], "resolved": bool(r[7]), "resolution": r[8]} for r in rows]

    def has_conflicts(self, node: str) -> bool:
        """The node has an unresolved conflict."""
        return any(c["node"] == node for c in self.conflicts(open_only=True))

    # -- traversal -------------------------------------------------------------------------

    def visit(self, step: int, node: str) -> None:
        """Record that decision ``step`` (0: the start) went to ``node``; idempotent per step."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO traversal VALUES (?, ?, ?)", (step, node, _now()))

    def add_edge(self, step: int, from_node: str, to_node: str, reason: str) -> None:
        """Record decision ``step``'s edge with its reason, and the visit; idempotent per step."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, ?)",
                            (step, from_node, to_node, reason, _now()))
        self.visit(step, to_node)

    def decision(self, step: int) -> Decision | None:
        """Decision ``step`` if it was already made (a resumed run does not ask the role again)."""
        row = self.db.execute("SELECT decision FROM decisions WHERE step = ?", (step,)).fetchone()
        return None if row is None else Decision(**json.loads(row[0]))

    def record_decision(self, step: int, from_node: str, decision: Decision) -> None:
        """Keep decision ``step`` and, when it names a next node, its edge and visit; idempotent per step."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO decisions VALUES (?, ?, ?)",
                            (step, json.dumps(asdict(decision)), _now()))
        if decision.next_node is not None and not decision.visited_all:
            self.add_edge(step, from_node, decision.next_node, decision.reason)

    def traversal(self) -> list[str]:
        """The nodes in the order they were visited."""
        return [row[0] for row in self.db.execute("SELECT node FROM traversal ORDER BY step")]

    def get_last_node(self) -> str | None:
        """The node visited last."""
        order = self.traversal()
        return order[-1] if order else None

    def edges(self) -> list[dict[str, Any]]:
        """Every edge with its reason, in order."""
        return [{"step": r[0], "from": r[1], "to": r[2], "reason": r[3], "at": r[4]}
                for r in self.db.execute("SELECT step, from_node, to_node, reason, at FROM edges ORDER BY step")]

    def export(self) -> dict[str, Any]:
        """The whole graph as one JSON document (``graph.json`` in the run folder)."""
        data = self.get_all_nodes_data()
        return {
            "nodes": data,
            "skipped": sorted(f"{n}.{f}" for n, f in self.skipped()),
            "history": {f"{n}.{f}": self.get_field_history(n, f) for n in data for f in data[n]}
            | {f"{n}.{f}": self.get_field_history(n, f) for n, f in self._history_only()},
            "conflicts": self.conflicts(),
            "edges": self.edges(),
            "traversal": self.traversal(),
            "snapshots": {r[0]: json.loads(r[1]) for r in self.db.execute("SELECT node, data FROM snapshots")},
        }

    def _history_only(self) -> list[tuple[str, str]]:
        """Fields with history but no present value (only past or future statements)."""
        return list(self.db.execute("SELECT DISTINCT node, field FROM history WHERE NOT EXISTS (SELECT 1 FROM "
                                    "fields WHERE fields.node = history.node AND fields.field = history.field)"))

    def transcript(self) -> list[dict[str, Any]]:
        """Each turn: the question, the reply and what the resolver made of it."""
        rows = self.db.execute("SELECT turn, question, reply, resolution FROM turns ORDER BY turn")
        return [{"turn": r[0], "question": json.loads(r[1]), "reply": r[2], "resolution": json.loads(r[3])}
                for r in rows]
