"""An intake run's graph memory, read for the page: nodes, each field's value and history, conflicts,
and the turns of the conversation.

**Interim reader.** The intake agent keeps its memory in ``graph.sqlite`` in the run folder
(``agents/intake/memory.py``, which the controller may not import). Until the port for reading
it (issue 33) is on main, :func:`read_intake_memory` reads that file itself, read-only
(``mode=ro``), by the table and column names that module documents; a file it cannot read is
an empty memory with the reason, never an error page.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MEMORY_FILE = "graph.sqlite"
MAX_ROWS = 5000


@dataclass(frozen=True)
class FieldChange:
    """One value a field was given: when, from which source, what it replaced, and why."""

    value: str
    previous: str
    at: str
    source: str
    temporal: str
    reasoning: str
    applied: bool
    turn: int | None


@dataclass
class MemoryField:
    """A field of a node: its current value (or skipped) and its history, oldest first."""

    name: str
    value: str
    skipped: bool
    history: list[FieldChange] = field(default_factory=list)


@dataclass(frozen=True)
class Conflict:
    """Two values that disagreed, and how (if) it was resolved."""

    node: str
    field: str
    old: str
    new: str
    turn: int | None
    resolved: bool
    resolution: str


@dataclass
class IntakeMemory:
    """The memory: node → fields, conflicts, turns (question, reply), and why it is empty if it is."""

    nodes: dict[str, dict[str, MemoryField]] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    turns: list[tuple[int, str, str, str]] = field(default_factory=list)
    problem: str = ""


def _shown(raw: Any) -> str:
    """A stored JSON value as people read it (``null`` as nothing)."""
    if raw is None:
        return ""
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return str(raw)
    return "" if value is None else str(value)


def _fields(db: sqlite3.Connection, memory: IntakeMemory) -> None:
    for node, name, value, skipped in db.execute(
            f"SELECT node, field, value, skipped FROM fields ORDER BY node, field LIMIT {MAX_ROWS}"):
        memory.nodes.setdefault(str(node), {})[str(name)] = MemoryField(str(name), _shown(value), bool(skipped))
    for row in db.execute("SELECT node, field, value, previous, at, source, temporal, reasoning, applied, turn "
                          f"FROM history ORDER BY id LIMIT {MAX_ROWS}"):
        node, name, value, previous, at, source, temporal, reasoning, applied, turn = row
        change = FieldChange(_shown(value), _shown(previous), str(at or ""), str(source or ""), str(temporal or ""),
                             str(reasoning or ""), bool(applied), turn if isinstance(turn, int) else None)
        target = memory.nodes.setdefault(str(node), {}).setdefault(str(name), MemoryField(str(name), "", False))
        target.history.append(change)


def _conflicts_and_turns(db: sqlite3.Connection, memory: IntakeMemory) -> None:
    for node, name, old, new, turn, resolved, resolution in db.execute(
            f"SELECT node, field, old, new, turn, resolved, resolution FROM conflicts ORDER BY id LIMIT {MAX_ROWS}"):
        memory.conflicts.append(Conflict(str(node), str(name), _shown(old), _shown(new),
                                         turn if isinstance(turn, int) else None, bool(resolved), str(resolution or "")))
    for turn, question, reply, at in db.execute(f"SELECT turn, question, reply, at FROM turns ORDER BY turn LIMIT {MAX_ROWS}"):
        memory.turns.append((int(turn), str(question or ""), str(reply or ""), str(at or "")))


def read_intake_memory(run_dir: Path) -> IntakeMemory:
    """The graph memory of the intake run in ``run_dir`` (read-only; empty with the reason if unreadable)."""
    path = run_dir / MEMORY_FILE
    memory = IntakeMemory()
    if not path.is_file() or path.is_symlink():
        memory.problem = "no graph memory yet"
        return memory
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)) as db:
            _fields(db, memory)
            _conflicts_and_turns(db, memory)
    except sqlite3.Error as exc:
        return IntakeMemory(problem=f"the graph memory cannot be read: {exc}")
    return memory
