"""Issue 34: graph memories in a real PostgreSQL (the memory contract of the files), and two
conversations of one subject writing at once from two processes: every turn kept once, each
with the value it replaced."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from agents.ports.memory import FieldWrite
from controller.platform.memory_sql import SqlMemoryStores
from controller.platform.store.engine import postgres_engine
from controller.platform.store.postgres import PostgresStore
from tests.unit.controller.platform.memory_contract import ContractMemory, write
from tests.unit.controller.platform.test_memory_sql import stores  # noqa: F401, F811


@pytest.fixture
def memory_engine(postgres_dsn: str) -> Iterator[Engine]:
    store = PostgresStore(postgres_dsn)
    yield store.engine
    store.engine.dispose()


class TestCommit(ContractMemory):
    """The memories in PostgreSQL (``stores`` from test_memory_sql.py, on this ``memory_engine``)."""


def _converse(dsn: str, run_id: str) -> None:
    engine = postgres_engine(dsn, timeout=10)
    store = SqlMemoryStores(engine).for_subject("Maria Silva")
    for turn in range(1, 21):
        store.commit(write(turn, FieldWrite("Personal", "age", f"{run_id}-{turn}"), run_id=run_id,
                           at=f"2026-01-01T00:00:{turn:02d}+00:00"))
    engine.dispose()


class TestTwoReplicas:
    def test_two_conversations_of_one_subject_write_in_turn(self, postgres_dsn: str, stores: SqlMemoryStores):  # noqa: F811
        """40 turns from two processes: all kept, and each history entry's previous value is the
        entry before it (no write read a value another was replacing)."""
        context = multiprocessing.get_context("spawn")
        writers = [context.Process(target=_converse, args=(postgres_dsn, name)) for name in ("a", "b")]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(120)
        assert [w.exitcode for w in writers] == [0, 0]
        history = stores.for_subject("Maria Silva").view().node("Personal").field("age").history  # type: ignore[union-attr]
        assert len(history) == 40
        assert [h.previous for h in history[1:]] == [h.value for h in history[:-1]]
