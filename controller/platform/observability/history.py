"""The durable run history: one SQLite file (``runs/history.sqlite`` by default), or the
service's PostgreSQL store (tables ``history_*`` of revision 0004, issue 34).

``make run`` is a one-shot process, so its in-memory metrics die with it. Each run instead
appends what it ended with (status, attempts, failures, node and sandbox timings) here, in
one transaction at its end; the long-running exporter (``python -m controller serve``)
derives its counters and histograms from this file on every scrape. Counters therefore
survive restarts of either process and never reset while the file is kept.

The file uses SQLite's default rollback journal (not WAL), so a reader needs only read
access: the exporter can mount ``runs/`` read-only. Writes are tiny and wait up to
``BUSY_TIMEOUT_SECONDS`` for a concurrent writer.

On PostgreSQL (:meth:`HistoryStore.in_store`) the same statements (:mod:`agents.sqlrows`) run
on the store's engine, on tables named with a ``history_`` prefix: every replica reads and
writes one history. A run's child never gets the store's DSN: it hands its record to the
service through its run folder (:mod:`controller.platform.observability.handoff`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy.exc
from sqlalchemy import Engine

from agents.ports.errors import EnvironmentFault, first_line
from agents.ports.status import FINAL
from agents.sqlrows import AnyConnection, execute_many, rows

SCHEMA_VERSION = 3
#: Warm-pool use of one execution: served warm, asked for warm but ran cold, or not poolable.
POOL_RESULTS = ("hit", "miss")
BUSY_TIMEOUT_SECONDS = 10.0
#: Final statuses a run can be recorded with (bounded: they label metrics), from the one table.
STATUSES = FINAL

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    duration_seconds REAL NOT NULL,
    sandbox_seconds REAL NOT NULL,
    coder TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_by_target ON runs (agent, target, status);
CREATE TABLE IF NOT EXISTS attempt_failures (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    attempt INTEGER NOT NULL,
    reason TEXT NOT NULL,
    retried INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS node_runs (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    node TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    duration_seconds REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sandbox_executions (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    image TEXT NOT NULL,
    image_ref TEXT NOT NULL,
    outcome TEXT NOT NULL,
    duration_seconds REAL NOT NULL,
    exit_code INTEGER,
    attempt INTEGER NOT NULL,
    pool TEXT NOT NULL DEFAULT 'none',
    warmup_seconds REAL
);
CREATE TABLE IF NOT EXISTS sandbox_infra_retries (
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    image TEXT NOT NULL,
    reason TEXT NOT NULL
);
"""
#: The tables' names in the file, and in the PostgreSQL store (revision 0004).
FILE_TABLES = {"runs": "runs", "failures": "attempt_failures", "nodes": "node_runs",
               "sandbox": "sandbox_executions", "infra": "sandbox_infra_retries"}
STORE_TABLES = {"runs": "history_runs", "failures": "history_attempt_failures", "nodes": "history_node_runs",
                "sandbox": "history_sandbox_executions", "infra": "history_infra_retries"}
#: What a database error is, whichever the history is on.
DATABASE_ERRORS = (OSError, sqlite3.Error, sqlalchemy.exc.SQLAlchemyError)
#: Upgrades from an older user_version, applied in order before _SCHEMA.
_MIGRATIONS = {
    1: "ALTER TABLE sandbox_executions ADD COLUMN pool TEXT NOT NULL DEFAULT 'none';"
       "ALTER TABLE sandbox_executions ADD COLUMN warmup_seconds REAL;",
    2: "",  # sandbox_infra_retries: a new table, made by _SCHEMA
}


class HistoryError(EnvironmentFault):
    """The run history file cannot be read or written."""


@dataclass(frozen=True)
class NodeRecord:
    """One node execution of a run."""

    node: str
    attempt: int
    outcome: str
    seconds: float


@dataclass(frozen=True)
class SandboxRecord:
    """One sandbox execution of a run; ``image`` is the bounded label, ``image_ref`` the tag."""

    image: str
    image_ref: str
    outcome: str
    seconds: float
    exit_code: int | None
    attempt: int
    pool: str = "none"
    warmup_seconds: float | None = None
    #: Why each earlier try was lost by the infrastructure and run again (INFRA_REASONS).
    infra_retries: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunRecord:
    """What one run ended with, as the history keeps it.

    ``failures`` holds the failure kind of each failed attempt, oldest first; attempt ``i``
    (1-based) was retried when ``i < attempts``.
    """

    run_id: str
    agent: str
    target: str
    status: str
    attempts: int
    max_attempts: int
    started_at: float
    finished_at: float
    duration_seconds: float
    sandbox_seconds: float = 0.0
    coder: str = ""
    failures: tuple[str, ...] = ()
    nodes: tuple[NodeRecord, ...] = ()
    sandbox: tuple[SandboxRecord, ...] = ()
    error: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown run status {self.status!r} (known: {', '.join(STATUSES)})")

    @property
    def retries(self) -> tuple[str, ...]:
        """Failure kinds that were followed by another attempt."""
        return tuple(kind for index, kind in enumerate(self.failures, start=1) if index < self.attempts)


@dataclass(frozen=True)
class Histogram:
    """Cumulative bucket counts (``le`` order), count and sum of observations."""

    buckets: tuple[float, ...]
    cumulative: tuple[int, ...]
    count: int
    total: float

    @classmethod
    def empty(cls, buckets: Sequence[float]) -> Histogram:
        """No observations yet."""
        return cls(tuple(buckets), tuple(0 for _ in buckets), 0, 0.0)


Counts = dict[tuple[str, ...], int]
Histograms = dict[tuple[str, ...], Histogram]


@dataclass
class HistorySnapshot:
    """Aggregates of the whole history, read in one transaction (what a scrape exports)."""

    # Keys are label values in the order the comment names (SQL GROUP BY rows, so their length
    # is the query's, not the type's).
    runs: Counts = field(default_factory=dict)  # agent, target, status
    retries: Counts = field(default_factory=dict)  # agent, target, reason
    attempts: Histograms = field(default_factory=dict)  # agent, target
    run_seconds: Histograms = field(default_factory=dict)  # agent, target
    node_seconds: Histograms = field(default_factory=dict)  # agent, node
    sandbox_runs: Counts = field(default_factory=dict)  # agent, target, image, outcome
    sandbox_seconds: Histograms = field(default_factory=dict)  # agent, target, image
    last_success: dict[tuple[str, str], float] = field(default_factory=dict)  # agent, target
    pool_requests: Counts = field(default_factory=dict)  # agent, target, image, result
    pool_warmup_seconds: Histograms = field(default_factory=dict)  # image
    infra_retries: Counts = field(default_factory=dict)  # image, reason


class HistoryStore:
    """Appends run records to, and reads aggregates from, one SQLite file or the PostgreSQL store."""

    def __init__(self, path: Path, *, engine: Engine | None = None) -> None:
        self.path = path
        self._engine = engine  # the PostgreSQL store's; None: the file at path
        self._t = FILE_TABLES if engine is None else STORE_TABLES

    @classmethod
    def in_store(cls, engine: Engine) -> HistoryStore:
        """The history in the service's PostgreSQL store (its ``history_*`` tables)."""
        return cls(Path("postgresql"), engine=engine)

    @property
    def label(self) -> str:
        """Where the history is, for a log line or a message (never a DSN)."""
        return "the run store (PostgreSQL)" if self._engine is not None else str(self.path)

    def record(self, run: RunRecord) -> None:
        """Append ``run`` (with its failures, nodes and sandbox executions) atomically.

        Raises:
            HistoryError: the file cannot be created or written.
        """
        try:
            if self._engine is not None:
                with self._engine.begin() as conn:
                    _insert(conn, run, self._t)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS)) as db, db:
                _ensure_schema(db)
                _insert(db, run, self._t)
        except DATABASE_ERRORS as exc:
            raise HistoryError(f"cannot write the run history {self.label}: {first_line(exc)}") from exc

    def exists(self) -> bool:
        """Whether any run can have been recorded yet (the file exists; the store always does)."""
        return self._engine is not None or self.path.is_file()

    def has_run(self, run_id: str) -> bool:
        """Whether run ``run_id`` is recorded (a hand-off kept twice is kept once)."""
        with self._reader() as conn:
            return conn is not None and bool(rows(conn, f"SELECT 1 FROM {self._t['runs']} WHERE run_id = :run_id",
                                                  {"run_id": run_id}))

    def count_runs(self) -> int:
        """How many runs the history holds (0 when there is no file yet)."""
        with self._reader() as conn:
            return 0 if conn is None else int(rows(conn, f"SELECT COUNT(*) FROM {self._t['runs']}")[0][0])

    def last_success(self, agent: str, target: str) -> float | None:
        """Unix time the last passing run of ``agent`` on ``target`` ended, if any did."""
        with self._reader() as conn:
            if conn is None:
                return None
            row = rows(conn, f"SELECT MAX(finished_at) FROM {self._t['runs']} WHERE agent = :agent "
                             "AND target = :target AND status = 'passed'", {"agent": agent, "target": target})[0]
            return None if row[0] is None else float(row[0])

    def read_runs(self) -> list[dict[str, object]]:
        """Every run row, oldest first (for reports and tests)."""
        with self._reader() as conn:
            if conn is None:
                return []
            found = rows(conn, f"SELECT {', '.join(RUN_COLUMNS)} FROM {self._t['runs']} ORDER BY finished_at, run_id")
        return [dict(zip(RUN_COLUMNS, row, strict=True)) for row in found]

    def target_runs(self, agent: str, target: str, limit: int = 10_000) -> list[tuple[float, str, int]]:
        """(finished_at, status, attempts) of the newest ``limit`` runs of ``agent`` on ``target``, oldest first."""
        with self._reader() as conn:
            if conn is None:
                return []
            found = rows(conn, f"SELECT finished_at, status, attempts FROM {self._t['runs']} WHERE agent = :agent "
                               "AND target = :target ORDER BY finished_at DESC LIMIT :limit",
                         {"agent": agent, "target": target, "limit": limit})
        return [(float(f), str(s), int(a)) for f, s, a in reversed(found)]

    def target_failures(self, agent: str, target: str) -> dict[str, int]:
        """Failed attempts per reason, of ``agent``'s runs on ``target``."""
        with self._reader() as conn:
            if conn is None:
                return {}
            found = rows(conn, f"SELECT f.reason, COUNT(*) FROM {self._t['failures']} f JOIN {self._t['runs']} r "
                               "ON r.run_id = f.run_id WHERE r.agent = :agent AND r.target = :target "
                               "GROUP BY f.reason ORDER BY COUNT(*) DESC", {"agent": agent, "target": target})
        return {str(reason): int(count) for reason, count in found}

    def snapshot(self, buckets: BucketSet) -> HistorySnapshot:
        """Aggregate the whole history for the exporter, in one read transaction.

        Raises:
            HistoryError: the file exists but cannot be read (corrupt, wrong permissions).
        """
        with self._reader() as conn:
            if conn is None:
                return HistorySnapshot()
            return _aggregate(conn, buckets, self._t)

    @contextmanager
    def _reader(self) -> Iterator[AnyConnection | None]:
        if self._engine is not None:
            try:
                with self._engine.connect() as conn:
                    yield conn
            except sqlalchemy.exc.SQLAlchemyError as exc:
                raise HistoryError(f"cannot read the run history {self.label}: {first_line(exc)}") from exc
            return
        if not self.path.is_file():
            yield None
            return
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS)) as db:
                db.execute("BEGIN")
                yield db
        except sqlite3.Error as exc:
            raise HistoryError(f"cannot read the run history {self.path}: {exc}") from exc


#: The columns of a history run, in the order of the file's table.
RUN_COLUMNS = ("run_id", "agent", "target", "status", "attempts", "max_attempts", "started_at", "finished_at",
               "duration_seconds", "sandbox_seconds", "coder", "error")


@dataclass(frozen=True)
class BucketSet:
    """Histogram bucket upper bounds (without +Inf) for each derived histogram."""

    attempts: tuple[float, ...]
    run_seconds: tuple[float, ...]
    node_seconds: tuple[float, ...]
    sandbox_seconds: tuple[float, ...]
    warmup_seconds: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)


def _ensure_schema(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"history schema {version} is newer than this program's {SCHEMA_VERSION}")
    if 0 < version < SCHEMA_VERSION:
        for step in range(version, SCHEMA_VERSION):
            conn.executescript(_MIGRATIONS[step])
    if version < SCHEMA_VERSION:
        conn.executescript(_SCHEMA)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _insert(conn: AnyConnection, run: RunRecord, t: dict[str, str]) -> None:
    execute_many(conn, f"INSERT INTO {t['runs']} ({', '.join(RUN_COLUMNS)}) "
                   f"VALUES ({', '.join(':' + c for c in RUN_COLUMNS)})",
             [{c: getattr(run, c) for c in RUN_COLUMNS}])
    execute_many(conn, f"INSERT INTO {t['failures']} (run_id, attempt, reason, retried) VALUES (:r, :a, :k, :t)",
             [{"r": run.run_id, "a": i, "k": kind, "t": int(i < run.attempts)}
              for i, kind in enumerate(run.failures, start=1)])
    execute_many(conn, f"INSERT INTO {t['nodes']} (run_id, node, attempt, outcome, duration_seconds) "
                   "VALUES (:r, :n, :a, :o, :s)",
             [{"r": run.run_id, "n": n.node, "a": n.attempt, "o": n.outcome, "s": n.seconds} for n in run.nodes])
    execute_many(conn, f"INSERT INTO {t['sandbox']} (run_id, image, image_ref, outcome, duration_seconds, exit_code, "
                   "attempt, pool, warmup_seconds) VALUES (:r, :i, :ref, :o, :s, :x, :a, :p, :w)",
             [{"r": run.run_id, "i": s.image, "ref": s.image_ref, "o": s.outcome, "s": s.seconds, "x": s.exit_code,
               "a": s.attempt, "p": s.pool, "w": s.warmup_seconds} for s in run.sandbox])
    execute_many(conn, f"INSERT INTO {t['infra']} (run_id, image, reason) VALUES (:r, :i, :k)",
             [{"r": run.run_id, "i": s.image, "k": reason} for s in run.sandbox for reason in s.infra_retries])


def _version(conn: AnyConnection) -> int:
    """The file's schema version (a read-only reader cannot migrate); the store's is current."""
    if isinstance(conn, sqlite3.Connection):
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    return SCHEMA_VERSION


def _aggregate(conn: AnyConnection, buckets: BucketSet, t: dict[str, str]) -> HistorySnapshot:
    snap = HistorySnapshot()
    version = _version(conn)
    if version == 0:
        return snap
    runs, failures, nodes, sandbox = t["runs"], t["failures"], t["nodes"], t["sandbox"]
    snap.runs = _counts(conn, f"SELECT agent, target, status, COUNT(*) FROM {runs} GROUP BY 1, 2, 3")
    snap.retries = _counts(conn, f"SELECT r.agent, r.target, f.reason, COUNT(*) FROM {failures} f "
                                 f"JOIN {runs} r USING (run_id) WHERE f.retried = 1 GROUP BY 1, 2, 3")
    snap.sandbox_runs = _counts(conn, f"SELECT r.agent, r.target, s.image, s.outcome, COUNT(*) FROM "
                                      f"{sandbox} s JOIN {runs} r USING (run_id) GROUP BY 1, 2, 3, 4")
    if version >= 2:  # read-only readers cannot migrate
        _aggregate_pool(conn, buckets, snap, t)
    if version >= 3:
        snap.infra_retries = _counts(conn, f"SELECT image, reason, COUNT(*) FROM {t['infra']} GROUP BY 1, 2")
    snap.attempts = _histograms(conn, runs, ("agent", "target"), "attempts", buckets.attempts)
    snap.run_seconds = _histograms(conn, runs, ("agent", "target"), "duration_seconds", buckets.run_seconds)
    snap.node_seconds = _histograms(conn, f"{nodes} JOIN {runs} USING (run_id)", ("agent", "node"),
                                    f"{nodes}.duration_seconds", buckets.node_seconds)
    snap.sandbox_seconds = _histograms(conn, f"{sandbox} JOIN {runs} USING (run_id)",
                                       ("agent", "target", "image"), f"{sandbox}.duration_seconds",
                                       buckets.sandbox_seconds)
    found = rows(conn, f"SELECT agent, target, MAX(finished_at) FROM {runs} WHERE status = 'passed' GROUP BY 1, 2")
    snap.last_success = {(agent, target): float(ts) for agent, target, ts in found}
    return snap


def _aggregate_pool(conn: AnyConnection, buckets: BucketSet, snap: HistorySnapshot, t: dict[str, str]) -> None:
    snap.pool_requests = _counts(conn, f"SELECT r.agent, r.target, s.image, s.pool, COUNT(*) FROM "
                                       f"{t['sandbox']} s JOIN {t['runs']} r USING (run_id) "
                                       "WHERE s.pool IN ('hit', 'miss') GROUP BY 1, 2, 3, 4")
    snap.pool_warmup_seconds = _histograms(
        conn, f"{t['sandbox']} WHERE pool = 'hit'", ("image",), "warmup_seconds", buckets.warmup_seconds)


def _counts(conn: AnyConnection, sql: str) -> dict[tuple[str, ...], int]:
    return {tuple(row[:-1]): int(row[-1]) for row in rows(conn, sql)}


def _histograms(
    conn: AnyConnection, source: str, groups: tuple[str, ...], value: str, bounds: tuple[float, ...]
) -> dict[tuple[str, ...], Histogram]:
    # Only constants of this module are formatted into the SQL; no user input reaches it.
    columns = ", ".join(groups)
    le = "".join(f", SUM(CASE WHEN {value} <= {float(b)!r} THEN 1 ELSE 0 END)" for b in bounds)
    sql = f"SELECT {columns}, COUNT(*), COALESCE(SUM({value}), 0.0){le} FROM {source} GROUP BY {columns}"
    result = {}
    for row in rows(conn, sql):
        key, (count, total, *cumulative) = tuple(row[: len(groups)]), row[len(groups):]
        result[key] = Histogram(bounds, tuple(int(c or 0) for c in cumulative), int(count), float(total))
    return result
