"""The service's durable run queue and token store (issue 21).

:data:`RunStore` is the store, written once in SQLAlchemy Core (:mod:`~controller.platform.store.sql`)
over SQLite (WAL, under the runs folder: the embedded default) or PostgreSQL (several replicas). The schema is Alembic's
(``migrations/``); ``open_store`` picks the database from the settings and migrates it.
"""

from __future__ import annotations

from controller.platform.store.factory import open_store, store_path
from controller.platform.store.models import (
    ACTIVE,
    LOCAL_OWNER,
    OPEN,
    TERMINAL,
    DuplicateRunId,
    Idempotency,
    IdempotencyConflict,
    NewRun,
    QueueFull,
    QuotaExceeded,
    RunEvent,
    RunPage,
    RunRow,
    RunStatus,
    StorageFull,
    StoreError,
    TokenRow,
)
from controller.platform.store.sql import SqlStore

#: The run store as its callers name it: one class serves SQLite and PostgreSQL alike.
RunStore = SqlStore

__all__ = [
    "ACTIVE", "LOCAL_OWNER", "OPEN", "TERMINAL", "DuplicateRunId", "Idempotency", "IdempotencyConflict", "NewRun",
    "QueueFull", "QuotaExceeded", "RunEvent", "RunPage", "RunRow", "RunStatus", "RunStore", "StorageFull",
    "StoreError", "TokenRow", "open_store", "store_path",
]
