"""The SQLite run store: the RunStore contract (contract.py), WAL, and no token in the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from controller.platform.store.sqlite import SqliteStore
from controller.platform.store.tokens import new_token, token_hash
from tests.unit.controller.platform.store.contract import (
    Clock,
    ContractCancel,
    ContractClaim,
    ContractFencing,
    ContractHistory,
    ContractIdempotency,
    ContractJournal,
    ContractLeases,
    ContractList,
    ContractReplay,
    ContractSessions,
    ContractSubmit,
    ContractTakeover,
    ContractTokens,
    ContractUploads,
    ContractWaiting,
)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> SqliteStore:
    return SqliteStore(tmp_path / "runs" / "service.sqlite", clock=clock)


@pytest.fixture
def reopen(store: SqliteStore):  # noqa: ANN201
    return lambda: SqliteStore(store.path)


@pytest.fixture
def opener(store: SqliteStore) -> tuple[str, str]:
    return "sqlite", str(store.path)


class TestSubmit(ContractSubmit):
    pass


class TestClaim(ContractClaim):
    pass


class TestLeases(ContractLeases):
    pass


class TestCancel(ContractCancel):
    pass


class TestList(ContractList):
    pass


class TestTokens(ContractTokens):
    pass


class TestSessions(ContractSessions):
    pass


class TestWaiting(ContractWaiting):
    pass


class TestHistory(ContractHistory):
    pass


class TestJournal(ContractJournal):
    pass


class TestIdempotency(ContractIdempotency):
    pass


class TestUploads(ContractUploads):
    pass


class TestTakeover(ContractTakeover):
    pass


class TestReplay(ContractReplay):
    pass


class TestFencing(ContractFencing):
    pass


class TestSqliteOnly:
    def test_the_store_is_in_wal_mode(self, store):
        with sqlite3.connect(store.path) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    def test_the_files_hold_no_token(self, store):
        token = new_token()
        store.add_token("alice", token_hash(token), admin=False)
        files = list(store.path.parent.glob(store.path.name + "*"))  # the database, its WAL and index
        assert store.path in files
        assert all(token.encode() not in f.read_bytes() for f in files)
