"""The run store on PostgreSQL, for several service replicas (``SBX_SERVICE__STORE=postgres``).

The statements are the shared ones (:mod:`controller.platform.store.sql`): a claim's ``SELECT …
FOR UPDATE SKIP LOCKED`` lets concurrent workers on any replica skip each other's rows instead
of waiting or taking the same one; submissions take a transaction-scoped advisory lock, so the
quota and queue-limit counts and the insert agree. This module opens the database and brings
its schema up to date (under its own advisory lock: replicas starting together migrate once).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlalchemy.exc

from agents.ports.errors import first_line
from controller.platform.store.engine import postgres_engine
from controller.platform.store.migrate import upgrade
from controller.platform.store.models import StoreError
from controller.platform.store.sql import POSTGRES, SqlStore

LABEL = "run store (PostgreSQL)"


class PostgresStore(SqlStore):
    """The run store on a PostgreSQL database."""

    def __init__(self, dsn: str, *, clock: Callable[[], float] = time.time, timeout: float = 10.0,
                 migrate: bool = True) -> None:
        super().__init__(postgres_engine(dsn, timeout=timeout), POSTGRES, label=LABEL, clock=clock)
        try:
            with self.engine.connect():
                pass
        except sqlalchemy.exc.SQLAlchemyError as exc:
            self.engine.dispose()
            raise StoreError(f"cannot reach the run store (PostgreSQL): {first_line(exc)}",
                             hint="check SBX_SERVICE__POSTGRES_DSN") from None
        if migrate:
            upgrade(self.engine, label=LABEL)
