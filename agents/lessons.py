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
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from agents.ports.errors import EnvironmentFault

LOGGER = "sandloop.lessons"

LESSONS_FILE = "lessons.sqlite"
SCHEMA_VERSION = 1
DEFAULT_LIMIT = 8
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
class RunRecord:
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
    """The lessons store: SQLite at ``path``, opened per operation (safe across processes)."""

    path: Path
    timeout_seconds: float = 10.0
    _ready: bool = field(default=False, repr=False)

    def record(self, run: RunRecord) -> None:
        """Keep ``run`` and its failures; log a warning (and carry on) if the file fails."""
        try:
            with self._connect() as db:
                self._insert(db, run)
        except sqlite3.Error as exc:
            structlog.get_logger(LOGGER).warning("lessons.record_failed", path=str(self.path), error=str(exc))

    def lessons(self, agent: str, target: str, limit: int = DEFAULT_LIMIT) -> list[Lesson]:
        """Distinct lessons of earlier runs of ``agent`` on ``target``, most recent first."""
        if not self.path.exists():
            return []
        try:
            with self._connect() as db:
                rows = db.execute(_LESSONS_QUERY, (agent, target, limit)).fetchall()
        except sqlite3.Error as exc:
            structlog.get_logger(LOGGER).warning("lessons.read_failed", path=str(self.path), error=str(exc))
            return []
        return [Lesson(text, kind, seen, last, fixed_by or "") for text, kind, seen, last, fixed_by in rows]

    def runs(self, agent: str, target: str) -> list[tuple[str, str, int, str]]:
        """(run_id, status, attempts, fixed_by) of every recorded run, oldest first."""
        if not self.path.exists():
            return []
        with self._connect() as db:
            return db.execute("SELECT run_id, status, attempts, fixed_by FROM runs WHERE agent = ? AND target = ?"
                              " ORDER BY recorded_at, rowid", (agent, target)).fetchall()

    def outcomes(self, agent: str, target: str) -> dict[str, int]:
        """Recorded runs of ``agent`` on ``target`` per status.

        Raises:
            LessonsUnreadable: the file cannot be read.
        """
        rows = self._read("SELECT status, COUNT(*) FROM runs WHERE agent = ? AND target = ? GROUP BY status",
                          (agent, target))
        return {str(status): int(count) for status, count in rows}

    def patterns(self, agent: str, target: str) -> list[FailurePattern]:
        """Failures of ``agent`` on ``target`` counted per kind, the most frequent first.

        Raises:
            LessonsUnreadable: the file cannot be read.
        """
        rows = self._read(_PATTERNS_QUERY, (agent, target))
        return [FailurePattern(str(k), int(a), int(r), float(last), int(fixed)) for k, a, r, last, fixed in rows]

    def forget(self, target: str, agent: str | None = None) -> Forgotten:
        """Delete every run and failure recorded for ``target`` (of ``agent`` only, if given).

        Raises:
            LessonsUnreadable: the file cannot be written.
        """
        if not self.path.exists():
            return Forgotten(0, 0)
        where, params = ("target = ? AND agent = ?", (target, agent)) if agent is not None else ("target = ?", (target,))
        try:
            with self._connect() as db:
                failures = db.execute(f"DELETE FROM failures WHERE {where}", params).rowcount
                runs = db.execute(f"DELETE FROM runs WHERE {where}", params).rowcount
        except sqlite3.Error as exc:
            raise LessonsUnreadable(f"cannot change the lessons file {self.path.name}: {exc}") from exc
        return Forgotten(runs, failures)

    def _read(self, sql: str, params: tuple[str, ...]) -> list[tuple[Any, ...]]:
        if not self.path.exists():
            return []
        try:
            with self._connect() as db:
                return db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise LessonsUnreadable(f"cannot read the lessons file {self.path.name}: {exc}") from exc

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
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

    @staticmethod
    def _insert(db: sqlite3.Connection, run: RunRecord) -> None:
        now = time.time()
        db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (run.run_id, run.agent, run.target, run.coder, run.status, run.attempts, run.fixed_by, now))
        fixed = 1 if run.fixed_by else 0
        for failure in run.failures:
            for lesson in failure.lessons or (None,):
                db.execute(
                    "INSERT INTO failures (run_id, agent, target, attempt, kind, summary, lesson, fixed, recorded_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run.run_id, run.agent, run.target, failure.attempt, failure.kind, failure.summary[:500],
                     lesson, fixed, now))


_LESSONS_QUERY = """
SELECT f.lesson, MAX(f.kind), COUNT(*), MAX(f.recorded_at),
       (SELECT r.fixed_by FROM failures g JOIN runs r ON r.run_id = g.run_id
         WHERE g.agent = f.agent AND g.target = f.target AND g.lesson = f.lesson AND g.fixed = 1
         ORDER BY g.recorded_at DESC LIMIT 1)
  FROM failures f
 WHERE f.agent = ? AND f.target = ? AND f.lesson IS NOT NULL
 GROUP BY f.lesson
 ORDER BY MAX(f.recorded_at) DESC, MAX(f.id) DESC
 LIMIT ?
"""


_PATTERNS_QUERY = """
SELECT kind, COUNT(DISTINCT run_id || ':' || attempt), COUNT(DISTINCT run_id), MAX(recorded_at),
       COUNT(DISTINCT CASE WHEN fixed = 1 THEN run_id END)
  FROM failures
 WHERE agent = ? AND target = ?
 GROUP BY kind
 ORDER BY 2 DESC, kind
"""


def render_lessons(lessons: Sequence[Lesson]) -> str:
    """The lessons as Markdown bullets ('' when there are none)."""
    return "\n".join(lesson.line() for lesson in lessons)


def lessons_markdown(agent: str, target: str, lessons: Sequence[Lesson]) -> str:
    """The run artefact ``lessons.md``: what this run's coder was told from earlier runs."""
    head = f"# Lessons from earlier runs of {agent} on {target}\n\n"
    if not lessons:
        return head + "None yet: no earlier run on this target has failed.\n"
    return head + "Given to the coder before the first attempt:\n\n" + render_lessons(lessons) + "\n"
