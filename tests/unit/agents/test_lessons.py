"""The execution history (seed 003): what failed, how, what fixed it, per agent and target;
read back as distinct lessons, most recent first."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import structlog

from agents.lessons import (
    ExecutionHistory,
    FailedAttempt,
    Forgotten,
    Lesson,
    LessonsUnreadable,
    RunOutcome,
    lessons_markdown,
    render_lessons,
)
from tests.unit.agents.lessons_contract import ContractLessons, record


@pytest.fixture
def history(tmp_path: Path) -> ExecutionHistory:
    return ExecutionHistory(tmp_path / "lessons.sqlite")


class TestHistory(ContractLessons):
    def test_no_history_no_lessons(self, tmp_path: Path):
        """A target never run has no lessons, and reading creates no file."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        assert history.lessons("bank_parser", "icici") == []
        assert not history.path.exists()

    def test_failures_without_lessons_are_recorded_but_not_taught(self, tmp_path: Path):
        """An llm_error has no lesson: it is in the history, not in the prompt."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        history.record(RunOutcome("bank_parser", "icici", "r1", "openai:m", "failed", 1,
                                 (FailedAttempt(1, "llm_error", "timeout after 4 request(s)"),)))
        assert history.lessons("bank_parser", "icici") == []
        with sqlite3.connect(history.path) as db:
            assert db.execute("SELECT kind, lesson FROM failures").fetchall() == [("llm_error", None)]

    def test_a_broken_file_does_not_stop_a_run(self, tmp_path: Path):
        """A corrupt history is logged as a warning; lessons are empty and recording does not raise."""
        path = tmp_path / "lessons.sqlite"
        path.write_bytes(b"this is not a database" * 100)
        history = ExecutionHistory(path)
        with structlog.testing.capture_logs() as logs:
            assert history.lessons("bank_parser", "icici") == []
            record(history, "r1", "x")
        assert {entry["event"] for entry in logs} == {"lessons.read_failed", "lessons.record_failed"}


class TestRendering:
    def test_lesson_lines(self):
        """Each lesson is a bullet with its kind, how often it was seen and what fixed it."""
        lesson = Lesson("'Credit Amt' and 'Debit Amt' swapped", "mismatch", 2, 0.0, "attempt 2 (x)")
        assert render_lessons([lesson]) == \
            "- 'Credit Amt' and 'Debit Amt' swapped (mismatch, seen 2 times; fixed later by attempt 2 (x))"

    def test_markdown_artefact(self):
        """lessons.md says so when there is nothing to learn from yet."""
        assert "None yet" in lessons_markdown("bank_parser", "icici", [])
        assert "- x (mismatch, seen once)" in lessons_markdown("bank_parser", "icici", [Lesson("x", "mismatch", 1, 0)])


class TestPatternsAndForget:
    """What GET /v1/lessons and DELETE /v1/history read and delete."""

    def test_forget_without_a_file_creates_none(self, tmp_path: Path):
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        assert history.forget("icici") == Forgotten(0, 0) and not history.path.exists()

    def test_an_unreadable_file_is_an_environment_fault(self, tmp_path: Path):
        path = tmp_path / "lessons.sqlite"
        path.write_bytes(b"not a database" * 100)
        with pytest.raises(LessonsUnreadable, match="cannot read the lessons file"):
            ExecutionHistory(path).patterns("bank_parser", "icici")
