"""The one place a run store is chosen from the settings."""

from __future__ import annotations

from pathlib import Path

from controller.platform.settings import Settings
from controller.platform.store.sql import SqlStore
from controller.platform.store.sqlite import SqliteStore

STORE_FILE = "service.sqlite"


def store_path(settings: Settings) -> Path:
    """The SQLite store's file: the configured one, else ``<runs_dir>/service.sqlite``."""
    return settings.service.store_path or settings.runs_dir / STORE_FILE


def open_store(settings: Settings, *, migrate: bool = True) -> SqlStore:
    """The store ``SBX_SERVICE__STORE`` names, its schema migrated to this release's (``migrate``).

    Raises:
        StoreError: the store cannot be opened.
        SchemaTooNew: a newer sandloop migrated it.
    """
    dsn = settings.service.postgres_dsn
    if settings.service.store == "postgres" and dsn is not None:
        from controller.platform.store.postgres import PostgresStore  # lazy: psycopg only when it is chosen

        return PostgresStore(dsn.get_secret_value(), migrate=migrate)
    return SqliteStore(store_path(settings), migrate=migrate)


def store_label(settings: Settings) -> str:
    """How a person is told which store this is (never the DSN, which may hold a password)."""
    return "the PostgreSQL store" if settings.service.store == "postgres" else str(store_path(settings))
