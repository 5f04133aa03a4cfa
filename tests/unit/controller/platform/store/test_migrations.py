"""The SQLite store's migrations (migration_contract.py); PostgreSQL's are in tests/integration/store."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine

from controller.platform.store.sqlite import SqliteStore
from tests.unit.controller.platform.store.migration_contract import ContractMigrations


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "service.sqlite"


@pytest.fixture
def raw(path: Path):  # noqa: ANN201
    path.parent.mkdir(parents=True)
    engine = create_engine(f"sqlite:///{path}")
    yield engine
    engine.dispose()


@pytest.fixture
def open_store(path: Path):  # noqa: ANN201
    return lambda: SqliteStore(path)


@pytest.fixture
def opener(path: Path) -> tuple[str, str]:
    return "sqlite", str(path)


class TestMigrations(ContractMigrations):
    pass
