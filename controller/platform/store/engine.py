"""The two databases the run store runs on, as SQLAlchemy engines, and their errors as one line.

SQLite (the embedded default): one file in WAL mode, ``synchronous=FULL`` (a submission is on
disk before the service answers 202), a busy timeout instead of "database is locked". pysqlite
is told to emit no BEGIN of its own; the store begins each transaction itself, ``BEGIN
IMMEDIATE`` for one that writes (it holds the write lock from its first statement, so what it
reads and what it writes agree) and a plain ``BEGIN`` for one that only reads (readers never
wait for writers in WAL mode).

PostgreSQL (several replicas): psycopg 3 over a libpq connection string or URL, a small pool
checked before use. The connection string can hold a password, so no message ever quotes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy.exc
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import NullPool

from agents.ports.errors import first_line
from controller.platform.store.models import StoreError

#: Execution option of a connection whose transaction writes (SQLite: BEGIN IMMEDIATE).
WRITES = "sandloop_writes"


def sqlite_engine(path: Path, *, timeout: float) -> Engine:
    """An engine on the SQLite file ``path`` (created with its folder if missing).

    Raises:
        StoreError: the folder cannot be created.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {path.parent}: {exc.strerror or exc}") from exc
    return _sqlite_events(create_engine(f"sqlite:///{path}", connect_args={"timeout": timeout,
                                                                           "check_same_thread": False},
                                        pool_size=8, max_overflow=16))


def sqlite_unpooled_engine(connect: Callable[[], Any]) -> Engine:
    """An engine whose every call opens a connection with ``connect`` (a ``sqlite3.connect`` with its
    busy timeout) and closes it after: no file is held between calls."""
    return _sqlite_events(create_engine("sqlite://", creator=connect, poolclass=NullPool))


def _sqlite_events(engine: Engine) -> Engine:
    event.listen(engine, "connect", _sqlite_connected)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connected(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # the store begins transactions itself (_sqlite_begin)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITES) else "BEGIN")


def postgres_engine(dsn: str, *, timeout: float) -> Engine:
    """An engine on the PostgreSQL database ``dsn`` (libpq ``key=value`` form or a URL)."""
    import psycopg  # lazy: psycopg only when PostgreSQL is chosen

    def connect() -> Any:
        return psycopg.connect(dsn, connect_timeout=max(1, int(timeout)))

    return create_engine("postgresql+psycopg://", creator=connect, pool_size=4, max_overflow=8,
                         pool_pre_ping=True, pool_recycle=600)


@contextmanager
def translated(where: str) -> Iterator[None]:
    """Turn a database error into :class:`StoreError` with its first line (never the DSN)."""
    try:
        yield
    except sqlalchemy.exc.SQLAlchemyError as exc:
        raise StoreError(f"{where}: {first_line(exc)}") from exc
