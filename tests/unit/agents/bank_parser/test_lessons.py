"""Lessons drawn from failed attempts, read from real comparison reports (compare_frames)."""

from __future__ import annotations

import pandas as pd

from agents.bank_parser.coders.base import FailureKind, Feedback, GeneratedCode
from agents.bank_parser.compare import compare_frames
from agents.bank_parser.lessons import lessons_for, mismatch_lessons, run_record
from tests.conftest import ICICI

EXPECTED = pd.read_csv(ICICI / "result.csv")


def report(actual: pd.DataFrame) -> str:
    return compare_frames(actual, EXPECTED).report()


def mismatch(actual: pd.DataFrame) -> Feedback:
    return Feedback(1, FailureKind.MISMATCH, "x", report(actual), "code", "s")


class TestMismatchLessons:
    def test_two_header_rows_kept_as_data(self):
        """Column names found as values in two rows: 'output had 2 header rows kept as data'."""
        header = pd.DataFrame([list(EXPECTED.columns)] * 2, columns=EXPECTED.columns)
        actual = pd.concat([header, EXPECTED.astype(str)], ignore_index=True)
        lessons = mismatch_lessons(report(actual))
        assert "output had 2 header rows kept as data (rows holding the column names)" in lessons
        assert any(lesson.startswith("output had 2 extra row(s) (102 instead of 100)") for lesson in lessons)

    def test_debit_and_credit_swapped(self):
        """Values of Debit Amt found in Credit Amt and back: the columns were swapped."""
        actual = EXPECTED.copy()
        actual[["Debit Amt", "Credit Amt"]] = EXPECTED[["Credit Amt", "Debit Amt"]].to_numpy()
        assert "'Credit Amt' and 'Debit Amt' swapped" in mismatch_lessons(report(actual))

    def test_rows_dropped(self):
        """Fewer rows than expected: transactions were dropped."""
        lessons = mismatch_lessons(report(EXPECTED.head(90)))
        assert lessons[0].startswith("output had 10 row(s) too few (90 instead of 100)")

    def test_no_rows(self):
        """An empty frame: 'parse() returned no rows'."""
        assert "parse() returned no rows" in mismatch_lessons(report(EXPECTED.head(0)))

    def test_wrong_dtype(self):
        """Balance as text: "'Balance' came out as str, expected float64"."""
        actual = EXPECTED.astype({"Balance": str})
        assert "'Balance' came out as str, expected float64" in mismatch_lessons(report(actual))

    def test_wrong_names_and_order(self):
        """Renamed and reordered columns are named in the lesson."""
        actual = EXPECTED.rename(columns={"Debit Amt": "Debit"})[
            ["Description", "Date", "Debit", "Credit Amt", "Balance"]]
        lessons = mismatch_lessons(report(actual))
        assert "column names wrong: missing ['Debit Amt'], unexpected ['Debit']" in lessons
        assert "columns came out in the wrong order" in lessons


class TestOtherFailures:
    def test_crash(self):
        """An exception becomes 'parse() raised ...'."""
        feedback = Feedback(1, FailureKind.EXECUTION_ERROR, "KeyError: 'Date'", "Traceback ...", "c", "s")
        assert lessons_for(feedback) == ("parse() raised KeyError: 'Date'",)

    def test_model_failures_teach_nothing_about_the_statement(self):
        """no_code and llm_error are about the model: no lesson."""
        for kind in (FailureKind.NO_CODE, FailureKind.LLM_ERROR):
            assert lessons_for(Feedback(1, kind, "x", "y", "", "s")) == ()


class TestRunRecord:
    def test_passed_run_records_what_fixed_it(self):
        """A run that passed on attempt 2 says so; its attempt-1 failure carries its lessons."""
        state = {"status": "passed", "attempt": 2, "code": GeneratedCode("c", "openai:m/fix-mismatch"),
                 "feedback": [mismatch(EXPECTED.head(90))]}
        record = run_record("r1", "icici", "openai:m", state)
        assert record.fixed_by == "attempt 2 (openai:m/fix-mismatch)" and record.attempts == 2
        assert record.failures[0].kind == "mismatch" and record.failures[0].lessons

    def test_failed_run_has_no_fix(self):
        """A run that gave up records its failures and no fix."""
        state = {"status": "failed", "attempt": 1, "code": GeneratedCode("c", "s"),
                 "feedback": [mismatch(EXPECTED.head(1))]}
        assert run_record("r1", "icici", "offline", state).fixed_by == ""
