"""The embedded run store: one SQLite file (WAL) under the runs folder.

Each call opens its own connection, so threads and processes share the file safely; SQLite
serialises writers, and every state change is one ``UPDATE … WHERE status = …`` (a claim
uses ``RETURNING``) or one ``BEGIN IMMEDIATE`` transaction, so a run is claimed by exactly
one worker. ``synchronous=FULL``: a submission is on disk before the service answers 202.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.ports.errors import ConfigError
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

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    agent TEXT NOT NULL,
    target TEXT NOT NULL,
    options TEXT NOT NULL,
    status TEXT NOT NULL,
    worker TEXT,
    lease_until REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    takeovers INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    exit_code INTEGER,
    summary TEXT,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq);
CREATE INDEX IF NOT EXISTS runs_by_owner ON runs (owner, status);
CREATE TABLE IF NOT EXISTS tokens (
    name TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    admin INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    hash TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""
_COLUMNS = COLUMNS
_OPEN_OF_OWNER = f"SELECT COUNT(*) FROM runs WHERE owner = ? AND status IN {OPEN_SQL}"


class SqliteStore:
    """:class:`~controller.platform.store.protocol.RunStore` on one SQLite file."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time, timeout: float = 30.0) -> None:
        self.path = path
        self._clock = clock
        self._timeout = timeout
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create {path.parent}: {exc.strerror or exc}") from exc
        with self._connect() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode (transactions are explicit), closed afterwards."""
        try:
            conn = sqlite3.connect(self.path, timeout=self._timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the run store {self.path}: {exc}") from exc
        try:
            conn.execute("PRAGMA synchronous=FULL")
            yield conn
        except sqlite3.Error as exc:
            raise StoreError(f"run store {self.path}: {exc}") from exc
        finally:
            conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE``: the write lock from the first statement, so reads and writes agree."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # runs -------------------------------------------------------------------------------
    def submit(self, run: NewRun, *, quota: int, queue_limit: int) -> RunRow:
        with self._transaction() as conn:
            mine = _scalar(conn, _OPEN_OF_OWNER,
                           (run.owner,))
            if mine >= quota:
                raise QuotaExceeded(f"{run.owner} has {mine} queued or running run(s) (or waiting for a reply), its quota",
                                    hint="wait for one to end or cancel one")
            queued = _scalar(conn, "SELECT COUNT(*) FROM runs WHERE status = 'queued'", ())
            if queued >= queue_limit:
                raise QueueFull(f"the queue is full ({queued} run(s) waiting)", hint="try again later")
            try:
                conn.execute(
                    "INSERT INTO runs (id, owner, agent, target, options, status, created_at) "
                    "VALUES (?, ?, ?, ?, ?, 'queued', ?)",
                    (run.id, run.owner, run.agent, run.target, json.dumps(run.options), self._clock()),
                )
            except sqlite3.IntegrityError:
                raise DuplicateRunId(f"a run {run.id} exists already") from None
        return self._require(run.id)

    def get(self, run_id: str) -> RunRow | None:
        with self._connect() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row_to_run(row) if row else None

    def list_runs(self, *, owner: str | None, target: str | None, status: RunStatus | None, limit: int,
                  cursor: str | None, agent: str | None = None, text: str | None = None) -> RunPage:
        where, params = list_filters(owner, target, status, agent, text, cursor, "?")
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE {where} ORDER BY seq DESC LIMIT ?",
                                (*params, limit + 1)).fetchall()
        runs = [row_to_run(r) for r in rows[:limit]]
        return RunPage(runs, str(runs[-1].seq) if len(rows) > limit else None)

    def claim(self, worker: str, lease_seconds: float) -> RunRow | None:
        now = self._clock()
        with self._connect() as conn:
            # One statement: SQLite runs it under its write lock, so no two workers get one run.
            rows = conn.execute(
                f"UPDATE runs SET status = 'running', worker = ?, lease_until = ?, "
                f"started_at = COALESCE(started_at, ?) "
                f"WHERE seq = (SELECT seq FROM runs WHERE status = 'queued' ORDER BY seq LIMIT 1) "
                f"AND status = 'queued' RETURNING {_COLUMNS}",
                (worker, now + lease_seconds, now),
            ).fetchall()
        return row_to_run(rows[0]) if rows else None

    def renew(self, worker: str, lease_seconds: float, run_ids: Collection[str]) -> int:
        ids = list(run_ids)
        if not ids:
            return 0
        marks = ", ".join("?" * len(ids))
        with self._connect() as conn:
            cur = conn.execute(f"UPDATE runs SET lease_until = ? WHERE worker = ? AND status = 'running' "
                               f"AND id IN ({marks})", (self._clock() + lease_seconds, worker, *ids))
            return cur.rowcount

    def expired(self) -> list[RunRow]:
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE status = 'running' AND lease_until < ? "
                                "ORDER BY seq", (self._clock(),)).fetchall()
        return [row_to_run(r) for r in rows]

    def take_over(self, run_id: str, dead_worker: str, *, requeue: bool, error: str = "") -> bool:
        now = self._clock()
        if requeue:
            sql = ("UPDATE runs SET status = 'queued', worker = NULL, lease_until = NULL, takeovers = takeovers + 1 "
                   "WHERE id = ? AND worker = ? AND status = 'running' AND lease_until < ?")
            params: tuple[Any, ...] = (run_id, dead_worker, now)
        else:
            sql = ("UPDATE runs SET status = 'error', worker = NULL, lease_until = NULL, takeovers = takeovers + 1, "
                   "finished_at = ?, error = ? WHERE id = ? AND worker = ? AND status = 'running' AND lease_until < ?")
            params = (now, error, run_id, dead_worker, now)
        with self._connect() as conn:
            return conn.execute(sql, params).rowcount == 1

    def release(self, run_id: str, worker: str) -> bool:
        with self._connect() as conn:
            return conn.execute("UPDATE runs SET status = 'queued', worker = NULL, lease_until = NULL "
                                "WHERE id = ? AND worker = ? AND status = 'running'", (run_id, worker)).rowcount == 1

    def finish(self, run_id: str, worker: str, status: RunStatus, *, exit_code: int | None,
               summary: dict[str, Any] | None, error: str = "") -> bool:
        with self._connect() as conn:
            cur = conn.execute(
                "UPDATE runs SET status = ?, worker = NULL, lease_until = NULL, finished_at = ?, exit_code = ?, "
                "summary = ?, error = ? WHERE id = ? AND worker = ? AND status = 'running'",
                (status, self._clock(), exit_code, None if summary is None else json.dumps(summary), error,
                 run_id, worker),
            )
            return cur.rowcount == 1

    def requeue(self, run_id: str, *, quota: int) -> RunRow | None:
        with self._transaction() as conn:
            row = conn.execute("SELECT owner, status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None or row[1] not in ("error", "cancelled"):
                return None
            mine = _scalar(conn, _OPEN_OF_OWNER,
                           (row[0],))
            if mine >= quota:
                raise QuotaExceeded(f"{row[0]} has {mine} queued or running run(s) (or waiting for a reply), its quota",
                                    hint="wait for one to end or cancel one")
            conn.execute("UPDATE runs SET status = 'queued', cancel_requested = 0, finished_at = NULL, "
                         "exit_code = NULL, summary = NULL, error = '' WHERE id = ?", (run_id,))
        return self.get(run_id)

    def wait(self, run_id: str, worker: str) -> bool:
        with self._connect() as conn:
            return conn.execute("UPDATE runs SET status = 'waiting', worker = NULL, lease_until = NULL "
                                "WHERE id = ? AND worker = ? AND status = 'running'", (run_id, worker)).rowcount == 1

    def answer(self, run_id: str) -> RunRow | None:
        with self._connect() as conn:
            rows = conn.execute(f"UPDATE runs SET status = 'queued' WHERE id = ? AND status = 'waiting' "
                                f"RETURNING {_COLUMNS}", (run_id,)).fetchall()
        return row_to_run(rows[0]) if rows else None

    def cancel(self, run_id: str) -> RunRow | None:
        with self._connect() as conn:
            conn.execute(f"UPDATE runs SET status = 'cancelled', finished_at = ?, error = {CANCEL_REASON_SQL} "
                         "WHERE id = ? AND status IN ('queued', 'waiting')", (self._clock(), run_id))
            conn.execute("UPDATE runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'", (run_id,))
        return self.get(run_id)

    def cancel_requested(self, worker: str) -> list[str]:
        with self._connect() as conn:
            rows = conn.execute("SELECT id FROM runs WHERE worker = ? AND status = 'running' AND cancel_requested = 1",
                                (worker,)).fetchall()
        return [str(r[0]) for r in rows]

    def stats(self, owner: str | None) -> dict[tuple[str, str, str], int]:
        where, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        with self._connect() as conn:
            rows = conn.execute("SELECT agent, target, status, COUNT(*) FROM runs "
                                f"WHERE json_extract(options, '$.kind') IS NOT 'check' {where} "
                                "GROUP BY agent, target, status", params).fetchall()
        return {(str(a), str(t), str(s)): int(n) for a, t, s, n in rows}

    def history(self, *, owner: str | None, agent: str | None, target: str | None, limit: int,
                cursor: str | None) -> RunPage:
        where, params = history_filters(owner, agent, target, cursor, "?")
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM runs WHERE {where} ORDER BY seq DESC LIMIT ?",
                                (*params, limit + 1)).fetchall()
        runs = [row_to_run(r) for r in rows[:limit]]
        return RunPage(runs, str(runs[-1].seq) if len(rows) > limit else None)

    def forget(self, *, target: str, agent: str | None) -> int:
        where, params = history_filters(None, agent, target, None, "?")
        with self._connect() as conn:
            return conn.execute(f"DELETE FROM runs WHERE {where}", params).rowcount

    def counts(self) -> dict[str, int]:
        with self._connect() as conn:
            rows = conn.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall()
        return {str(status): int(n) for status, n in rows}

    def ping(self) -> None:
        with self._connect() as conn:
            conn.execute("SELECT COUNT(*) FROM tokens").fetchone()

    # tokens -----------------------------------------------------------------------------
    def add_token(self, name: str, token_hash: str, *, admin: bool) -> TokenRow:
        now = self._clock()
        try:
            with self._connect() as conn:
                conn.execute("INSERT INTO tokens (name, hash, admin, created_at) VALUES (?, ?, ?, ?)",
                             (name, token_hash, int(admin), now))
        except StoreError as exc:
            if isinstance(exc.__cause__, sqlite3.IntegrityError):
                raise ConfigError(f"a token called {name!r} exists already",
                                  hint=f"remove it first: python -m controller tokens remove {name}") from None
            raise
        return TokenRow(name, admin, now)

    def remove_token(self, name: str) -> bool:
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE token = ?", (name,))
            return conn.execute("DELETE FROM tokens WHERE name = ?", (name,)).rowcount == 1

    def tokens(self) -> list[TokenRow]:
        with self._connect() as conn:
            rows = conn.execute("SELECT name, admin, created_at FROM tokens ORDER BY name").fetchall()
        return [TokenRow(str(n), bool(a), float(c)) for n, a, c in rows]

    def token_by_hash(self, token_hash: str) -> TokenRow | None:
        with self._connect() as conn:
            row = conn.execute("SELECT name, admin, created_at, hash FROM tokens WHERE hash = ?",
                               (token_hash,)).fetchone()
        return token_of(row, token_hash)

    def has_tokens(self) -> bool:
        with self._connect() as conn:
            return conn.execute("SELECT 1 FROM tokens LIMIT 1").fetchone() is not None

    # console sessions -------------------------------------------------------------------
    def add_session(self, session_hash: str, token_name: str, expires_at: float) -> None:
        now = self._clock()
        with self._transaction() as conn:
            conn.execute("DELETE FROM sessions WHERE expires_at <= ?", (now,))
            conn.execute("INSERT INTO sessions (hash, token, created_at, expires_at) VALUES (?, ?, ?, ?)",
                         (session_hash, token_name, now, expires_at))

    def session_token(self, session_hash: str) -> TokenRow | None:
        with self._connect() as conn:
            row = conn.execute(session_query("?"), (session_hash, self._clock())).fetchone()
        return token_of(row, session_hash)

    def remove_session(self, session_hash: str) -> None:
        with self._connect() as conn:
            conn.execute("DELETE FROM sessions WHERE hash = ?", (session_hash,))

    def _require(self, run_id: str) -> RunRow:
        row = self.get(run_id)
        if row is None:
            raise StoreError(f"run {run_id} vanished from the store right after it was written")
        return row


def _scalar(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> int:
    return int(conn.execute(sql, params).fetchone()[0])
