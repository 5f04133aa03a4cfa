"""Issue 44: the files the raw-sqlite3 store wrote before (tables ``meta``, ``fields``, ``history``,
``conflicts``, ``commits``, ``conversations``; a log's ``entries``) are adopted by the one store on
SQLAlchemy when opened: the same view and entries, the old tables gone, and never adopted twice."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from agents.ports.memory import ConflictWrite, FieldWrite, MemoryView, MemoryWrite
from controller.platform.memory_sql import CONVERSATION_FILE, GRAPH_TABLES, RUN_MEMORY_FILE, SqliteMemoryStores

# Copied from controller/platform/memory_store.py as it was before issue 44 (its _SCHEMA, _LOG_SCHEMA
# and the statements of SqliteGraphStore.commit and SqliteConversationLog.put): that module is gone,
# but the files it wrote stay on disk across an upgrade, so the test writes them exactly as it did.
OLD_SCHEMA = """
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
OLD_LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (kind TEXT NOT NULL, step INTEGER NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
                                    at TEXT NOT NULL, PRIMARY KEY (kind, step, name));
"""


def old_commit(db: sqlite3.Connection, write: MemoryWrite) -> None:
    """The old SqliteGraphStore.commit, statement for statement."""
    with db:
        db.execute("INSERT INTO commits VALUES (?, ?, ?)", (write.run_id, write.turn, write.at))
        if write.target:
            db.execute("INSERT OR IGNORE INTO conversations VALUES (?, ?, ?)", (write.run_id, write.target, write.at))
        for change in write.fields:
            row = db.execute("SELECT value FROM fields WHERE node = ? AND field = ?",
                             (change.node, change.field)).fetchone()
            db.execute("INSERT INTO history (node, field, value, previous, temporal, source, reasoning, applied, "
                       "correction, run_id, turn, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (change.node, change.field, json.dumps(change.value), "null" if row is None else row[0],
                        change.temporal, change.source, change.reasoning, int(change.applied),
                        int(change.correction), write.run_id, write.turn, write.at))
            if change.applied:
                db.execute("INSERT OR REPLACE INTO fields VALUES (?, ?, ?, ?, ?)",
                           (change.node, change.field, json.dumps(change.value), int(change.skipped), write.at))
        for c in write.conflicts:
            db.execute("INSERT INTO conflicts (node, field, old, new, run_id, turn, at, resolved, resolution) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (c.node, c.field, json.dumps(c.old), json.dumps(c.new),
                                                             write.run_id, write.turn, write.at, int(c.resolved),
                                                             c.resolution))
        for conflict_id, resolution in write.close:
            db.execute("UPDATE conflicts SET resolved = 1, resolution = ? WHERE id = ? AND resolved = 0",
                       (f"{resolution} ({write.at})", conflict_id))


WRITES = (
    MemoryWrite("day1", 1, "2026-01-01T00:00:00+00:00", (
        FieldWrite("Personal", "age", 41, reasoning="said so"),
        FieldWrite("Income", "annual_amount", 75000, temporal="future", applied=False),
        FieldWrite("Personal", "city", None, source="user_skip", skipped=True)),
        conflicts=(ConflictWrite("Personal", "town", "Lisbon", "Porto"),
                   ConflictWrite("Income", "annual_amount", 1, 2)), target="intake-day1"),
    MemoryWrite("day2", 1, "2026-06-01T00:00:00+00:00", (
        FieldWrite("Personal", "age", 42, source="life_event", correction=True),), close=((1, "confirmed"),),
        target="intake-day2"),
)


def old_file(path: Path, subject: str = "") -> None:
    """A memory file as the old store left it: WAL, its tables, ``WRITES`` applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    with db:
        db.executescript(OLD_SCHEMA)
        if subject:
            db.execute("INSERT OR IGNORE INTO meta VALUES ('subject', ?)", (subject,))
    for write in WRITES:
        old_commit(db, write)
    db.close()


def tables(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    found = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    return found - {"sqlite_sequence"}


def written_anew(tmp_path: Path, subject: str) -> MemoryView:
    """What the store itself makes of ``WRITES``."""
    fresh = SqliteMemoryStores(tmp_path / "fresh")
    store = fresh.for_subject(subject) if subject else fresh.for_run("r9")
    for write in WRITES:
        store.commit(write)
    return store.view()


def test_a_subject_s_old_file_is_adopted_once(tmp_path: Path):
    stores = SqliteMemoryStores(tmp_path)
    path = stores.subject_path("Maria Silva")
    old_file(path, "Maria Silva")
    view = stores.for_subject("maria  silva").view()  # the name as first given is kept (meta)
    assert view == written_anew(tmp_path, "Maria Silva") and view.subject == "Maria Silva"
    assert view.runs == ("day1", "day2") and view.targets == ("intake-day1", "intake-day2")
    age = view.node("Personal").field("age")  # type: ignore[union-attr]
    assert [(h.value, h.previous, h.correction) for h in age.history] == [(41, None, False), (42, 41, True)]
    assert [(c.id, c.resolved) for c in view.conflicts] == [(1, True), (2, False)]
    assert tables(path) == {t.name for t in GRAPH_TABLES}
    again = stores.for_subject("Maria Silva")  # a second open adopts nothing more
    assert again.view() == view and not again.commit(WRITES[0])  # the turns written stay written
    again.commit(MemoryWrite("day3", 1, "2026-07-01T00:00:00+00:00", conflicts=(ConflictWrite("X", "y", 1, 2),)))
    assert [c.id for c in again.view().conflicts] == [1, 2, 3]


def test_a_run_s_old_file_is_adopted(tmp_path: Path):
    stores = SqliteMemoryStores(tmp_path)
    old_file(tmp_path / "r9" / RUN_MEMORY_FILE)
    assert stores.for_run("r9").view() == written_anew(tmp_path, "")
    assert tables(tmp_path / "r9" / RUN_MEMORY_FILE) == {t.name for t in GRAPH_TABLES}


def test_an_old_conversation_log_is_read_then_adopted(tmp_path: Path):
    path = tmp_path / "run-1" / CONVERSATION_FILE
    path.parent.mkdir()
    db = sqlite3.connect(path)
    with db:
        db.executescript(OLD_LOG_SCHEMA)
        for kind, step, name, data in (("turns", 2, "", '{"reply": "Porto"}'), ("turns", 1, "", '{"reply": "34"}'),
                                       ("snapshots", 0, "Personal", '{"age": 34}')):
            db.execute("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?)", (kind, step, name, data, "t"))
    db.close()
    stores = SqliteMemoryStores(tmp_path)
    before = path.read_bytes()
    read = stores.read_conversation("run-1", "turns", 10)  # the console: read-only, the file unchanged
    assert [(e.step, e.data) for e in read] == [(1, '{"reply": "34"}'), (2, '{"reply": "Porto"}')]
    assert path.read_bytes() == before
    log = stores.conversation("run-1")
    assert log.entries("turns") == read and log.get("snapshots", 0, "Personal") == '{"age": 34}'
    assert tables(path) == {"memory_log"}
    assert stores.conversation("run-1").entries("turns") == read == stores.read_conversation("run-1", "turns", 10)
