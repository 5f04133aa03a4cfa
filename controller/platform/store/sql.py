"""The run store, written once in SQLAlchemy Core for SQLite and PostgreSQL.

Every state change is one transaction, so that several workers (threads, processes, replicas)
can share one database: a claim is one ``UPDATE … WHERE seq = (SELECT … FOR UPDATE SKIP
LOCKED) RETURNING …`` (SQLite renders no ``FOR UPDATE``: its ``BEGIN IMMEDIATE`` already holds
the only write lock), so a run is claimed by exactly one worker; ``renew`` keeps a worker's leases
alive, and ``expired`` / ``take_over`` let any worker pick up the runs of one that died.

Each change of a run's status writes its event to the run's journal (``run_events``) in the
same transaction, numbered by the run's ``last_event`` counter: the journal is the run's whole
life, numbered 1, 2, 3 … without gaps, and the event stream serves it. Whoever appends takes the
run's row lock first (the counter's ``UPDATE``), so two writers never take one number and a
reader never sees number n+1 before n.

What differs between the databases lives in :class:`Dialect`: how submissions serialise (an
advisory lock on PostgreSQL, the write lock on SQLite).
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy.exc
from sqlalchemy import (
    Connection,
    Engine,
    Select,
    and_,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.sql.elements import ColumnElement

from agents.ports.errors import ConfigError
from controller.platform.store.engine import WRITES, translated
from controller.platform.store.models import (
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
    StoreError,
    TokenRow,
)
from controller.platform.store.rows import parse_cursor, row_to_run
from controller.platform.store.schema import idempotency_keys, run_events, runs, sessions, tokens

#: The columns of a run row, in the order ``row_to_run`` reads them.
RUN_COLUMNS = (runs.c.id, runs.c.seq, runs.c.owner, runs.c.agent, runs.c.target, runs.c.options, runs.c.status,
               runs.c.worker, runs.c.lease_until, runs.c.cancel_requested, runs.c.takeovers, runs.c.created_at,
               runs.c.started_at, runs.c.finished_at, runs.c.exit_code, runs.c.summary, runs.c.error,
               runs.c.kind, runs.c.last_event, runs.c.upload_bytes, runs.c.upload_held)
OPEN_ROWS = tuple(sorted(OPEN))
ENDED = tuple(sorted(TERMINAL))
#: The advisory lock key submissions (and resumes) serialise on (PostgreSQL).
SUBMIT_LOCK = 21_000_021
#: A journal entry before it is numbered: its kind and its data.
Entry = tuple[str, dict[str, Any]]
RELEASED = "the service stopped; the run continues from its last checkpoint when a worker takes it"
TAKEN_OVER = "its worker stopped renewing its lease; it continues from its last checkpoint"


@dataclass(frozen=True)
class Dialect:
    """What differs between the two databases."""

    name: str
    #: Statement that serialises submissions for the rest of the transaction (None: the write lock does).
    submit_lock: str | None


SQLITE = Dialect("sqlite", None)
POSTGRES = Dialect("postgresql", f"SELECT pg_advisory_xact_lock({SUBMIT_LOCK})")


def status(value: str, **more: Any) -> Entry:
    """A ``status`` journal entry."""
    return "status", {"status": value, **more}


class SqlStore:
    """A durable queue of runs and a table of hashed bearer tokens, on a SQLAlchemy engine (the service's
    :data:`~controller.platform.store.RunStore`)."""

    def __init__(self, engine: Engine, dialect: Dialect, *, label: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self._dialect = dialect
        self._label = label  # how errors name the store (never a DSN)
        self._clock = clock

    # connections --------------------------------------------------------------------------
    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with translated(self._label), self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One transaction that writes, committed at the end (rolled back on any error)."""
        with translated(self._label), self.engine.connect() as conn:
            conn = conn.execution_options(**{WRITES: True})
            with conn.begin():
                yield conn

    def _lock_submissions(self, conn: Connection) -> None:
        if self._dialect.submit_lock is not None:
            conn.execute(text(self._dialect.submit_lock))

    # the journal --------------------------------------------------------------------------
    def _journal(self, conn: Connection, run_id: str, entries: Sequence[Entry], holder: str | None = None) -> int:
        """Append ``entries`` to the run's journal inside ``conn``'s transaction (only while ``holder``
        runs it, if given); the last number (0: nothing appended)."""
        if not entries:
            return 0
        where = [runs.c.id == run_id]
        if holder is not None:  # a worker that lost its run (taken over) writes nothing more to it
            where += [runs.c.worker == holder, runs.c.status == "running"]
        last = conn.execute(update(runs).where(*where)
                            .values(last_event=runs.c.last_event + len(entries))
                            .returning(runs.c.last_event)).scalar_one_or_none()
        if last is None:
            return 0
        first, now = int(last) - len(entries) + 1, self._clock()
        conn.execute(insert(run_events), [
            {"run_id": run_id, "seq": first + n, "kind": kind, "data": json.dumps(data), "at": now}
            for n, (kind, data) in enumerate(entries)])
        return int(last)

    def append_events(self, run_id: str, entries: Sequence[Entry], *, holder: str | None = None) -> int:
        """Journal ``entries`` (kind, data) for the run, numbered on (with ``holder``: only while that
        worker runs it, so a worker whose run was taken over writes nothing more); the last number
        (0: nothing appended)."""
        with self._write() as conn:
            return self._journal(conn, run_id, entries, holder)

    def events(self, run_id: str, *, after: int, limit: int) -> list[RunEvent]:
        """The run's journal after number ``after``, oldest first, at most ``limit``."""
        query = (select(run_events.c.seq, run_events.c.kind, run_events.c.data, run_events.c.at)
                 .where(run_events.c.run_id == run_id, run_events.c.seq > after)
                 .order_by(run_events.c.seq).limit(limit))
        with self._read() as conn:
            return [RunEvent(int(s), str(k), dict(json.loads(d)), float(a)) for s, k, d, a in conn.execute(query)]

    def _change(self, conn: Connection, run_id: str, where: Sequence[ColumnElement[bool]],
                entries: Sequence[Entry], **values: Any) -> bool:
        """Update run ``run_id`` where ``where`` holds, and journal ``entries`` if it did."""
        changed = conn.execute(update(runs).where(runs.c.id == run_id, *where).values(**values)).rowcount == 1
        if changed:
            self._journal(conn, run_id, entries)
        return changed

    # runs -------------------------------------------------------------------------------
    def submit(self, run: NewRun, *, quota: int, queue_limit: int, idempotency: Idempotency | None = None,
               upload_quota_bytes: int | None = None, idempotency_seconds: float = 86400.0) -> RunRow:
        """Store ``run`` as queued, durably, unless its owner's quota or the queue is full.

        With ``idempotency``, a key its owner used in the last ``idempotency_seconds`` with the
        same request gives back that request's run (its id is not ``run.id``: nothing was written).

        Raises:
            QuotaExceeded: the owner has ``quota`` open runs (or ended ones still holding an upload)
                already, or its uploads would hold more than ``upload_quota_bytes``.
            QueueFull: ``queue_limit`` runs are queued already.
            DuplicateRunId: a run with ``run.id`` exists (nothing was written).
            IdempotencyConflict: the key came with a different request.
        """
        try:
            with self._write() as conn:
                self._lock_submissions(conn)
                earlier = self._idempotent(conn, run.owner, idempotency, idempotency_seconds)
                if earlier is not None:  # a concurrent duplicate won: the caller answers as a replay
                    return dataclasses.replace(earlier, replayed=True)
                self._check_quota(conn, run.owner, quota)
                self._check_uploads(conn, run, upload_quota_bytes)
                queued = _scalar(conn, select(func.count()).where(runs.c.status == "queued"))
                if queued >= queue_limit:
                    raise QueueFull(f"the queue is full ({queued} run(s) waiting)", hint="try again later")
                conn.execute(insert(runs).values(
                    id=run.id, owner=run.owner, agent=run.agent, target=run.target, kind=run.kind,
                    options=json.dumps(run.options), status="queued", created_at=self._clock(),
                    upload_bytes=run.upload_bytes, upload_held=int(run.upload_bytes > 0)))
                self._journal(conn, run.id, [status("queued")])
                if idempotency is not None:
                    conn.execute(insert(idempotency_keys).values(
                        owner=run.owner, key=idempotency.key, request_hash=idempotency.request_hash,
                        run_id=run.id, created_at=self._clock()))
        except StoreError as exc:
            if isinstance(exc.__cause__, sqlalchemy.exc.IntegrityError):
                raise DuplicateRunId(f"a run {run.id} exists already") from None
            raise
        return self._require(run.id)

    def replay(self, owner: str, idempotency: Idempotency, *, keep_seconds: float = 86400.0) -> RunRow | None:
        """The run ``owner``'s earlier submission with this key made (None: the key is new or expired).

        Raises:
            IdempotencyConflict: the key came with a different request.
        """
        with self._write() as conn:
            return self._idempotent(conn, owner, idempotency, keep_seconds)

    def _idempotent(self, conn: Connection, owner: str, idempotency: Idempotency | None,
                    keep_seconds: float) -> RunRow | None:
        """The run an earlier submission with the same key made, if the request is the same.

        Raises:
            IdempotencyConflict: the key came with another request.
        """
        if idempotency is None:
            return None
        mine = (idempotency_keys.c.owner == owner, idempotency_keys.c.key == idempotency.key)
        conn.execute(delete(idempotency_keys).where(*mine,
                                                    idempotency_keys.c.created_at < self._clock() - keep_seconds))
        found = conn.execute(select(idempotency_keys.c.request_hash, idempotency_keys.c.run_id).where(*mine)).fetchone()
        if found is None:
            return None
        if not hmac.compare_digest(str(found[0]), idempotency.request_hash):
            raise IdempotencyConflict("this Idempotency-Key was used with a different request",
                                      hint="send the same request again, or use a new key for a new one")
        row = conn.execute(select(*RUN_COLUMNS).where(runs.c.id == found[1])).fetchone()
        if row is None:  # its run was forgotten since: the key goes with it
            conn.execute(delete(idempotency_keys).where(*mine))
            return None
        return row_to_run(tuple(row))

    def _check_quota(self, conn: Connection, owner: str, quota: int) -> None:
        # An ended run whose upload is still on disk holds its place until the upload is gone.
        holding = or_(runs.c.status.in_(OPEN_ROWS), runs.c.upload_held == 1)
        mine = _scalar(conn, select(func.count()).where(runs.c.owner == owner, holding))
        if mine >= quota:
            raise QuotaExceeded(f"{owner} has {mine} queued or running run(s) (or waiting for a reply, or holding "
                                "an upload), its quota", hint="wait for one to end or cancel one")

    def _check_uploads(self, conn: Connection, run: NewRun, quota_bytes: int | None) -> None:
        if quota_bytes is None or run.upload_bytes == 0:
            return
        # An upload counts while it is on disk; what its run kept of it (kept/), until Forget.
        held_bytes = case((runs.c.upload_held == 1, runs.c.upload_bytes), else_=0) + runs.c.kept_bytes
        held = _scalar(conn, select(func.coalesce(func.sum(held_bytes), 0)).where(runs.c.owner == run.owner))
        if held + run.upload_bytes > quota_bytes:
            would, limit = _sizes(held + run.upload_bytes, quota_bytes)
            raise QuotaExceeded(f"{run.owner}'s uploads would hold {would} on the service, "
                                f"more than its {limit}", hint="wait for its runs with uploads to end "
                                "(an upload is removed when its run ends; what its pages need is kept "
                                "until Forget), or cancel one")

    def get(self, run_id: str) -> RunRow | None:
        """The run, or None."""
        with self._read() as conn:
            row = conn.execute(select(*RUN_COLUMNS).where(runs.c.id == run_id)).fetchone()
        return row_to_run(tuple(row)) if row else None

    def list_runs(self, *, owner: str | None, target: str | None, status: RunStatus | None, limit: int,
                  cursor: str | None, agent: str | None = None, text: str | None = None) -> RunPage:
        """Runs newest first, filtered (``owner`` None: everyone's; ``text``: a case-insensitive substring
        of the id, target, agent, owner or error); ``cursor`` from a previous page."""
        query = _filtered(select(*RUN_COLUMNS), owner=owner, target=target, status=status, agent=agent)
        if text:
            query = query.where(_containing(text))
        return self._page(query, limit, cursor)

    def _page(self, query: Select[Any], limit: int, cursor: str | None) -> RunPage:
        if cursor is not None:
            query = query.where(runs.c.seq < parse_cursor(cursor))
        with self._read() as conn:
            rows = conn.execute(query.order_by(runs.c.seq.desc()).limit(limit + 1)).fetchall()
        found = [row_to_run(tuple(r)) for r in rows[:limit]]
        return RunPage(found, str(found[-1].seq) if len(rows) > limit else None)

    def claim(self, worker: str, lease_seconds: float) -> RunRow | None:
        """Atomically take the oldest queued run for ``worker`` (status running, leased); None if none."""
        now = self._clock()
        oldest = (select(runs.c.seq).where(runs.c.status == "queued").order_by(runs.c.seq).limit(1)
                  .with_for_update(skip_locked=True).scalar_subquery())
        statement = (update(runs).where(runs.c.seq == oldest, runs.c.status == "queued")
                     .values(status="running", worker=worker, lease_until=now + lease_seconds,
                             started_at=func.coalesce(runs.c.started_at, now))
                     .returning(*RUN_COLUMNS))
        with self._write() as conn:
            row = conn.execute(statement).fetchone()
            if row is not None:
                self._journal(conn, str(row[0]), [status("running")])
        return self.get(str(row[0])) if row else None

    def renew(self, worker: str, lease_seconds: float, run_ids: Collection[str]) -> int:
        """Extend ``worker``'s leases on ``run_ids`` (the runs it still works on); how many it renewed."""
        ids = list(run_ids)
        if not ids:
            return 0
        with self._write() as conn:
            return conn.execute(update(runs).where(runs.c.worker == worker, runs.c.status == "running",
                                                   runs.c.id.in_(ids))
                                .values(lease_until=self._clock() + lease_seconds)).rowcount

    def expired(self) -> list[RunRow]:
        """Running runs whose lease has run out (their worker died or hangs)."""
        query = (select(*RUN_COLUMNS).where(runs.c.status == "running", runs.c.lease_until < self._clock())
                 .order_by(runs.c.seq))
        with self._read() as conn:
            return [row_to_run(tuple(r)) for r in conn.execute(query)]

    def running(self) -> list[RunRow]:
        """Every running run (a starting service looks for those its dead predecessor held)."""
        query = select(*RUN_COLUMNS).where(runs.c.status == "running").order_by(runs.c.seq)
        with self._read() as conn:
            return [row_to_run(tuple(r)) for r in conn.execute(query)]

    def take_over(self, run_id: str, dead_worker: str, *, requeue: bool, error: str = "",
                  force: bool = False) -> bool:
        """Atomically end ``dead_worker``'s hold of an expired run (any run of its, with ``force``:
        the worker is known dead): back to queued (``requeue``), else ended as ``error`` with
        ``error``. False when another worker got there first."""
        now = self._clock()
        where = [runs.c.worker == dead_worker, runs.c.status == "running"]
        if not force:  # force: the worker is known dead (its process is gone), its lease need not run out
            where.append(runs.c.lease_until < now)
        if requeue:
            values: dict[str, Any] = {"status": "queued"}
            entry = status("queued", reason=TAKEN_OVER, takeover=True)
        else:
            values = {"status": "error", "finished_at": now, "error": error}
            entry = ("end", {"status": "error", "error": error})
        with self._write() as conn:
            return self._change(conn, run_id, where, [entry], worker=None, lease_until=None,
                                takeovers=runs.c.takeovers + 1, **values)

    def release(self, run_id: str, worker: str) -> bool:
        """Give a running run back to the queue (a draining worker); False if not ``worker``'s."""
        return self._held(run_id, worker, [status("queued", reason=RELEASED)], status="queued")

    def finish(self, run_id: str, worker: str, status: RunStatus, *, exit_code: int | None,
               summary: dict[str, Any] | None, error: str = "") -> bool:
        """Record the end of ``worker``'s run; False if the worker no longer holds it."""
        entry = ("end", {"status": status, "exit_code": exit_code, "error": error})
        return self._held(run_id, worker, [entry], status=status, finished_at=self._clock(), exit_code=exit_code,
                          summary=None if summary is None else json.dumps(summary), error=error)

    def wait(self, run_id: str, worker: str, question: dict[str, Any] | None = None) -> bool:
        """``worker``'s run stopped, checkpointed, to wait for a reply (``question``, journaled): status
        waiting, no worker, no lease (nothing expires; it still counts against its owner's quota).
        False if not ``worker``'s."""
        entries = [status("waiting"), *([("question", question)] if question is not None else [])]
        return self._held(run_id, worker, entries, status="waiting")

    def _held(self, run_id: str, holder: str, entries: Sequence[Entry], **values: Any) -> bool:
        """End ``holder``'s hold of its running run ``run_id`` with ``values``; False if it no longer holds it."""
        with self._write() as conn:
            return self._change(conn, run_id, [runs.c.worker == holder, runs.c.status == "running"], entries,
                                worker=None, lease_until=None, **values)

    def requeue(self, run_id: str, *, quota: int) -> RunRow | None:
        """Queue an ended ``error`` or ``cancelled`` run again (to resume it); None if it is not one.

        Raises:
            QuotaExceeded: its owner has ``quota`` queued + running runs already.
        """
        with self._write() as conn:
            self._lock_submissions(conn)
            row = conn.execute(select(runs.c.owner, runs.c.status).where(runs.c.id == run_id)
                               .with_for_update()).fetchone()
            if row is None or row[1] not in ("error", "cancelled"):
                return None
            self._check_quota(conn, str(row[0]), quota)
            self._change(conn, run_id, [], [status("queued", reason="resumed")], status="queued",
                         cancel_requested=0, finished_at=None, exit_code=None, summary=None, error="")
        return self.get(run_id)

    def answer(self, run_id: str) -> RunRow | None:
        """A waiting run's reply has arrived: queue it (to resume); the row after, None if it was not waiting."""
        with self._write() as conn:
            answered = self._change(conn, run_id, [runs.c.status == "waiting"],
                                    [status("queued", reason="the reply arrived")], status="queued")
        return self.get(run_id) if answered else None

    def cancel(self, run_id: str) -> RunRow | None:
        """Cancel a queued or waiting run at once, or ask the worker of a running one to stop; the row after."""
        with self._write() as conn:
            for was, reason in (("queued", "cancelled before it started"),
                                ("waiting", "cancelled while it waited for a reply")):
                self._change(conn, run_id, [runs.c.status == was], [("end", {"status": "cancelled", "error": reason})],
                             status="cancelled", finished_at=self._clock(), error=reason)
            self._change(conn, run_id, [runs.c.status == "running", runs.c.cancel_requested == 0],
                         [status("running", cancel_requested=True)], cancel_requested=1)
        return self.get(run_id)

    def cancel_requested(self, worker: str) -> list[str]:
        """Ids of ``worker``'s running runs whose cancellation was asked for."""
        query = select(runs.c.id).where(runs.c.worker == worker, runs.c.status == "running",
                                        runs.c.cancel_requested == 1)
        with self._read() as conn:
            return [str(r[0]) for r in conn.execute(query)]

    # uploads ------------------------------------------------------------------------------
    def upload_removed(self, run_id: str, *, kept_bytes: int = 0) -> bool:
        """The run's upload is gone from disk: it no longer counts against its owner's quotas, but
        ``kept_bytes`` (what the run kept of it, ``runs/<id>/kept/``) counts against the upload quota
        until the run is forgotten."""
        with self._write() as conn:
            return conn.execute(update(runs).where(runs.c.id == run_id, runs.c.upload_held == 1)
                                .values(upload_held=0, kept_bytes=max(0, kept_bytes))).rowcount == 1

    def held_uploads(self, *, ended_only: bool) -> list[str]:
        """Ids of the runs whose upload is still on disk (of ended runs only, with ``ended_only``)."""
        query = select(runs.c.id).where(runs.c.upload_held == 1)
        if ended_only:
            query = query.where(runs.c.status.in_(ENDED))
        with self._read() as conn:
            return [str(r[0]) for r in conn.execute(query)]

    def forget_keys(self, *, older_than: float) -> int:
        """Delete idempotency keys made before ``older_than``; how many."""
        with self._write() as conn:
            return conn.execute(delete(idempotency_keys).where(idempotency_keys.c.created_at < older_than)).rowcount

    # listings ---------------------------------------------------------------------------
    def stats(self, owner: str | None) -> dict[tuple[str, str, str], int]:
        """Runs per (agent, target, status), of ``owner`` (None: everyone's); checks
        (``options.kind`` "check") are not an agent's runs and are not counted."""
        query = (select(runs.c.agent, runs.c.target, runs.c.status, func.count())
                 .where(runs.c.kind != "check").group_by(runs.c.agent, runs.c.target, runs.c.status))
        if owner is not None:
            query = query.where(runs.c.owner == owner)
        with self._read() as conn:
            return {(str(a), str(t), str(s)): int(n) for a, t, s, n in conn.execute(query)}

    def history(self, *, owner: str | None, agent: str | None, target: str | None, limit: int,
                cursor: str | None) -> RunPage:
        """Ended runs newest first (the execution history), filtered (``owner`` None: everyone's)."""
        query = _filtered(select(*RUN_COLUMNS), owner=owner, agent=agent, target=target)
        return self._page(query.where(runs.c.status.in_(ENDED)), limit, cursor)

    def forget(self, *, target: str, agent: str | None) -> list[str]:
        """Delete the ended runs of ``target`` (of ``agent`` if given); their ids. Open runs stay."""
        condition = (runs.c.status.in_(ENDED), *_conditions(agent=agent, target=target))
        with self._write() as conn:
            ids = [str(r[0]) for r in conn.execute(select(runs.c.id).where(*condition))]
            conn.execute(delete(runs).where(runs.c.id.in_(ids)))
        return ids

    def counts(self) -> dict[str, int]:
        """Runs per status."""
        with self._read() as conn:
            rows = conn.execute(select(runs.c.status, func.count()).group_by(runs.c.status))
            return {str(status): int(n) for status, n in rows}

    def ping(self) -> None:
        """Raise :class:`StoreError` unless the store answers."""
        with self._read() as conn:
            conn.execute(select(func.count()).select_from(tokens)).fetchone()

    # tokens -----------------------------------------------------------------------------
    def add_token(self, name: str, token_hash: str, *, admin: bool) -> TokenRow:
        """Store a token's hash under ``name``.

        Raises:
            ConfigError: ``name`` exists already.
        """
        now = self._clock()
        try:
            with self._write() as conn:
                # A name is a tenant: "Local" beside "local" would be two tenants that read as one (issue 42).
                same = conn.execute(select(tokens.c.name).where(func.lower(tokens.c.name) == name.lower())).first()
                if same is not None:
                    raise ConfigError(f"a token called {same[0]!r} exists already (token names are compared "
                                      "without case)", hint=f"remove it first: python -m controller tokens remove "
                                      f"{same[0]}, or choose another name")
                conn.execute(insert(tokens).values(name=name, hash=token_hash, admin=int(admin), created_at=now))
        except StoreError as exc:
            if isinstance(exc.__cause__, sqlalchemy.exc.IntegrityError):
                raise ConfigError(f"a token called {name!r} exists already",
                                  hint=f"remove it first: python -m controller tokens remove {name}") from None
            raise
        return TokenRow(name, admin, now)

    def remove_token(self, name: str) -> bool:
        """Remove the token ``name`` and its console sessions; False if there was none."""
        with self._write() as conn:
            conn.execute(delete(sessions).where(sessions.c.token == name))
            return conn.execute(delete(tokens).where(tokens.c.name == name)).rowcount == 1

    def tokens(self) -> list[TokenRow]:
        """Every token's name and rights."""
        with self._read() as conn:
            rows = conn.execute(select(tokens.c.name, tokens.c.admin, tokens.c.created_at).order_by(tokens.c.name))
            return [TokenRow(str(n), bool(a), float(c)) for n, a, c in rows]

    def token_by_hash(self, token_hash: str) -> TokenRow | None:
        """The token whose hash is ``token_hash``, compared in constant time."""
        query = select(tokens.c.name, tokens.c.admin, tokens.c.created_at, tokens.c.hash).where(
            tokens.c.hash == token_hash)
        with self._read() as conn:
            return _token_of(conn.execute(query).fetchone(), token_hash)

    def has_tokens(self) -> bool:
        """Whether any token exists (then every request must carry one)."""
        with self._read() as conn:
            return conn.execute(select(tokens.c.name).limit(1)).fetchone() is not None

    # console sessions -------------------------------------------------------------------
    def add_session(self, session_hash: str, token_name: str, expires_at: float) -> None:
        """Keep a signed-in browser's session (its hash) for the token ``token_name`` until ``expires_at``;
        sessions that have expired are removed on the way."""
        now = self._clock()
        with self._write() as conn:
            conn.execute(delete(sessions).where(sessions.c.expires_at <= now))
            conn.execute(insert(sessions).values(hash=session_hash, token=token_name, created_at=now,
                                                 expires_at=expires_at))

    def session_token(self, session_hash: str) -> TokenRow | None:
        """The token of the live session ``session_hash``: None if it is unknown, has expired, or its
        token was removed."""
        query = (select(tokens.c.name, tokens.c.admin, tokens.c.created_at, sessions.c.hash)
                 .join_from(sessions, tokens, tokens.c.name == sessions.c.token)
                 .where(sessions.c.hash == session_hash, sessions.c.expires_at > self._clock()))
        with self._read() as conn:
            return _token_of(conn.execute(query).fetchone(), session_hash)

    def remove_session(self, session_hash: str) -> None:
        """End the session ``session_hash`` (signing out); nothing if there is none."""
        with self._write() as conn:
            conn.execute(delete(sessions).where(sessions.c.hash == session_hash))

    def _require(self, run_id: str) -> RunRow:
        row = self.get(run_id)
        if row is None:
            raise StoreError(f"run {run_id} vanished from the store right after it was written")
        return row

    def close(self) -> None:
        """Close the pool's connections (a forked child makes its own)."""
        self.engine.dispose()


def _conditions(**filters: str | None) -> list[ColumnElement[bool]]:
    return [runs.c[column] == value for column, value in filters.items() if value is not None]


#: The columns a listing's text search looks in.
SEARCHED = ("id", "target", "agent", "owner", "error")


def _containing(text: str) -> ColumnElement[bool]:
    """``text`` as a case-insensitive substring of any :data:`SEARCHED` column (``%`` and ``_`` literal)."""
    pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return or_(*(func.lower(runs.c[column]).like(pattern, escape="\\") for column in SEARCHED))


def _token_of(row: Any, digest: str) -> TokenRow | None:
    """The token of a (name, admin, created_at, hash) row found by ``digest``: the index finds the row,
    the constant-time comparison is what decides."""
    if row is None or not hmac.compare_digest(str(row[3]), digest):
        return None
    return TokenRow(str(row[0]), bool(row[1]), float(row[2]))


def _filtered(query: Select[Any], **filters: str | None) -> Select[Any]:
    condition = _conditions(**filters)
    return query.where(and_(*condition)) if condition else query


def _scalar(conn: Connection, query: Select[Any]) -> int:
    return int(conn.execute(query).scalar_one())


def _sizes(larger: int, smaller: int) -> tuple[str, str]:
    """Two sizes for a person, in bytes where their rounded forms would read alike."""
    shown = _mib(larger), _mib(smaller)
    return shown if shown[0] != shown[1] else (f"{larger:,} bytes", f"{smaller:,} bytes")


def _mib(size: int) -> str:
    """A size for a person: MiB with one decimal, or KiB (or bytes) where one decimal of MiB would
    make two different sizes read alike ("0.1 MiB … more than its 0.1 MiB", issue 42)."""
    if size >= 10 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    if size >= 10 << 10:
        return f"{size / (1 << 10):,.1f} KiB"
    return f"{size:,} bytes"
