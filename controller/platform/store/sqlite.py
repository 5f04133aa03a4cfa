"""The embedded run store: one SQLite file (WAL) under the runs folder.

The statements are the shared ones (:mod:`controller.platform.store.sql`); this module only
opens the file (:func:`controller.platform.store.engine.sqlite_engine`: WAL,
``synchronous=FULL``, ``BEGIN IMMEDIATE`` for writes) and brings its schema up to date.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from controller.platform.store.engine import sqlite_engine
from controller.platform.store.migrate import upgrade
from controller.platform.store.sql import SQLITE, SqlStore


class SqliteStore(SqlStore):
    """The run store on one SQLite file."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time, timeout: float = 30.0,
                 migrate: bool = True) -> None:
        self.path = path
        label = f"run store {path}"
        super().__init__(sqlite_engine(path, timeout=timeout), SQLITE, label=label, clock=clock)
        if migrate:
            upgrade(self.engine, label=label)
