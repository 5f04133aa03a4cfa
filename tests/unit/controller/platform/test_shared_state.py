"""Issue 34: the run history and the lessons in the store's tables, and a service run's hand-off of
both through its folder (the PostgreSQL store's own tests are in tests/integration/store)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from sqlalchemy import Engine, create_engine

from agents.lessons import (
    GIVEN_FILE,
    HANDOFF_FILE,
    ExecutionHistory,
    FailedAttempt,
    HandoffLessons,
    Lesson,
    RunOutcome,
    give_lessons,
    open_lessons,
)
from agents.ports.config import AgentConfig
from controller.platform.observability.handoff import HANDOFF_FILE as HISTORY_HANDOFF
from controller.platform.observability.handoff import HandoffHistory
from controller.platform.observability.history import HistoryStore
from controller.platform.observability.recorder import run_history_of
from controller.platform.settings import Settings
from controller.platform.shared_state import hands_off, keep_records, lessons_of, run_history
from controller.platform.store.sqlite import SqliteStore
from tests.unit.agents.lessons_contract import ContractLessons
from tests.unit.controller.platform.observability.history_contract import ContractRecording
from tests.unit.controller.platform.observability.records import run


@pytest.fixture
def state_engine(tmp_path: Path) -> Iterator[Engine]:
    """The engine of a store with revision 0004's tables (here SQLite's; PostgreSQL's in tests/integration)."""
    store = SqliteStore(tmp_path / "runs" / "service.sqlite")
    yield store.engine
    store.engine.dispose()


@pytest.fixture
def store(state_engine: Engine) -> HistoryStore:
    return HistoryStore.in_store(state_engine)


@pytest.fixture
def reopen(state_engine: Engine):  # noqa: ANN201
    return lambda: HistoryStore.in_store(state_engine)


@pytest.fixture
def history(state_engine: Engine) -> ExecutionHistory:
    return ExecutionHistory.in_store(state_engine)


class TestHistoryInTheStore(ContractRecording):
    """The history's statements on the store's ``history_*`` tables."""


class TestLessonsInTheStore(ContractLessons):
    """The lessons' statements on the store's ``lesson_*`` tables."""


def lesson_run(run_id: str = "r1", *lessons: str) -> RunOutcome:
    return RunOutcome("bank_parser", "icici", run_id, "offline", "failed", 1,
                     (FailedAttempt(1, "mismatch", "short", lessons),))


class TestHandoff:
    def test_a_runs_history_is_kept_once_and_its_file_removed(self, tmp_path: Path, store, history):
        """What a run's child left in its folder goes into the store; keeping it again adds nothing."""
        record = run("failed", attempts=2, failures=("mismatch", "timeout"))
        HandoffHistory(tmp_path).record(record)
        HandoffLessons(tmp_path).record(lesson_run(record.run_id, "too short"))
        keep_records(store, history, tmp_path)
        assert not (tmp_path / HISTORY_HANDOFF).exists() and not (tmp_path / HANDOFF_FILE).exists()
        HandoffHistory(tmp_path).record(record)  # a service that died after keeping it, before removing it
        HandoffLessons(tmp_path).record(lesson_run(record.run_id, "too short"))
        keep_records(store, history, tmp_path)
        assert [row["run_id"] for row in store.read_runs()] == [record.run_id]
        assert store.target_failures("bank_parser", "icici") == {"mismatch": 1, "timeout": 1}
        assert [(lesson.text, lesson.seen) for lesson in history.lessons("bank_parser", "icici")] == [("too short", 1)]

    def test_a_malformed_record_is_not_kept(self, tmp_path: Path, store, history):
        """A hand-off that is not a valid record is logged and left for a person; nothing is recorded."""
        (tmp_path / HISTORY_HANDOFF).write_text('{"run_id": "r1", "status": "maybe"}')
        (tmp_path / HANDOFF_FILE).write_text("not json")
        with structlog.testing.capture_logs() as logs:
            keep_records(store, history, tmp_path)
        assert {entry["event"] for entry in logs} == {"history.handoff_failed", "lessons.handoff_failed"}
        assert store.count_runs() == 0 and history.outcomes("bank_parser", "icici") == {}
        assert (tmp_path / HISTORY_HANDOFF).exists()

    def test_lessons_the_store_cannot_take_stay_in_the_folder(self, tmp_path: Path, store):
        """A store that fails (here one without the lesson tables) leaves the hand-off for a later keep."""
        bare = create_engine(f"sqlite:///{tmp_path / 'bare.db'}")
        HandoffLessons(tmp_path).record(lesson_run("r1", "too short"))
        with structlog.testing.capture_logs() as logs:
            keep_records(store, ExecutionHistory.in_store(bare), tmp_path)
        bare.dispose()
        assert [entry["event"] for entry in logs] == ["lessons.handoff_failed"]
        assert (tmp_path / HANDOFF_FILE).is_file()

    def test_a_run_reads_only_the_lessons_given_for_its_agent_and_target(self, tmp_path: Path):
        """The given lessons are the run's; another agent or target gets none; none given reads as none."""
        handoff = HandoffLessons(tmp_path)
        assert handoff.lessons("bank_parser", "icici") == []
        give_lessons(tmp_path, "bank_parser", "icici", [Lesson("too short", "mismatch", 2, 5.0, "attempt 2")])
        assert handoff.lessons("bank_parser", "icici") == [Lesson("too short", "mismatch", 2, 5.0, "attempt 2")]
        assert handoff.lessons("bank_parser", "sbi") == [] and handoff.lessons("blueprint", "icici") == []
        assert (tmp_path / GIVEN_FILE).is_file()

    def test_a_run_with_a_handoff_folder_writes_no_sqlite_file(self, tmp_path: Path):
        """A service run on PostgreSQL records into its folder, as JSON; the CLI into the files."""
        runs = tmp_path / "runs"
        handed = Settings(runs_dir=runs, handoff_dir=tmp_path)
        assert isinstance(run_history_of(handed), HandoffHistory)
        assert isinstance(open_lessons(AgentConfig(runs_dir=runs, handoff_dir=tmp_path)), HandoffLessons)
        run_history_of(handed).record(run())
        open_lessons(AgentConfig(runs_dir=runs, handoff_dir=tmp_path)).record(lesson_run("r9", "x"))
        assert sorted(p.name for p in tmp_path.rglob("*")) == sorted([HANDOFF_FILE, HISTORY_HANDOFF])
        cli = open_lessons(AgentConfig(runs_dir=runs))
        assert isinstance(cli, ExecutionHistory) and cli.path == runs / "lessons.sqlite"


class TestWhereItIs:
    def test_a_service_on_sqlite_keeps_the_files(self, tmp_path: Path):
        """On SQLite nothing is handed off: the history and lessons stay in their files, as before."""
        settings = Settings(runs_dir=tmp_path / "runs")
        sqlite_store = SqliteStore(tmp_path / "runs" / "service.sqlite")
        assert not hands_off(sqlite_store) and not hands_off(None)
        assert run_history(settings, sqlite_store).path == tmp_path / "runs" / "history.sqlite"
        assert lessons_of(settings, sqlite_store).path == tmp_path / "runs" / "lessons.sqlite"
