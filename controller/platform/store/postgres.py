"""The run store on PostgreSQL, for several service replicas (``SBX_SERVICE__STORE=postgres``).

The same contract as the SQLite store: a claim takes the oldest queued row with ``SELECT …
FOR UPDATE SKIP LOCKED`` inside one ``UPDATE … RETURNING``, so concurrent workers on any
replica skip each other's rows instead of waiting or taking the same one; submissions take a
transaction-scoped advisory lock, so the quota and queue-limit counts and the insert agree.
Each call opens its own connection (a service makes a few calls a second).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from agents.ports.errors import ConfigError
from controller.platform.store.models import (
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
from controller.platform.store.rows import (
    CANCEL_REASON_SQL,
    COLUMNS,
    OPEN_SQL,
    history_filters,
    list_filters,
    row_to_run,
    session_query,
    token_of,
)

#: The advisory lock key submissions (and resumes) serialise on.
_SUBMIT_LOCK = 21_000_021
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
        seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, owner TEXT NOT NULL, agent TEXT NOT NULL,
        target TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL, worker TEXT,
        lease_until DOUBLE PRECISION, cancel_requested INTEGER NOT NULL DEFAULT 0,
        takeovers INTEGER NOT NULL DEFAULT 0, created_at DOUBLE PRECISION NOT NULL,
        started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION, exit_code INTEGER, summary TEXT,
        error TEXT NOT NULL DEFAULT '')""",
    "CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq)",
    "CREATE INDEX IF NOT EXISTS runs_by_owner ON runs (owner, status)",
    """CREATE TABLE IF NOT EXISTS tokens (
        name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, admin INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS sessions (
        hash TEXT PRIMARY KEY, token TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL)""",
)
_ACTIVE_OF_OWNER = f"SELECT COUNT(*) FROM runs WHERE owner = %s AND status IN {OPEN_SQL}"


class PostgresStore:
    """:class:`~controller.platform.store.protocol.RunStore` on a PostgreSQL database."""

    def __init__(self, dsn: str, *, clock: Callable[[], float] = time.time, timeout: float = 10.0) -> None:
        self._dsn = dsn
        self._clock = clock
        self._timeout = timeout
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SUBMIT_LOCK,))  # one schema creator at a time
            for statement in _SCHEMA:
                conn.execute(statement)

    @contextmanager
    def _connect(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """An autocommit connection (each statement its own transaction), closed afterwards."""
        try:
            conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=int(self._timeout))
        except psycopg.Error as exc:
            raise StoreError(f"cannot reach the run store (PostgreSQL): {_reason(exc)}",
                             hint="check SBX_SERVICE__POSTGRES_DSN") from None
        try:
            yield conn
        except psycopg.Error as exc:
            raise StoreError(f"run store (PostgreSQL): {_reason(exc)}") from exc
        finally:
            conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        with self._connect() as conn, conn.transaction():
            yield conn

    # runs -------------------------------------------------------------------------------
    def submit(self, run: NewRun, *, quota: int, queue_limit: int) -> RunRow:
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SUBMIT_LOCK,))
            mine = _scalar(conn, _ACTIVE_OF_OWNER, (run.owner,))
            if mine >= quota:
                raise QuotaExceeded(f"{run.owner} has {mine} queued or running run(s) (or waiting for a reply), its quota",
                                    hint="wait for one to end or cancel one")
            queued = _scalar(conn, "SELECT COUNT(*) FROM runs WHERE status = 'queued'", ())
            if queued >= queue_limit:
                raise QueueFull(f"the queue is full ({queued} run(s) waiting)", hint="try again later")
            try:
                conn.execute("INSERT INTO runs (id, owner, agent, target, options, status, created_at) "
                             "VALUES (%s, %s, %s, %s, %s, 'queued', %s)",
                             (run.id, run.owner, run.agent, run.target, json.dumps(run.options), self._clock()))
            except psycopg.errors.UniqueViolation:
                raise DuplicateRunId(f"a run {run.id} exists already") from None
        row = self.get(run.id)
        if row is None:
            raise StoreError(f"run {run.id} vanished from the store right after it was written")
        return row

    def get(self, run_id: str) -> RunRow | None:
        with self._connect() as conn:
            row = conn.execute(f"SELECT {COLUMNS} FROM runs WHERE id = %s", (run_id,)).fetchone()
        return row_to_run(row) if row else None

    def list_runs(self, *, owner: str | None, target: str | None, status: RunStatus | None, limit: int,
                  cursor: str | None, agent: str | None = None, text: str | None = None) -> RunPage:
        where, params = list_filters(owner, target, status, agent, text, cursor, "%s")
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM runs WHERE {where} ORDER BY seq DESC LIMIT %s",
                                (*params, limit + 1)).fetchall()
        runs = [row_to_run(r) for r in rows[:limit]]
        return RunPage(runs, str(runs[-1].seq) if len(rows) > limit else None)

    def claim(self, worker: str, lease_seconds: float) -> RunRow | None:
        now = self._clock()
        with self._connect() as conn:
            row = conn.execute(
                f"UPDATE runs SET status = 'running', worker = %s, lease_until = %s, "
                f"started_at = COALESCE(started_at, %s) "
                f"WHERE seq = (SELECT seq FROM runs WHERE status = 'queued' ORDER BY seq LIMIT 1 "
                f"FOR UPDATE SKIP LOCKED) RETURNING {COLUMNS}",
                (worker, now + lease_seconds, now),
            ).fetchone()
        return row_to_run(row) if row else None

    def renew(self, worker: str, lease_seconds: float, run_ids: Collection[str]) -> int:
        ids = list(run_ids)
        if not ids:
            return 0
        with self._connect() as conn:
            return conn.execute("UPDATE runs SET lease_until = %s WHERE worker = %s AND status = 'running' "
                                "AND id = ANY(%s)", (self._clock() + lease_seconds, worker, ids)).rowcount

    def expired(self) -> list[RunRow]:
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM runs WHERE status = 'running' AND lease_until < %s "
                                "ORDER BY seq", (self._clock(),)).fetchall()
        return [row_to_run(r) for r in rows]

    def take_over(self, run_id: str, dead_worker: str, *, requeue: bool, error: str = "") -> bool:
        now = self._clock()
        if requeue:
            sql = ("UPDATE runs SET status = 'queued', worker = NULL, lease_until = NULL, takeovers = takeovers + 1 "
                   "WHERE id = %s AND worker = %s AND status = 'running' AND lease_until < %s")
            params: tuple[Any, ...] = (run_id, dead_worker, now)
        else:
            sql = ("UPDATE runs SET status = 'error', worker = NULL, lease_until = NULL, takeovers = takeovers + 1, "
                   "finished_at = %s, error = %s "
                   "WHERE id = %s AND worker = %s AND status = 'running' AND lease_until < %s")
            params = (now, error, run_id, dead_worker, now)
        with self._connect() as conn:
            return conn.execute(sql, params).rowcount == 1

    def release(self, run_id: str, worker: str) -> bool:
        with self._connect() as conn:
            return conn.execute("UPDATE runs SET status = 'queued', worker = NULL, lease_until = NULL "
                                "WHERE id = %s AND worker = %s AND status = 'running'",
                                (run_id, worker)).rowcount == 1

    def finish(self, run_id: str, worker: str, status: RunStatus, *, exit_code: int | None,
               summary: dict[str, Any] | None, error: str = "") -> bool:
        with self._connect() as conn:
            return conn.execute(
                "UPDATE runs SET status = %s, worker = NULL, lease_until = NULL, finished_at = %s, exit_code = %s, "
                "summary = %s, error = %s WHERE id = %s AND worker = %s AND status = 'running'",
                (status, self._clock(), exit_code, None if summary is None else json.dumps(summary), error,
                 run_id, worker),
            ).rowcount == 1

    def requeue(self, run_id: str, *, quota: int) -> RunRow | None:
        with self._transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SUBMIT_LOCK,))
            row = conn.execute("SELECT owner, status FROM runs WHERE id = %s FOR UPDATE", (run_id,)).fetchone()
            if row is None or row[1] not in ("error", "cancelled"):
                return None
            mine = _scalar(conn, _ACTIVE_OF_OWNER, (row[0],))
            if mine >= quota:
                raise QuotaExceeded(f"{row[0]} has {mine} queued or running run(s) (or waiting for a reply), its quota",
                                    hint="wait for one to end or cancel one")
            conn.execute("UPDATE runs SET status = 'queued', cancel_requested = 0, finished_at = NULL, "
                         "exit_code = NULL, summary = NULL, error = '' WHERE id = %s", (run_id,))
        return self.get(run_id)

    def wait(self, run_id: str, worker: str) -> bool:
        with self._connect() as conn:
            return conn.execute("UPDATE runs SET status = 'waiting', worker = NULL, lease_until = NULL "
                                "WHERE id = %s AND worker = %s AND status = 'running'",
                                (run_id, worker)).rowcount == 1

    def answer(self, run_id: str) -> RunRow | None:
        with self._connect() as conn:
            row = conn.execute(f"UPDATE runs SET status = 'queued' WHERE id = %s AND status = 'waiting' "
                               f"RETURNING {COLUMNS}", (run_id,)).fetchone()
        return row_to_run(row) if row else None

    def cancel(self, run_id: str) -> RunRow | None:
        with self._transaction() as conn:
            conn.execute(f"UPDATE runs SET status = 'cancelled', finished_at = %s, error = {CANCEL_REASON_SQL} "
                         "WHERE id = %s AND status IN ('queued', 'waiting')", (self._clock(), run_id))
            conn.execute("UPDATE runs SET cancel_requested = 1 WHERE id = %s AND status = 'running'", (run_id,))
        return self.get(run_id)

    def cancel_requested(self, worker: str) -> list[str]:
        with self._connect() as conn:
            rows = conn.execute("SELECT id FROM runs WHERE worker = %s AND status = 'running' "
                                "AND cancel_requested = 1", (worker,)).fetchall()
        return [str(r[0]) for r in rows]

    def stats(self, owner: str | None) -> dict[tuple[str, str, str], int]:
        where, params = ("AND owner = %s", (owner,)) if owner is not None else ("", ())
        with self._connect() as conn:
            rows = conn.execute("SELECT agent, target, status, COUNT(*) FROM runs "
                                f"WHERE (options::jsonb ->> 'kind') IS DISTINCT FROM 'check' {where} "
                                "GROUP BY agent, target, status", params).fetchall()
        return {(str(a), str(t), str(s)): int(n) for a, t, s, n in rows}

    def history(self, *, owner: str | None, agent: str | None, target: str | None, limit: int,
                cursor: str | None) -> RunPage:
        where, params = history_filters(owner, agent, target, cursor, "%s")
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM runs WHERE {where} ORDER BY seq DESC LIMIT %s",
                                (*params, limit + 1)).fetchall()
        runs = [row_to_run(r) for r in rows[:limit]]
        return RunPage(runs, str(runs[-1].seq) if len(rows) > limit else None)

    def forget(self, *, target: str, agent: str | None) -> int:
        where, params = history_filters(None, agent, target, None, "%s")
        with self._connect() as conn:
            return conn.execute(f"DELETE FROM runs WHERE {where}", params).rowcount

    def counts(self) -> dict[str, int]:
        with self._connect() as conn:
            rows = conn.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall()
        return {str(status): int(n) for status, n in rows}

    def ping(self) -> None:
        with self._connect() as conn:
            conn.execute("SELECT 1").fetchone()

    # tokens -----------------------------------------------------------------------------
    def add_token(self, name: str, token_hash: str, *, admin: bool) -> TokenRow:
        now = self._clock()
        try:
            with self._connect() as conn:
                conn.execute("INSERT INTO tokens (name, hash, admin, created_at) VALUES (%s, %s, %s, %s)",
                             (name, token_hash, int(admin), now))
        except StoreError as exc:
            if isinstance(exc.__cause__, psycopg.errors.UniqueViolation):
                raise ConfigError(f"a token called {name!r} exists already",
                                  hint=f"remove it first: python -m controller tokens remove {name}") from None
            raise
        return TokenRow(name, admin, now)

    def remove_token(self, name: str) -> bool:
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE token = %s", (name,))
            return conn.execute("DELETE FROM tokens WHERE name = %s", (name,)).rowcount == 1

    def tokens(self) -> list[TokenRow]:
        with self._connect() as conn:
            rows = conn.execute("SELECT name, admin, created_at FROM tokens ORDER BY name").fetchall()
        return [TokenRow(str(n), bool(a), float(c)) for n, a, c in rows]

    def token_by_hash(self, token_hash: str) -> TokenRow | None:
        with self._connect() as conn:
            row = conn.execute("SELECT name, admin, created_at, hash FROM tokens WHERE hash = %s",
                               (token_hash,)).fetchone()
        return token_of(row, token_hash)

    def has_tokens(self) -> bool:
        with self._connect() as conn:
            return conn.execute("SELECT 1 FROM tokens LIMIT 1").fetchone() is not None

    # console sessions -------------------------------------------------------------------
    def add_session(self, session_hash: str, token_name: str, expires_at: float) -> None:
        now = self._clock()
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_at <= %s", (now,))
            conn.execute("INSERT INTO sessions (hash, token, created_at, expires_at) VALUES (%s, %s, %s, %s)",
                         (session_hash, token_name, now, expires_at))

    def session_token(self, session_hash: str) -> TokenRow | None:
        with self._connect() as conn:
            row = conn.execute(session_query("%s"), (session_hash, self._clock())).fetchone()
        return token_of(row, session_hash)

    def remove_session(self, session_hash: str) -> None:
        with self._connect() as conn:
            conn.execute("DELETE FROM sessions WHERE hash = %s", (session_hash,))


def _scalar(conn: psycopg.Connection[tuple[Any, ...]], sql: str, params: tuple[Any, ...]) -> int:
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def _reason(exc: psycopg.Error) -> str:
    """The error's first line, without the connection string (it may hold a password)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
