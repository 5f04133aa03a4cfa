"""Issue 34: a run's conversation log through the port (agents.ports.memory.ConversationLog), the
same contract in RAM, in the run folder's ``conversation.sqlite`` and in the store's ``memory_log``;
an earlier release's file is adopted, and read read-only by the console without being changed."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.ports.memory import ConversationLog, MemoryConversationLog
from controller.platform.memory_sql import CONVERSATION_FILE, SqliteMemoryStores, SqlMemoryStores
from controller.platform.store.sqlite import SqliteStore


@pytest.fixture(params=["ram", "file", "store"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ConversationLog]:
    if request.param == "ram":
        yield MemoryConversationLog()
        return
    if request.param == "file":
        made: ConversationLog = SqliteMemoryStores(tmp_path).conversation("run-1")
        yield made
        made.close()
        return
    store = SqliteStore(tmp_path / "service.sqlite")
    yield SqlMemoryStores(store.engine).conversation("run-1")
    store.engine.dispose()


class TestContract:
    def test_the_first_entry_under_a_key_stands(self, log: ConversationLog):
        log.put("turns", 1, '{"reply": "34"}', "t1")
        log.put("turns", 1, '{"reply": "35"}', "t2")  # a resumed run writing the turn again
        assert log.get("turns", 1) == '{"reply": "34"}' and log.get("turns", 2) is None

    def test_a_snapshot_is_replaced(self, log: ConversationLog):
        log.put("snapshots", 0, '{"age": 34}', "t1", name="Personal", replace=True)
        log.put("snapshots", 0, '{"age": 35}', "t2", name="Personal", replace=True)
        assert [(e.name, e.data, e.at) for e in log.entries("snapshots")] == [("Personal", '{"age": 35}', "t2")]

    def test_entries_come_by_step_and_kinds_stay_apart(self, log: ConversationLog):
        for step in (3, 1, 2):
            log.put("traversal", step, json.dumps(f"node-{step}"), f"t{step}")
        log.put("edges", 1, "{}", "t")
        assert [e.step for e in log.entries("traversal")] == [1, 2, 3] and len(log.entries("edges")) == 1
        assert log.get("decisions", 1) is None


def test_two_runs_logs_are_apart(tmp_path: Path):
    store = SqliteStore(tmp_path / "service.sqlite")
    stores = SqlMemoryStores(store.engine)
    stores.conversation("run-1").put("turns", 1, "{}", "t")
    assert stores.read_conversation("run-2", "turns", 10) == []
    assert len(stores.read_conversation("run-1", "turns", 10)) == 1
    store.engine.dispose()


OLD_RELEASE = """
CREATE TABLE edges (step INTEGER PRIMARY KEY, from_node TEXT, to_node TEXT, reason TEXT, at TEXT);
CREATE TABLE traversal (step INTEGER PRIMARY KEY, node TEXT, at TEXT);
CREATE TABLE snapshots (node TEXT PRIMARY KEY, data TEXT, at TEXT);
CREATE TABLE turns (turn INTEGER PRIMARY KEY, question TEXT, reply TEXT, resolution TEXT, at TEXT);
CREATE TABLE decisions (step INTEGER PRIMARY KEY, decision TEXT, at TEXT);
INSERT INTO edges VALUES (1, 'Personal', 'Income', 'needs income', 't1');
INSERT INTO traversal VALUES (0, 'Personal', 't0'), (1, 'Income', 't1');
INSERT INTO snapshots VALUES ('Personal', '{"age": 34}', 't1');
INSERT INTO turns VALUES (1, '{"text": "How old are you?"}', '34', '{"updates": []}', 't1');
INSERT INTO decisions VALUES (1, '{"next_node": "Income"}', 't1');
"""


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    path = tmp_path / "run-1" / CONVERSATION_FILE
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.executescript(OLD_RELEASE)
    db.close()
    return path


def test_an_earlier_release_log_is_read_without_being_changed(tmp_path: Path, old_file: Path):
    before = old_file.read_bytes()
    turns = SqliteMemoryStores(tmp_path).read_conversation("run-1", "turns", 10)
    assert [(t.step, json.loads(t.data)["question"]["text"], json.loads(t.data)["reply"]) for t in turns] == \
        [(1, "How old are you?", "34")]
    assert old_file.read_bytes() == before


def test_an_earlier_release_log_is_adopted_when_its_run_resumes(tmp_path: Path, old_file: Path):
    log = SqliteMemoryStores(tmp_path).conversation("run-1")
    assert json.loads(log.get("turns", 1) or "{}")["resolution"] == {"updates": []}
    assert [json.loads(e.data) for e in log.entries("traversal")] == ["Personal", "Income"]
    assert json.loads(log.entries("edges")[0].data) == {"from": "Personal", "to": "Income", "reason": "needs income"}
    assert log.get("snapshots", 0, "Personal") == '{"age": 34}' and log.get("decisions", 1) is not None
    log.close()
    with sqlite3.connect(old_file) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert tables == {"memory_log"}


def test_no_log_reads_as_none_and_creates_nothing(tmp_path: Path):
    assert SqliteMemoryStores(tmp_path).read_conversation("run-9", "turns", 10) == []
    assert not (tmp_path / "run-9").exists()
