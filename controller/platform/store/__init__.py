"""The service's durable run queue and token store (issue 21).

:class:`~controller.platform.store.protocol.RunStore` is the interface; SQLite (WAL, under the
runs folder) is the embedded implementation. ``open_store`` picks one from the settings, so a
PostgreSQL store (``SELECT … FOR UPDATE SKIP LOCKED``) can be added behind one setting.
"""

from __future__ import annotations

from controller.platform.store.models import (
    ACTIVE,
    OPEN,
    TERMINAL,
    DuplicateRunId,
    NewRun,
    QueueFull,
    QuotaExceeded,
    RunPage,
    RunRow,
    RunStatus,
    StoreError,
    TokenRow,
)
from controller.platform.store.protocol import RunStore
from controller.platform.store.factory import open_store, store_path

__all__ = [
    "ACTIVE", "OPEN", "TERMINAL", "DuplicateRunId", "NewRun", "QueueFull", "QuotaExceeded", "RunPage", "RunRow", "RunStatus",
    "RunStore", "StoreError", "TokenRow", "open_store", "store_path",
]
