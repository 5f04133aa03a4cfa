"""Issue 34: a run's graph checkpoints in a real PostgreSQL (LangGraph's PostgresSaver) with the
same strict allowlist as the SQLite files: a run checkpointed by one process resumes in another
(another replica) from the database, and a type outside the allowlist never comes back as itself."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph

from agents.bank_parser.agent import BankParserAgent
from agents.ports.errors import EnvironmentFault
from agents.ports.events import NodeEvent
from agents.ports.memory import FieldWrite, MemoryWrite
from controller.platform.checkpoints import CHECKPOINT_TABLES, close_checkpoint, open_checkpoint
from controller.platform.memory_sql import MEMORY_TABLES, SqlMemoryStores
from controller.platform.store.engine import postgres_engine
from controller.platform.store.postgres import PostgresStore
from tests.unit.controller.platform.test_checkpoints import Intruder


class State(TypedDict, total=False):
    events: list[NodeEvent]
    stranger: Any


def graph(checkpointer: Any, stop_after_first: bool) -> Any:
    built = StateGraph(State)
    built.add_node("first", lambda state: {"events": [NodeEvent("first", 1, "ok", 0.5, "d")],
                                           "stranger": Intruder("rm -rf /")})
    built.add_node("second", lambda state: {"events": [*state["events"], NodeEvent("second", 1, "ok", 0.1, "")]})
    built.add_edge(START, "first")
    built.add_edge("first", "second")
    built.add_edge("second", END)
    return built.compile(checkpointer=checkpointer, interrupt_after=["first"] if stop_after_first else None)


TYPES = BankParserAgent().info.state_types


class TestPostgresCheckpoints:
    def test_a_run_resumes_in_another_process_from_the_database(self, tmp_path: Path, postgres_dsn: str):
        """Stopped after its first node, the run goes on from there with a new connection (another replica
        would open just this); nothing is written under its folder."""
        first = open_checkpoint(tmp_path / "r1", "r1", TYPES, resume=False, dsn=postgres_dsn)
        try:
            graph(first.saver, stop_after_first=True).invoke({}, first.config, durability="sync")
        finally:
            close_checkpoint(first)
        again = open_checkpoint(tmp_path / "r1", "r1", TYPES, resume=True, dsn=postgres_dsn)
        try:
            ended = graph(again.saver, stop_after_first=False).invoke(None, again.config, durability="sync")
        finally:
            close_checkpoint(again)
        assert [(e.node, e.attempt) for e in ended["events"]] == [("first", 1), ("second", 1)]
        assert all(isinstance(e, NodeEvent) for e in ended["events"])
        assert not isinstance(ended["stranger"], Intruder) and ended["stranger"] == {"command": "rm -rf /"}
        assert not (tmp_path / "r1").exists()

    def test_a_role_limited_to_the_run_state_tables_uses_them_and_reads_nothing_else(self, tmp_path: Path,
                                                                                       postgres_dsn: str):
        """What a run's process gets (docs/kubernetes.md): a role that cannot create tables and may
        use only the checkpoint and memory tables checkpoints, resumes and keeps a subject's memory,
        and cannot read the store's tokens."""
        PostgresStore(postgres_dsn).engine.dispose()  # the store's tables, as the service makes them
        close_checkpoint(open_checkpoint(tmp_path, "setup", TYPES, resume=False, dsn=postgres_dsn))
        role = f"runs_{secrets.token_hex(4)}"
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN")
            conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
            tables = ", ".join((*CHECKPOINT_TABLES, *MEMORY_TABLES))
            conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {role}")
            conn.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
        limited = postgres_dsn.replace("user=sandloop", f"user={role}")
        self.test_a_run_resumes_in_another_process_from_the_database(tmp_path, limited)
        engine = postgres_engine(limited, timeout=10)
        try:
            SqlMemoryStores(engine).check()
            memory = SqlMemoryStores(engine).for_subject("Maria Silva")
            assert memory.commit(MemoryWrite("r1", 1, "2026-01-01T00:00:00+00:00",
                                             (FieldWrite("Personal", "age", 41),)))
            assert memory.view().values() == {"Personal": {"age": 41}}
        finally:
            engine.dispose()
        with psycopg.connect(limited) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT hash FROM tokens")

    def test_an_unreachable_database_is_one_line_without_the_dsn(self, tmp_path: Path):
        """A wrong SBX_STATE_DSN is an environment fault whose message never quotes it."""
        dsn = "host=127.0.0.1 port=1 user=nobody password=hunter2 dbname=x"
        with pytest.raises(EnvironmentFault, match="cannot reach the checkpoint database") as raised:
            open_checkpoint(tmp_path, "r1", TYPES, resume=False, dsn=dsn)
        assert "hunter2" not in raised.value.one_line()

