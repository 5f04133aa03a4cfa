"""What the lessons store does wherever it is: the CLI's SQLite file (test_lessons.py), the
SQLite run store's tables and the PostgreSQL store's (revision 0004, issue 34)."""

from __future__ import annotations

from agents.lessons import ExecutionHistory, FailedAttempt, Forgotten, RunOutcome


def record(history: ExecutionHistory, run_id: str, *lessons: str, target: str = "icici",
           fixed_by: str = "", agent: str = "bank_parser") -> None:
    failures = tuple(FailedAttempt(i + 1, "mismatch", f"summary {i}", (text,)) for i, text in enumerate(lessons))
    history.record(RunOutcome(agent, target, run_id, "openai:m", "passed" if fixed_by else "failed",
                             len(lessons) + bool(fixed_by), failures, fixed_by))


class ContractLessons:
    """Needs a fixture ``history``: an empty :class:`ExecutionHistory`."""

    def test_lessons_are_distinct_and_counted(self, history: ExecutionHistory):
        """The same lesson from two runs is one lesson seen twice."""
        record(history, "r1", "output had 2 header rows kept as data")
        record(history, "r2", "output had 2 header rows kept as data", "'Credit Amt' and 'Debit Amt' swapped")
        lessons = history.lessons("bank_parser", "icici")
        seen = {lesson.text: lesson.seen for lesson in lessons}
        assert seen == {"output had 2 header rows kept as data": 2, "'Credit Amt' and 'Debit Amt' swapped": 1}

    def test_most_recent_first_and_limited(self, history: ExecutionHistory):
        """Newer lessons come first; the limit keeps prompts short."""
        for n in range(5):
            record(history, f"r{n}", f"lesson {n}")
        assert [lesson.text for lesson in history.lessons("bank_parser", "icici", limit=3)] == \
            ["lesson 4", "lesson 3", "lesson 2"]

    def test_what_fixed_it_is_kept(self, history: ExecutionHistory):
        """A run that passed after failing records which attempt fixed its failures."""
        record(history, "r1", "parse() raised KeyError: 'Date'", fixed_by="attempt 2 (openai:m/fix-execution)")
        (lesson,) = history.lessons("bank_parser", "icici")
        assert lesson.fixed_by == "attempt 2 (openai:m/fix-execution)"
        assert history.runs("bank_parser", "icici") == [("r1", "passed", 2, "attempt 2 (openai:m/fix-execution)")]

    def test_keyed_by_agent_and_target(self, history: ExecutionHistory):
        """Lessons of another target or another agent are not mixed in."""
        record(history, "r1", "icici lesson")
        record(history, "r2", "sbi lesson", target="sbi")
        record(history, "r3", "idris lesson", agent="idris")
        assert [lesson.text for lesson in history.lessons("bank_parser", "icici")] == ["icici lesson"]

    def test_failures_are_counted_per_kind_and_runs_per_status(self, history: ExecutionHistory):
        record(history, "r1", "too short", "no sections")  # failed: 2 mismatch attempts
        record(history, "r2", "too short", fixed_by="attempt 2")  # passed after 1 mismatch
        history.record(RunOutcome("bank_parser", "icici", "r3", "offline", "failed", 1,
                                 (FailedAttempt(1, "timeout", "slow", ("a", "b")),)))  # two lessons, one attempt
        (mismatch, timeout) = history.patterns("bank_parser", "icici")
        assert (mismatch.kind, mismatch.attempts, mismatch.runs, mismatch.fixed) == ("mismatch", 3, 2, 1)
        assert (timeout.kind, timeout.attempts, timeout.runs, timeout.fixed) == ("timeout", 1, 1, 0)
        assert history.outcomes("bank_parser", "icici") == {"failed": 2, "passed": 1}
        assert history.patterns("bank_parser", "sbi") == [] and history.outcomes("idris", "icici") == {}

    def test_forget_deletes_one_target_of_one_or_every_agent(self, history: ExecutionHistory):
        record(history, "r1", "too short")
        record(history, "r2", "other target", target="sbi")
        record(history, "r3", "a blueprint lesson", agent="blueprint")
        assert history.forget("icici", "idris") == Forgotten(0, 0)
        assert history.forget("icici", "bank_parser") == Forgotten(1, 1)
        assert [lesson.text for lesson in history.lessons("blueprint", "icici")] == ["a blueprint lesson"]
        assert history.forget("icici") == Forgotten(1, 1)
        assert history.lessons("blueprint", "icici") == [] and history.lessons("bank_parser", "sbi") != []

    def test_a_run_recorded_again_counts_once(self, history: ExecutionHistory):
        """A hand-off kept twice (a service that died after keeping it) teaches each lesson once."""
        record(history, "r1", "too short")
        record(history, "r1", "too short")
        assert [(lesson.text, lesson.seen) for lesson in history.lessons("bank_parser", "icici")] == [("too short", 1)]
        assert history.outcomes("bank_parser", "icici") == {"failed": 1}
