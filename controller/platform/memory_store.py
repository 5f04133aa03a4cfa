"""Graph memories in SQLite under the runs folder: the one implementation of the memory port
(:mod:`agents.ports.memory`) until the service's database holds them too.

    runs/memory/<subject key>.sqlite    a subject's memory (the key: a hash of the name, never the name)
    runs/<run id>/memory.sqlite          the memory of a run without a subject
    runs/<run id>/conversation.sqlite    the run's conversation log (table ``entries``)

Tables: ``meta`` (the subject's name as first given), ``fields`` (each field's current value),
``history`` (every value ever given), ``conflicts``, ``commits`` (the ``(run_id, turn)`` of
every write applied: a write is applied whole, in one transaction, at most once) and
``conversations`` (each run's target, from its first write: what ``follows`` looks for; a
file made before it gets the table empty). The files
are in WAL mode with a busy timeout, so two conversations of one subject (two service
workers) write in turn; the values are JSON text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agents.ports.memory import (
    Conflict,
    ConflictWrite,
    FieldChange,
    FieldMemory,
    FieldWrite,
    LogEntry,
    LogKind,
    MemoryView,
    MemoryWrite,
    NodeMemory,
    check_subject,
    subject_key,
)

MEMORY_FOLDER = "memory"
RUN_MEMORY_FILE = "memory.sqlite"
CONVERSATION_FILE = "conversation.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS fields (node TEXT, field TEXT, value TEXT, skipped INTEGER, updated_at TEXT,
                                   PRIMARY KEY (node, field));
CREATE TABLE IF NOT EXISTS history (id INTEGER PRIMARY KEY, node TEXT, field TEXT, value TEXT, previous TEXT,
                                    temporal TEXT, source TEXT, reasoning TEXT, applied INTEGER,
                                    correction INTEGER, run_id TEXT, turn INTEGER, at TEXT);
CREATE TABLE IF NOT EXISTS conflicts (id INTEGER PRIMARY KEY, node TEXT, field TEXT, old TEXT, new TEXT,
                                      run_id TEXT, turn INTEGER, at TEXT, resolved INTEGER, resolution TEXT);
CREATE TABLE IF NOT EXISTS commits (run_id TEXT, turn INTEGER, at TEXT, PRIMARY KEY (run_id, turn));
CREATE TABLE IF NOT EXISTS conversations (run_id TEXT PRIMARY KEY, target TEXT, at TEXT);
"""


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


#: The columns :func:`compose_view` reads, in its order (a file's and the store's tables share them).
HISTORY_COLUMNS = ("node", "field", "value", "at", "source", "previous", "reasoning", "temporal", "applied",
                   "correction", "run_id", "turn")
FIELD_COLUMNS = ("node", "field", "value", "skipped", "updated_at")
CONFLICT_COLUMNS = ("id", "node", "field", "old", "new", "at", "run_id", "turn", "resolved", "resolution")


def compose_view(subject: str, history_rows: Iterable[Sequence[Any]], field_rows: Iterable[Sequence[Any]],
                 conflict_rows: Iterable[Sequence[Any]], runs: Iterable[str], targets: Iterable[str]) -> MemoryView:
    """A :class:`MemoryView` of a memory's rows (HISTORY_COLUMNS, FIELD_COLUMNS, CONFLICT_COLUMNS)."""
    history: dict[tuple[str, str], list[FieldChange]] = {}
    for r in history_rows:
        history.setdefault((r[0], r[1]), []).append(FieldChange(
            _load(r[2]), r[3], r[4], _load(r[5]), r[6], r[7], bool(r[8]), bool(r[9]), r[10], r[11]))
    current = {(r[0], r[1]): (_load(r[2]), bool(r[3]), r[4]) for r in field_rows}
    nodes: dict[str, list[FieldMemory]] = {}
    for key in sorted(set(history) | set(current)):
        value, skipped, updated = current.get(key, (None, False, ""))
        nodes.setdefault(key[0], []).append(FieldMemory(key[1], value, skipped, updated, tuple(history.get(key, ()))))
    conflicts = tuple(Conflict(r[0], r[1], r[2], _load(r[3]), _load(r[4]), r[5], r[6], r[7], bool(r[8]), r[9])
                      for r in conflict_rows)
    return MemoryView(subject, tuple(NodeMemory(n, tuple(f)) for n, f in nodes.items()), conflicts, tuple(runs),
                      tuple(targets))


def _connect(path: Path | str) -> sqlite3.Connection:
    """A memory's or a log's file, created with its folder, in WAL mode with a busy timeout
    (``:memory:``: in RAM, no file)."""
    if isinstance(path, Path):
        path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30, check_same_thread=False)
    if isinstance(path, Path):
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses no committed turn's integrity
    return db


class SqliteGraphStore:
    """One graph memory in one SQLite file (``:memory:`` for a throwaway one)."""

    def __init__(self, path: Path | str, subject: str = "") -> None:
        self.db = _connect(path)
        with self.db:
            self.db.executescript(_SCHEMA)
            if subject:
                self.db.execute("INSERT OR IGNORE INTO meta VALUES ('subject', ?)", (subject,))

    def close(self) -> None:
        """Release the file."""
        self.db.close()

    def view(self) -> MemoryView:
        """Every node with its fields and their histories, the conflicts, the runs that wrote."""
        subject = self.db.execute("SELECT value FROM meta WHERE key = 'subject'").fetchone()
        return compose_view(
            subject[0] if subject else "",
            self.db.execute(f"SELECT {', '.join(HISTORY_COLUMNS)} FROM history ORDER BY id"),
            self.db.execute(f"SELECT {', '.join(FIELD_COLUMNS)} FROM fields"),
            self.db.execute(f"SELECT {', '.join(CONFLICT_COLUMNS)} FROM conflicts ORDER BY id"),
            (r[0] for r in self.db.execute("SELECT run_id FROM commits GROUP BY run_id ORDER BY MIN(at)")),
            (r[0] for r in self.db.execute("SELECT target FROM conversations GROUP BY target ORDER BY MIN(at), target")))

    def commit(self, write: MemoryWrite) -> bool:
        """Apply ``write`` in one transaction, unless its turn was applied before (False then)."""
        with self.db:
            done = self.db.execute("SELECT 1 FROM commits WHERE run_id = ? AND turn = ?",
                                   (write.run_id, write.turn)).fetchone()
            if done:
                return False
            self.db.execute("INSERT INTO commits VALUES (?, ?, ?)", (write.run_id, write.turn, write.at))
            if write.target:
                self.db.execute("INSERT OR IGNORE INTO conversations VALUES (?, ?, ?)",
                                (write.run_id, write.target, write.at))
            for change in write.fields:
                self._field(write, change)
            for conflict in write.conflicts:
                self._conflict(write, conflict)
            for conflict_id, resolution in write.close:
                self.db.execute("UPDATE conflicts SET resolved = 1, resolution = ? WHERE id = ? AND resolved = 0",
                                (f"{resolution} ({write.at})", conflict_id))
            for node, field, resolution in write.close_fields:
                self.db.execute("UPDATE conflicts SET resolved = 1, resolution = ? WHERE node = ? AND field = ? "
                                "AND resolved = 0", (f"{resolution} ({write.at})", node, field))
        return True

    def _field(self, write: MemoryWrite, change: FieldWrite) -> None:
        row = self.db.execute("SELECT value FROM fields WHERE node = ? AND field = ?",
                              (change.node, change.field)).fetchone()
        previous = "null" if row is None else row[0]
        self.db.execute("INSERT INTO history (node, field, value, previous, temporal, source, reasoning, applied, "
                        "correction, run_id, turn, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (change.node, change.field, json.dumps(change.value), previous,
                         change.temporal, change.source, change.reasoning, int(change.applied),
                         int(change.correction), write.run_id, write.turn, write.at))
        if change.applied:
            self.db.execute("INSERT OR REPLACE INTO fields VALUES (?, ?, ?, ?, ?)",
                            (change.node, change.field, json.dumps(change.value), int(change.skipped), write.at))

    def _conflict(self, write: MemoryWrite, conflict: ConflictWrite) -> None:
        self.db.execute("INSERT INTO conflicts (node, field, old, new, run_id, turn, at, resolved, resolution) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (conflict.node, conflict.field, json.dumps(conflict.old), json.dumps(conflict.new),
                         write.run_id, write.turn, write.at, int(conflict.resolved), conflict.resolution))


_LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (kind TEXT NOT NULL, step INTEGER NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
                                    at TEXT NOT NULL, PRIMARY KEY (kind, step, name));
"""
#: An earlier release kept a conversation in one table per kind: copied into ``entries`` once
#: (a conversation waiting for a reply across an upgrade resumes with its turns), then dropped.
_ADOPT_LOG = {
    "turns": "SELECT 'turns', turn, '', json_object('question', json(question), 'reply', reply, "
             "'resolution', json(resolution)), at FROM turns",
    "decisions": "SELECT 'decisions', step, '', decision, at FROM decisions",
    "edges": "SELECT 'edges', step, '', json_object('from', from_node, 'to', to_node, 'reason', reason), at FROM edges",
    "traversal": "SELECT 'traversal', step, '', json_quote(node), at FROM traversal",
    "snapshots": "SELECT 'snapshots', 0, node, data, at FROM snapshots",
}


class SqliteConversationLog:
    """A run's conversation log in one SQLite file (``conversation.sqlite`` in its folder)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        if read_only:  # the console reads a run's turns: never creates, never writes
            self.db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
            return
        self.db = _connect(path)
        with self.db:
            self.db.executescript(_LOG_SCHEMA)
            self._adopt()

    def _adopt(self) -> None:
        held = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table, rows in _ADOPT_LOG.items():
            if table in held:
                self.db.execute(f"INSERT OR IGNORE INTO entries {rows}")  # noqa: S608 (constant SQL)
                self.db.execute(f"DROP TABLE {table}")

    def put(self, kind: LogKind, step: int, data: str, at: str, *, name: str = "", replace: bool = False) -> None:
        """Keep an entry (once per key unless ``replace``)."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self.db:
            self.db.execute(f"{verb} INTO entries VALUES (?, ?, ?, ?, ?)", (kind, step, name, data, at))

    def get(self, kind: LogKind, step: int, name: str = "") -> str | None:
        """The data kept under a key, or None."""
        row = self.db.execute("SELECT data FROM entries WHERE kind = ? AND step = ? AND name = ?",
                              (kind, step, name)).fetchone()
        return None if row is None else str(row[0])

    def entries(self, kind: LogKind, limit: int | None = None) -> list[LogEntry]:
        """Every entry of ``kind`` (the first ``limit``), by step then name."""
        rows = self.db.execute("SELECT step, name, data, at FROM entries WHERE kind = ? ORDER BY step, name LIMIT ?",
                               (kind, -1 if limit is None else limit))
        return [LogEntry(int(step), str(name), str(data), str(at)) for step, name, data, at in rows]

    def close(self) -> None:
        """Release the file."""
        self.db.close()


class SqliteMemoryStores:
    """The memory port's stores: subjects under ``runs/memory/``, a run's memory in its folder."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir

    def subject_path(self, subject: str) -> Path:
        """Where ``subject``'s memory is kept (its file is named by the subject's key, never its name)."""
        return self.runs_dir / MEMORY_FOLDER / f"{subject_key(subject)}.sqlite"

    def for_subject(self, subject: str) -> SqliteGraphStore:
        """The memory of ``subject``.

        Raises:
            ConfigError: not a subject name (see :func:`agents.ports.memory.check_subject`).
        """
        return SqliteGraphStore(self.subject_path(subject), check_subject(subject))

    def for_run(self, run_id: str) -> SqliteGraphStore:
        """The memory of run ``run_id`` (a run id is the runner's own, checked where it is made)."""
        return SqliteGraphStore(self.runs_dir / run_id / RUN_MEMORY_FILE)

    def scratch(self) -> SqliteGraphStore:
        """A memory that lives in RAM and is gone once closed."""
        return SqliteGraphStore(":memory:")

    def has_subject(self, subject: str) -> bool:
        """Whether ``subject`` has a memory (without creating one)."""
        return self.subject_path(subject).is_file()

    def forget_subject(self, subject: str) -> bool:
        """Erase everything the memory holds about ``subject`` (its file, with SQLite's journal files);
        False if it had no memory."""
        path = self.subject_path(subject)
        held = path.is_file()
        for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            leftover.unlink(missing_ok=True)
        return held

    def conversation(self, run_id: str) -> SqliteConversationLog:
        """The conversation log of run ``run_id``, in its folder."""
        return SqliteConversationLog(self.runs_dir / run_id / CONVERSATION_FILE)

    def read_conversation(self, run_id: str, kind: LogKind, limit: int) -> list[LogEntry]:
        """The first ``limit`` entries of ``kind`` in run ``run_id``'s log, read-only ([] when it has none).

        Raises:
            sqlite3.Error: the file cannot be read.
        """
        path = self.runs_dir / run_id / CONVERSATION_FILE
        if not path.is_file() or path.is_symlink():
            return []
        log = SqliteConversationLog(path, read_only=True)
        try:
            if _has_table(log.db, "entries"):
                return log.entries(kind, limit)
            if not _has_table(log.db, kind):
                return []
            rows = log.db.execute(f"SELECT * FROM ({_ADOPT_LOG[kind]}) ORDER BY 2, 3 LIMIT ?", (limit,))  # noqa: S608
            return [LogEntry(int(step), str(name), str(data), str(at)) for _, step, name, data, at in rows]
        finally:
            log.close()


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    """Whether a log file has table ``name`` (one of an earlier release, never resumed, has the old ones)."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None
