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
    RunRecord,
    lessons_markdown,
    render_lessons,
)


def record(history: ExecutionHistory, run_id: str, *lessons: str, target: str = "icici",
           fixed_by: str = "", agent: str = "bank_parser") -> None:
    failures = tuple(FailedAttempt(i + 1, "mismatch", f"summary {i}", (text,)) for i, text in enumerate(lessons))
    history.record(RunRecord(agent, target, run_id, "openai:m", "passed" if fixed_by else "failed",
                             len(lessons) + bool(fixed_by), failures, fixed_by))


class TestHistory:
    def test_no_history_no_lessons(self, tmp_path: Path):
        """A target never run has no lessons, and reading creates no file."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        assert history.lessons("bank_parser", "icici") == []
        assert not history.path.exists()

    def test_lessons_are_distinct_and_counted(self, tmp_path: Path):
        """The same lesson from two runs is one lesson seen twice."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        record(history, "r1", "output had 2 header rows kept as data")
        record(history, "r2", "output had 2 header rows kept as data", "'Credit Amt' and 'Debit Amt' swapped")
        lessons = history.lessons("bank_parser", "icici")
        seen = {lesson.text: lesson.seen for lesson in lessons}
        assert seen == {"output had 2 header rows kept as data": 2, "'Credit Amt' and 'Debit Amt' swapped": 1}

    def test_most_recent_first_and_limited(self, tmp_path: Path):
        """Newer lessons come first; the limit keeps prompts short."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        for n in range(5):
            record(history, f"r{n}", f"lesson {n}")
        assert [lesson.text for lesson in history.lessons("bank_parser", "icici", limit=3)] == \
            ["lesson 4", "lesson 3", "lesson 2"]

    def test_what_fixed_it_is_kept(self, tmp_path: Path):
        """A run that passed after failing records which attempt fixed its failures."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        record(history, "r1", "parse() raised KeyError: 'Date'", fixed_by="attempt 2 (openai:m/fix-execution)")
        (lesson,) = history.lessons("bank_parser", "icici")
        assert lesson.fixed_by == "attempt 2 (openai:m/fix-execution)"
        assert history.runs("bank_parser", "icici") == [("r1", "passed", 2, "attempt 2 (openai:m/fix-execution)")]

    def test_keyed_by_agent_and_target(self, tmp_path: Path):
        """Lessons of another target or another agent are not mixed in."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        record(history, "r1", "icici lesson")
        record(history, "r2", "sbi lesson", target="sbi")
        record(history, "r3", "idris lesson", agent="idris")
        assert [lesson.text for lesson in history.lessons("bank_parser", "icici")] == ["icici lesson"]

    def test_failures_without_lessons_are_recorded_but_not_taught(self, tmp_path: Path):
        """An llm_error has no lesson: it is in the history, not in the prompt."""
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        history.record(RunRecord("bank_parser", "icici", "r1", "openai:m", "failed", 1,
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

    def test_failures_are_counted_per_kind_and_runs_per_status(self, tmp_path: Path):
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        record(history, "r1", "too short", "no sections")  # failed: 2 mismatch attempts
        record(history, "r2", "too short", fixed_by="attempt 2")  # passed after 1 mismatch
        history.record(RunRecord("bank_parser", "icici", "r3", "offline", "failed", 1,
                                 (FailedAttempt(1, "timeout", "slow", ("a", "b")),)))  # two lessons, one attempt
        (mismatch, timeout) = history.patterns("bank_parser", "icici")
        assert (mismatch.kind, mismatch.attempts, mismatch.runs, mismatch.fixed) == ("mismatch", 3, 2, 1)
        assert (timeout.kind, timeout.attempts, timeout.runs, timeout.fixed) == ("timeout", 1, 1, 0)
        assert history.outcomes("bank_parser", "icici") == {"failed": 2, "passed": 1}
        assert history.patterns("bank_parser", "sbi") == [] and history.outcomes("idris", "icici") == {}

    def test_forget_deletes_one_target_of_one_or_every_agent(self, tmp_path: Path):
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        record(history, "r1", "too short")
        record(history, "r2", "other target", target="sbi")
        record(history, "r3", "a blueprint lesson", agent="blueprint")
        assert history.forget("icici", "idris") == Forgotten(0, 0)
        assert history.forget("icici", "bank_parser") == Forgotten(1, 1)
        assert [lesson.text for lesson in history.lessons("blueprint", "icici")] == ["a blueprint lesson"]
        assert history.forget("icici") == Forgotten(1, 1)
        assert history.lessons("blueprint", "icici") == [] and history.lessons("bank_parser", "sbi") != []

    def test_forget_without_a_file_creates_none(self, tmp_path: Path):
        history = ExecutionHistory(tmp_path / "lessons.sqlite")
        assert history.forget("icici") == Forgotten(0, 0) and not history.path.exists()

    def test_an_unreadable_file_is_an_environment_fault(self, tmp_path: Path):
        path = tmp_path / "lessons.sqlite"
        path.write_bytes(b"not a database" * 100)
        with pytest.raises(LessonsUnreadable, match="cannot read the lessons file"):
            ExecutionHistory(path).patterns("bank_parser", "icici")
