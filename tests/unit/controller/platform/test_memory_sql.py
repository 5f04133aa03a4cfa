"""Issue 34: graph memories in the store's ``memory_*`` tables (here on SQLite; on PostgreSQL in
tests/integration/store): the same contract as the files, each memory under its own key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from agents.ports.memory import FieldWrite
from controller.platform.memory_sql import SqlMemoryStores
from controller.platform.store.sqlite import SqliteStore
from tests.unit.controller.platform.memory_contract import ContractMemory, write


@pytest.fixture
def memory_engine(tmp_path: Path) -> Iterator[Engine]:
    """An engine on a store with revision 0005's tables, outside ``tmp_path`` (which must stay empty)."""
    store = SqliteStore(tmp_path.parent / f"{tmp_path.name}-store" / "service.sqlite")
    yield store.engine
    store.engine.dispose()


@pytest.fixture
def stores(memory_engine: Engine) -> SqlMemoryStores:
    return SqlMemoryStores(memory_engine)


class TestCommit(ContractMemory):
    """The store's memories."""


class TestKeys:
    def test_memories_are_apart_and_a_subject_is_known_once_written(self, stores: SqlMemoryStores):
        """Two subjects and a run share the tables but never a value; has_subject makes no memory."""
        assert not stores.has_subject("Maria Silva")
        stores.for_subject("Maria Silva").commit(write(1, FieldWrite("Personal", "age", 41), run_id="a"))
        stores.for_subject("Jo Lee").commit(write(1, FieldWrite("Personal", "age", 30), run_id="b"))
        stores.for_run("c").commit(write(1, FieldWrite("Personal", "age", 9), run_id="c"))
        assert stores.for_subject("maria  silva").view().values() == {"Personal": {"age": 41}}
        assert stores.for_subject("Jo Lee").view().runs == ("b",)
        assert stores.for_run("c").view().values() == {"Personal": {"age": 9}}
        assert stores.has_subject("Maria Silva") and not stores.has_subject("Ann")
