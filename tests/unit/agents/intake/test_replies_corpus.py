"""The corpus of replies as people type them (tests/intake_replies, issue 40), in CI.

The goals: no wrong fact stored across the corpus, and every class at least 95 % passed.
Where a goal is not met yet, :data:`FLOOR` holds the measured rate of that class (docs/intake.md
says so), so a change can only keep or raise it.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from tests.intake_replies import Case, Harness, load, rates, run_all, same

GOAL = 0.95
#: Classes measured below the goal, with their floor (see docs/intake.md).
FLOOR: dict[str, float] = {
    'answer_for_question_asked': 0.91,
    'arithmetic': 0.86,
    'corrections_in_reply': 0.91,
    'corrections_of_known': 0.82,
    'dates_day_month': 0.94,
    'enum_words_in_other_answers': 0.88,
    'fractions_and_multipliers': 0.94,
    'long_rambling': 0.65,
    'money_currency': 0.94,
    'moves_and_changes_now': 0.94,
    'present_past_future': 0.94,
    'turned_and_these_days': 0.93,
    'volunteered_optional_facts': 0.8,
}
#: The goal, met on the corpus on 2026-11-28 (docs/intake.md): no wrong fact stored.
MOST_WRONG = 0
#: With every form loaded (as a target gives the reader), the cases passed as measured on 2026-11-28 (eighth
#: round, docs/intake.md): a floor.
ALL_FORMS_PASSED = 820


@pytest.fixture(scope="module")
def outcomes():  # noqa: ANN201
    cases = load()
    if not cases:
        pytest.skip("the reply corpus holds no case yet")
    return run_all(cases)


class TestCorpus:
    def test_no_more_wrong_facts_than_measured(self, outcomes):
        """The goal is not one stored value the case does not allow; until it is met, no more than measured."""
        wrong = [f"{o.case.id}: {w}" for o in outcomes for w in o.wrong]
        assert len(wrong) <= MOST_WRONG, wrong

    def test_every_class_reaches_its_rate(self, outcomes):
        """Each class passes at least 95 % (or its measured floor, while the goal is not met)."""
        low = {klass: f"{rate.passed}/{rate.cases}" for klass, rate in rates(outcomes).items()
               if rate.rate < FLOOR.get(klass, GOAL)}
        assert low == {}


@pytest.fixture(scope="module")
def all_forms():  # noqa: ANN201
    cases = load()
    if not cases:
        pytest.skip("the reply corpus holds no case yet")
    return run_all(cases, all_forms=True)


class TestCorpusAllForms:
    """The corpus with every form loaded, as a target gives the reader: another node's keywords and options
    must take nothing from the asked node's answer, and store nothing in their own node but what the case's
    ``elsewhere`` allows."""

    def test_no_wrong_fact_in_the_asked_node(self, all_forms):
        wrong = [f"{o.case.id}: {w}" for o in all_forms for w in o.wrong]
        assert wrong == []

    def test_no_fact_in_another_node_but_those_the_case_allows(self, all_forms):
        stray = [f"{o.case.id}: {s}" for o in all_forms for s in o.stray]
        assert stray == []

    def test_no_fewer_passed_than_measured(self, all_forms):
        assert sum(o.passed for o in all_forms) >= ALL_FORMS_PASSED


def _case(reply: str, expect: dict, **extra) -> Case:  # noqa: ANN003
    return Case("t", "t", extra.pop("node", "Personal"), extra.pop("asks", "age"), reply, expect, **extra)


class TestHarness:
    """The harness itself: it counts what it should."""

    def test_a_value_not_expected_is_wrong(self, tmp_path: Path):
        outcome = Harness(tmp_path).run(_case("I'm 41 and I live in Porto", {"age": 41}))
        assert outcome.wrong == ("city='Porto' stored, not expected",)

    def test_may_allows_and_unsure_forbids(self, tmp_path: Path):
        allowed = Harness(tmp_path).run(_case("I'm 41 and I live in Porto", {"age": 41}, may={"city": "porto"}))
        forbidden = Harness(tmp_path).run(_case("I'm 41", {}, unsure=("age",)))
        assert allowed.passed and forbidden.wrong == ("age=41 stored where a confirmation was right",)

    def test_a_value_not_read_is_a_miss(self, tmp_path: Path):
        outcome = Harness(tmp_path).run(_case("no idea what you mean", {"age": 41}))
        assert outcome.missed == ("age=41 not stored",) and not outcome.wrong

    def test_known_facts_are_not_counted_as_stored(self, tmp_path: Path):
        outcome = Harness(tmp_path).run(_case("I'm 41", {"age": 41}, known={"city": "Porto"}))
        assert outcome.passed and outcome.stored == {"age": 41}

    def test_the_clock_is_the_case_s(self, tmp_path: Path):
        case = _case("I was born in 1980", {}, node="Personal", today=datetime.date(2030, 1, 1))
        assert Harness(tmp_path).run(case).case.today.year == 2030

    def test_with_every_form_a_fact_in_another_node_is_stray_unless_allowed(self, tmp_path: Path):
        harness = Harness(tmp_path, all_forms=True)
        outcome = harness.run(_case("my wife and I, so 2", {"household_size": 2}, node="Family",
                                    asks="household_size"))
        allowed = harness.run(_case("my wife and I, so 2", {"household_size": 2}, node="Family",
                                    asks="household_size", elsewhere={"Personal.marital_status": "married"}))
        assert outcome.stray == ("Personal.marital_status='married' stored, not allowed elsewhere",)
        assert allowed.stray == ()

    def test_numbers_compare_within_a_tenth_of_a_percent(self):
        assert same(1500, 1500.9) and not same(1500, 1502) and same(0.005, 0.01) and same("Bath", "bath")
