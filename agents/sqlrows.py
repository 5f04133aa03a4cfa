"""One statement, two kinds of connection: a ``sqlite3`` file's or a SQLAlchemy engine's.

The run history (controller/platform/observability/history.py) and the lessons
(agents/lessons.py) keep their SQL once, with ``:name`` parameters (which both ``sqlite3`` and
SQLAlchemy's ``text`` take), and run it on the embedded SQLite file of the CLI or on the
service's PostgreSQL store (tables of revision 0004). Only constants of those modules are
formatted into a statement (table names, bucket bounds); values are always parameters.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, text

#: Either connection the statements run on.
AnyConnection = sqlite3.Connection | Connection
Params = Mapping[str, Any]


def rows(conn: AnyConnection, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
    """Every row ``sql`` gives, as plain tuples."""
    if isinstance(conn, sqlite3.Connection):
        return [tuple(row) for row in conn.execute(sql, dict(params or {})).fetchall()]
    return [tuple(row) for row in conn.execute(text(sql), dict(params or {}))]


def execute(conn: AnyConnection, sql: str, params: Params | None = None) -> int:
    """Run one statement; how many rows it changed."""
    if isinstance(conn, sqlite3.Connection):
        return conn.execute(sql, dict(params or {})).rowcount
    return int(conn.execute(text(sql), dict(params or {})).rowcount)


def execute_many(conn: AnyConnection, sql: str, many: Sequence[Params]) -> None:
    """Run one statement once per parameter set (nothing when there are none)."""
    if not many:
        return
    if isinstance(conn, sqlite3.Connection):
        conn.executemany(sql, [dict(p) for p in many])
    else:
        conn.execute(text(sql), [dict(p) for p in many])
