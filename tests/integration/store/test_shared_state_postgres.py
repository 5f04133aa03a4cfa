"""Issue 34 on a real PostgreSQL: the run history and the lessons in the store (the same contracts
as the SQLite file), and a service run's hand-off kept in it, with no SQLite file written."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine

from agents.lessons import ExecutionHistory, HandoffLessons, Lesson
from controller.platform.observability.handoff import HandoffHistory
from controller.platform.observability.history import HistoryStore
from controller.platform.observability.metrics import BUCKETS
from controller.platform.settings import ServiceSettings, Settings
from controller.platform.shared_state import (
    adopt_files,
    give_run_lessons,
    hands_off,
    keep_handoff,
    lessons_of,
    run_history,
)
from controller.platform.store.postgres import PostgresStore
from tests.unit.agents.lessons_contract import ContractLessons
from tests.unit.controller.platform.observability.history_contract import ContractRecording
from tests.unit.controller.platform.observability.records import run
from tests.unit.controller.platform.test_shared_state import history, lesson_run, reopen, store  # noqa: F401


@pytest.fixture
def pg_store(postgres_dsn: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(postgres_dsn)
    yield opened
    opened.engine.dispose()


@pytest.fixture
def state_engine(pg_store: PostgresStore) -> Engine:
    return pg_store.engine


class TestHistoryOnPostgres(ContractRecording):
    """The history's statements on PostgreSQL's ``history_*`` tables."""


class TestLessonsOnPostgres(ContractLessons):
    """The lessons' statements on PostgreSQL's ``lesson_*`` tables."""


class TestServiceRuns:
    def test_a_run_is_given_its_lessons_and_its_records_are_kept_without_sqlite(self, tmp_path: Path,
                                                                               pg_store: PostgresStore,
                                                                               postgres_dsn: str):
        """Given the store's lessons before it starts, a run hands back its own; the store keeps both, and
        no SQLite file appears under the runs folder."""
        runs = tmp_path / "runs"
        settings = Settings(runs_dir=runs, service=ServiceSettings(store="postgres",
                                                                   postgres_dsn=SecretStr(postgres_dsn)))
        assert hands_off(pg_store)
        lessons_of(settings, pg_store).record(lesson_run("r0", "too short"))
        run_dir = runs / "r1"
        run_dir.mkdir(parents=True)
        give_run_lessons(settings, pg_store, run_dir, "bank_parser", "icici")
        child = HandoffLessons(run_dir)
        assert [lesson.text for lesson in child.lessons("bank_parser", "icici")] == ["too short"]
        record = run("passed")
        HandoffHistory(run_dir).record(record)
        child.record(lesson_run(record.run_id, "too short", "swapped columns"))
        keep_handoff(settings, pg_store, run_dir)
        assert [row["run_id"] for row in run_history(settings, pg_store).read_runs()] == [record.run_id]
        seen = {lesson.text: lesson.seen for lesson in lessons_of(settings, pg_store).lessons("bank_parser", "icici")}
        assert seen == {"too short": 2, "swapped columns": 1}
        assert [p for p in runs.rglob("*") if p.suffix in (".sqlite", ".db") or "sqlite" in p.name] == []

    def test_given_lessons_are_the_stores(self, tmp_path: Path, pg_store: PostgresStore, postgres_dsn: str):
        """What the run is given is exactly what the store's lessons say for its agent and target."""
        settings = Settings(runs_dir=tmp_path, service=ServiceSettings(store="postgres",
                                                                       postgres_dsn=SecretStr(postgres_dsn)))
        lessons_of(settings, pg_store).record(lesson_run("r0", "a"))
        give_run_lessons(settings, pg_store, tmp_path, "bank_parser", "icici")
        (given,) = HandoffLessons(tmp_path).lessons("bank_parser", "icici")
        assert isinstance(given, Lesson) and (given.text, given.kind, given.seen) == ("a", "mismatch", 1)


class TestAdoptingAnEarlierRelease:
    def test_the_files_rows_go_into_the_store_once(self, tmp_path: Path, pg_store: PostgresStore, postgres_dsn: str):
        """A service upgraded to PostgreSQL keeps the history and lessons its files held; starting again
        (or a second replica) copies nothing twice, and the files are kept renamed, never written."""
        runs = tmp_path / "runs"
        settings = Settings(runs_dir=runs, service=ServiceSettings(store="postgres",
                                                                   postgres_dsn=SecretStr(postgres_dsn)))
        old_history = HistoryStore(runs / "history.sqlite")
        records = [run("passed", failures=()), run("failed", attempts=2, failures=("mismatch", "timeout"))]
        for record in records:
            old_history.record(record)
        with sqlite3.connect(runs / "history.sqlite") as db:  # a release before the infra-retry table
            db.execute("DROP TABLE sandbox_infra_retries")
            db.execute("PRAGMA user_version = 2")
        old_lessons = ExecutionHistory(runs / "lessons.sqlite")
        old_lessons.record(lesson_run("r0", "too short", "swapped"))
        before = (old_history.read_runs(), old_history.snapshot(BUCKETS).sandbox_runs)
        adopt_files(settings, pg_store)
        adopt_files(settings, pg_store)
        kept = run_history(settings, pg_store)
        assert (kept.read_runs(), kept.snapshot(BUCKETS).sandbox_runs) == before
        assert kept.target_failures("bank_parser", "icici") == {"mismatch": 1, "timeout": 1}
        lessons = lessons_of(settings, pg_store).lessons("bank_parser", "icici")
        assert sorted((lesson.text, lesson.seen) for lesson in lessons) == [("swapped", 1), ("too short", 1)]
        assert sorted(p.name for p in runs.iterdir()) == ["history.sqlite.adopted", "lessons.sqlite.adopted"]
