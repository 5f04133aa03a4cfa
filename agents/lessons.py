"""The execution history that agents learn from (seed 003's memory and meta-learning).

Every run records, per agent and target, what each failed attempt did wrong (its kind,
its summary, and a *lesson*: one sentence a coder can act on, such as "output had 2
header rows" or "'Debit Amt' and 'Credit Amt' swapped") and whether a later attempt of
the same run fixed it. Before the next run on that target, :meth:`ExecutionHistory.lessons`
returns the distinct lessons, most recent first, for the coder's prompt and the run's
``lessons.md``.

Storage: one SQLite file, ``<runs_dir>/lessons.sqlite`` by default. It is separate from
the run-level metrics history (``history.sqlite``, controller/platform/observability): this one
is read back into prompts, that one into dashboards. The history is an aid, not a
requirement: when the file cannot be read or written, a warning is logged and the run
goes on without it.

A service on PostgreSQL keeps the lessons in its store instead (:meth:`ExecutionHistory.in_store`,
tables ``lesson_runs``/``lesson_failures`` of revision 0004; the same statements, through
:mod:`agents.sqlrows`), and its runs' children, which never get the store's DSN, hand theirs
over through the run folder (:class:`HandoffLessons`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy.exc
import structlog
from pydantic import TypeAdapter
from sqlalchemy import Engine

from agents.ports.config import AgentConfig
from agents.ports.errors import EnvironmentFault, first_line
from agents.sqlrows import AnyConnection, execute, rows

LOGGER = "sandloop.lessons"

LESSONS_FILE = "lessons.sqlite"
SCHEMA_VERSION = 1
DEFAULT_LIMIT = 8
#: The tables' names in the file, and in the PostgreSQL store (revision 0004).
FILE_TABLES = {"runs": "runs", "failures": "failures"}
STORE_TABLES = {"runs": "lesson_runs", "failures": "lesson_failures"}
#: What a database error is, whichever the lessons are on.
DATABASE_ERRORS = (sqlite3.Error, sqlalchemy.exc.SQLAlchemyError)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, target TEXT NOT NULL, coder TEXT NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL, fixed_by TEXT NOT NULL, recorded_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(run_id), agent TEXT NOT NULL,
    target TEXT NOT NULL, attempt INTEGER NOT NULL, kind TEXT NOT NULL, summary TEXT NOT NULL,
    lesson TEXT, fixed INTEGER NOT NULL, recorded_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_by_target ON failures (agent, target, recorded_at);
"""


@dataclass(frozen=True)
class FailedAttempt:
    """One failed attempt of a run: how it failed, and the lessons drawn from it."""

    attempt: int
    kind: str
    summary: str
    lessons: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunOutcome:
    """What one run of an agent on a target did (what failed, how, what fixed it)."""

    agent: str
    target: str
    run_id: str
    coder: str
    status: str
    attempts: int
    failures: tuple[FailedAttempt, ...] = ()
    fixed_by: str = ""
    """How the run ended well, e.g. 'attempt 2 (openai:gpt-4o-mini/fix-mismatch)'; '' if it did not."""


@dataclass(frozen=True)
class Lesson:
    """A distinct lesson for a target: how often it was seen and whether it was ever fixed."""

    text: str
    kind: str
    seen: int
    last_seen: float
    fixed_by: str = ""

    def line(self) -> str:
        """The lesson as one Markdown bullet."""
        times = "once" if self.seen == 1 else f"{self.seen} times"
        fixed = f"; fixed later by {self.fixed_by}" if self.fixed_by else ""
        return f"- {self.text} ({self.kind}, seen {times}{fixed})"


@dataclass(frozen=True)
class FailurePattern:
    """How often failures of one kind were seen on a target (seed 003's failure_patterns)."""

    kind: str
    attempts: int
    """Failed attempts of this kind."""
    runs: int
    """Runs that had at least one."""
    last_seen: float
    fixed: int
    """Runs with this kind that a later attempt of theirs fixed."""


@dataclass(frozen=True)
class Forgotten:
    """What :meth:`ExecutionHistory.forget` deleted."""

    runs: int
    failures: int


class LessonsUnreadable(EnvironmentFault):
    """The lessons file cannot be read or written (locked, corrupt, newer schema)."""


@dataclass
class ExecutionHistory:
    """The lessons store: SQLite at ``path``, opened per operation (safe across processes), or the
    service's PostgreSQL store (``engine``)."""

    path: Path
    timeout_seconds: float = 10.0
    engine: Engine | None = None
    _ready: bool = field(default=False, repr=False)

    @classmethod
    def in_store(cls, engine: Engine) -> ExecutionHistory:
        """The lessons in the service's PostgreSQL store (its ``lesson_*`` tables)."""
        return cls(Path("postgresql"), engine=engine)

    @property
    def _t(self) -> dict[str, str]:
        return FILE_TABLES if self.engine is None else STORE_TABLES

    def _exists(self) -> bool:
        return self.engine is not None or self.path.exists()

    def record(self, run: RunOutcome) -> None:
        """Keep ``run`` and its failures; log a warning (and carry on) if the file fails."""
        try:
            self.keep(run)
        except LessonsUnreadable as exc:
            structlog.get_logger(LOGGER).warning("lessons.record_failed", path=str(self.path), error=exc.message)

    def keep(self, run: RunOutcome) -> None:
        """Keep ``run`` and its failures (a hand-off is removed only once this succeeded).

        Raises:
            LessonsUnreadable: the file or the store cannot be written.
        """
        try:
            with self._connect() as db:
                self._insert(db, run)
        except DATABASE_ERRORS as exc:
            raise LessonsUnreadable(f"cannot change the lessons {self._name}: {first_line(exc)}") from exc

    def lessons(self, agent: str, target: str, limit: int = DEFAULT_LIMIT) -> list[Lesson]:
        """Distinct lessons of earlier runs of ``agent`` on ``target``, most recent first."""
        if not self._exists():
            return []
        try:
            with self._connect() as db:
                found = rows(db, _LESSONS_QUERY.format(**self._t), {"agent": agent, "target": target, "limit": limit})
        except DATABASE_ERRORS as exc:
            structlog.get_logger(LOGGER).warning("lessons.read_failed", path=str(self.path), error=str(exc))
            return []
        return [Lesson(text, kind, int(seen), float(last), fixed_by or "")
                for text, kind, seen, last, fixed_by in found]

    def runs(self, agent: str, target: str) -> list[tuple[str, str, int, str]]:
        """(run_id, status, attempts, fixed_by) of every recorded run, oldest first."""
        if not self._exists():
            return []
        with self._connect() as db:
            found = rows(db, f"SELECT run_id, status, attempts, fixed_by FROM {self._t['runs']} WHERE agent = :agent "
                             "AND target = :target ORDER BY recorded_at, run_id", {"agent": agent, "target": target})
        return [(str(r), str(s), int(a), str(f)) for r, s, a, f in found]

    def outcomes(self, agent: str, target: str) -> dict[str, int]:
        """Recorded runs of ``agent`` on ``target`` per status.

        Raises:
            LessonsUnreadable: the file cannot be read.
        """
        found = self._read(f"SELECT status, COUNT(*) FROM {self._t['runs']} WHERE agent = :agent AND target = :target"
                           " GROUP BY status", {"agent": agent, "target": target})
        return {str(status): int(count) for status, count in found}

    def patterns(self, agent: str, target: str) -> list[FailurePattern]:
        """Failures of ``agent`` on ``target`` counted per kind, the most frequent first.

        Raises:
            LessonsUnreadable: the file cannot be read.
        """
        found = self._read(_PATTERNS_QUERY.format(**self._t), {"agent": agent, "target": target})
        return [FailurePattern(str(k), int(a), int(r), float(last), int(fixed)) for k, a, r, last, fixed in found]

    def forget(self, target: str, agent: str | None = None) -> Forgotten:
        """Delete every run and failure recorded for ``target`` (of ``agent`` only, if given).

        Raises:
            LessonsUnreadable: the file cannot be written.
        """
        if not self._exists():
            return Forgotten(0, 0)
        where = "target = :target" + (" AND agent = :agent" if agent is not None else "")
        params = {"target": target, "agent": agent}
        try:
            with self._connect() as db:
                failures = execute(db, f"DELETE FROM {self._t['failures']} WHERE {where}", params)
                runs = execute(db, f"DELETE FROM {self._t['runs']} WHERE {where}", params)
        except DATABASE_ERRORS as exc:
            raise LessonsUnreadable(f"cannot change the lessons {self._name}: {first_line(exc)}") from exc
        return Forgotten(runs, failures)

    @property
    def _name(self) -> str:
        return "in the run store (PostgreSQL)" if self.engine is not None else f"file {self.path.name}"

    def _read(self, sql: str, params: dict[str, str]) -> list[tuple[Any, ...]]:
        if not self._exists():
            return []
        try:
            with self._connect() as db:
                return rows(db, sql, params)
        except DATABASE_ERRORS as exc:
            raise LessonsUnreadable(f"cannot read the lessons {self._name}: {first_line(exc)}") from exc

    @contextmanager
    def _connect(self) -> Iterator[AnyConnection]:
        if self.engine is not None:
            with self.engine.begin() as conn:
                yield conn
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=self.timeout_seconds)
        try:
            if not self._ready:
                self._migrate(db)
            with db:
                yield db
        finally:
            db.close()

    def _migrate(self, db: sqlite3.Connection) -> None:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"{self.path} has schema {version}, newer than this sandloop's")
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._ready = True

    def _insert(self, db: AnyConnection, run: RunOutcome) -> None:
        now = time.time()
        execute(db, f"INSERT INTO {self._t['runs']} (run_id, agent, target, coder, status, attempts, fixed_by, "
                "recorded_at) VALUES (:run_id, :agent, :target, :coder, :status, :attempts, :fixed_by, :now) "
                "ON CONFLICT (run_id) DO UPDATE SET agent = excluded.agent, target = excluded.target, "
                "coder = excluded.coder, status = excluded.status, attempts = excluded.attempts, "
                "fixed_by = excluded.fixed_by, recorded_at = excluded.recorded_at",
            {"run_id": run.run_id, "agent": run.agent, "target": run.target, "coder": run.coder,
             "status": run.status, "attempts": run.attempts, "fixed_by": run.fixed_by, "now": now})
        # Recording a run again (a hand-off kept twice) replaces its failures: none is counted twice.
        execute(db, f"DELETE FROM {self._t['failures']} WHERE run_id = :run_id", {"run_id": run.run_id})
        fixed = 1 if run.fixed_by else 0
        for failure in run.failures:
            for lesson in failure.lessons or (None,):
                execute(db, f"INSERT INTO {self._t['failures']} "
                        "(run_id, agent, target, attempt, kind, summary, lesson, "
                        "fixed, recorded_at) VALUES (:run_id, :agent, :target, :attempt, :kind, :summary, :lesson, "
                        ":fixed, :now)",
                    {"run_id": run.run_id, "agent": run.agent, "target": run.target, "attempt": failure.attempt,
                     "kind": failure.kind, "summary": failure.summary[:500], "lesson": lesson, "fixed": fixed,
                     "now": now})


_LESSONS_QUERY = """
SELECT f.lesson, MAX(f.kind), COUNT(*), MAX(f.recorded_at),
       (SELECT r.fixed_by FROM {failures} g JOIN {runs} r ON r.run_id = g.run_id
         WHERE g.agent = :agent AND g.target = :target AND g.lesson = f.lesson AND g.fixed = 1
         ORDER BY g.recorded_at DESC LIMIT 1)
  FROM {failures} f
 WHERE f.agent = :agent AND f.target = :target AND f.lesson IS NOT NULL
 GROUP BY f.lesson
 ORDER BY MAX(f.recorded_at) DESC, MAX(f.id) DESC
 LIMIT :limit
"""


_PATTERNS_QUERY = """
SELECT kind, COUNT(DISTINCT run_id || ':' || attempt), COUNT(DISTINCT run_id), MAX(recorded_at),
       COUNT(DISTINCT CASE WHEN fixed = 1 THEN run_id END)
  FROM {failures}
 WHERE agent = :agent AND target = :target
 GROUP BY kind
 ORDER BY 2 DESC, kind
"""


class LessonBook(Protocol):
    """What a run does with lessons: read them before it starts, record its own when it ends."""

    def lessons(self, agent: str, target: str, limit: int = DEFAULT_LIMIT) -> list[Lesson]:
        """Distinct lessons of earlier runs of ``agent`` on ``target``, most recent first."""
        ...

    def record(self, run: RunOutcome) -> None:
        """Keep what ``run`` learned."""
        ...


#: The lessons a service on PostgreSQL gives its run before it starts (in the run's folder).
GIVEN_FILE = "lessons.given.json"
#: What such a run learned, for the service to keep in its store when the run ends.
HANDOFF_FILE = "lessons.handoff.json"
#: The largest hand-off file read (a run's lessons are a few KiB).
HANDOFF_LIMIT = 4 * 1024 * 1024


@dataclass(frozen=True)
class GivenLessons:
    """The contents of :data:`GIVEN_FILE`: the lessons of one agent on one target."""

    agent: str
    target: str
    lessons: tuple[Lesson, ...] = ()


_GIVEN = TypeAdapter(GivenLessons)
RECORD = TypeAdapter(RunOutcome)


@dataclass(frozen=True)
class HandoffLessons:
    """The lessons of a service's run on PostgreSQL, through its own folder (issue 34).

    The run never gets the store's DSN (no secret enters a run's process); the service writes
    the lessons it is given (:data:`GIVEN_FILE`) before starting it and keeps what it records
    (:data:`HANDOFF_FILE`) in the store when it ends.
    """

    folder: Path

    def lessons(self, agent: str, target: str, limit: int = DEFAULT_LIMIT) -> list[Lesson]:
        """The given lessons, if they are ``agent``'s on ``target`` (none otherwise)."""
        path = self.folder / GIVEN_FILE
        try:
            given = _GIVEN.validate_json(read_bounded(path))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            structlog.get_logger(LOGGER).warning("lessons.read_failed", path=str(path), error=str(exc)[:200])
            return []
        return list(given.lessons[:limit]) if (given.agent, given.target) == (agent, target) else []

    def record(self, run: RunOutcome) -> None:
        """Leave ``run`` in the folder for the service; log a warning (and carry on) if it cannot."""
        path = self.folder / HANDOFF_FILE
        try:
            path.write_bytes(RECORD.dump_json(run))
        except OSError as exc:
            structlog.get_logger(LOGGER).warning("lessons.record_failed", path=str(path), error=str(exc))


def read_bounded(path: Path) -> bytes:
    """A hand-off file's bytes; ValueError past :data:`HANDOFF_LIMIT`."""
    with path.open("rb") as handle:
        data = handle.read(HANDOFF_LIMIT + 1)
    if len(data) > HANDOFF_LIMIT:
        raise ValueError(f"{path.name} is larger than {HANDOFF_LIMIT} bytes")
    return data


def give_lessons(folder: Path, agent: str, target: str, lessons: Sequence[Lesson]) -> None:
    """Write what :class:`HandoffLessons` in ``folder`` gives a run of ``agent`` on ``target``."""
    (folder / GIVEN_FILE).write_bytes(_GIVEN.dump_json(GivenLessons(agent, target, tuple(lessons))))


def open_lessons(config: AgentConfig) -> LessonBook:
    """The lessons a run reads and records: its folder's hand-off, else ``<runs_dir>/lessons.sqlite``."""
    if config.handoff_dir is not None:
        return HandoffLessons(config.handoff_dir)
    return ExecutionHistory(config.runs_dir / LESSONS_FILE)


def render_lessons(lessons: Sequence[Lesson]) -> str:
    """The lessons as Markdown bullets ('' when there are none)."""
    return "\n".join(lesson.line() for lesson in lessons)


def lessons_markdown(agent: str, target: str, lessons: Sequence[Lesson]) -> str:
    """The run artefact ``lessons.md``: what this run's coder was told from earlier runs."""
    head = f"# Lessons from earlier runs of {agent} on {target}\n\n"
    if not lessons:
        return head + "None yet: no earlier run on this target has failed.\n"
    return head + "Given to the coder before the first attempt:\n\n" + render_lessons(lessons) + "\n"
