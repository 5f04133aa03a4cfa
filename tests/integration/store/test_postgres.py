"""The PostgreSQL run store against a real server: the same RunStore contract as SQLite
(contract.py: atomic claims from threads and processes, leases, takeover, cancel, quota,
tokens), plus what only PostgreSQL does: a claim skips a row another transaction holds."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import create_engine

from agents.ports.errors import ConfigError
from controller.platform.settings import Settings
from controller.platform.store import open_store
from controller.platform.store.models import StoreError
from controller.platform.store.postgres import PostgresStore
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
    new_run,
)
from tests.unit.controller.platform.store.migration_contract import ContractMigrations


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(postgres_dsn: str, clock: Clock) -> PostgresStore:
    return PostgresStore(postgres_dsn, clock=clock)


@pytest.fixture
def reopen(postgres_dsn: str):  # noqa: ANN201
    return lambda: PostgresStore(postgres_dsn)


@pytest.fixture
def opener(postgres_dsn: str) -> tuple[str, str]:
    return "postgres", postgres_dsn


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


class TestPostgresOnly:
    def test_a_claim_skips_a_row_another_transaction_holds(self, store, postgres_dsn):
        """SKIP LOCKED: while another worker's transaction holds the oldest queued row, a claim
        takes the next one instead of waiting for it or taking the same."""
        store.submit(new_run(1), quota=9, queue_limit=9)
        store.submit(new_run(2), quota=9, queue_limit=9)
        with psycopg.connect(postgres_dsn) as other:
            other.execute("SELECT seq FROM runs WHERE id = 'run-0001' FOR UPDATE").fetchone()
            claimed = store.claim("w", 30.0)
            assert claimed is not None and claimed.id == "run-0002"
            other.rollback()
        again = store.claim("w", 30.0)
        assert again is not None and again.id == "run-0001"

    def test_chosen_by_one_setting(self, postgres_dsn, tmp_path):
        settings = Settings(_env_file=None, runs_dir=tmp_path / "runs",  # type: ignore[call-arg]
                            service={"store": "postgres", "postgres_dsn": postgres_dsn})
        assert isinstance(open_store(settings), PostgresStore)
        assert not (tmp_path / "runs" / "service.sqlite").exists()

    def test_the_setting_needs_a_dsn(self):
        from pydantic import ValidationError

        with pytest.raises(ValidationError, match="store postgres needs postgres_dsn"):
            Settings(_env_file=None, service={"store": "postgres"})  # type: ignore[call-arg]

    def test_an_unreachable_server_is_one_line(self, tmp_path):
        with pytest.raises(StoreError, match="cannot reach the run store") as caught:
            PostgresStore(f"host={tmp_path} dbname=x user=nobody password=hunter2", timeout=2)
        assert "hunter2" not in caught.value.one_line()

    def test_a_duplicate_token_name(self, store):
        store.add_token("alice", "h1", admin=False)
        with pytest.raises(ConfigError, match="exists already"):
            store.add_token("alice", "h2", admin=False)


class TestMigrations(ContractMigrations):
    @pytest.fixture
    def raw(self, postgres_dsn: str):  # noqa: ANN201
        engine = create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(postgres_dsn))
        yield engine
        engine.dispose()

    @pytest.fixture
    def open_store(self, postgres_dsn: str):  # noqa: ANN201
        return lambda: PostgresStore(postgres_dsn)
