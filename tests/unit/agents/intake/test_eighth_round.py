"""The eighth round's reading rules (issue 40), each on phrasings of our own, each failing on the reader before it.

docs/intake.md ("Eighth round") says which corpus class each one raised.
"""

from __future__ import annotations

import datetime

import pytest

from agents.intake.catalogue import available
from agents.intake.models import Resolution
from agents.intake.resolver import ResolverInput, resolve
from tests.intake_replies import CORPUS
from tests.unit.agents.intake.helpers import ask

TODAY = datetime.date(2026, 6, 15)


def _resolve(reply: str, node: str, name: str, values: dict | None = None, *,  # type: ignore[type-arg]
             all_forms: bool = False) -> Resolution:
    forms = available(CORPUS)
    schemas = forms if all_forms else {node: forms[node]}
    return resolve(ResolverInput(reply, ask(node, name), schemas, {node: values} if values else {}, TODAY))


def _current(reply: str, node: str, name: str, values: dict | None = None, *,  # type: ignore[type-arg]
             all_forms: bool = False) -> dict:  # type: ignore[type-arg]
    result = _resolve(reply, node, name, values, all_forms=all_forms)
    return {f"{u.node}.{u.field}": u.value for u in result.updates if u.current and u.value is not None}


class TestImpliedKeywords:
    """A form of a user's own names no ``x-keywords``: its fields' own names do ("deposit_available")."""

    def test_a_word_of_the_fields_name_ties_a_volunteered_amount(self):
        found = _current("950 tops, and there's 1,900 saved for a deposit", "Rental", "monthly_rent_budget")
        assert found == {"Rental.monthly_rent_budget": 950, "Rental.deposit_available": 1900}

    def test_a_word_of_the_fields_name_ties_a_volunteered_yes(self):
        assert _current("leeds, and i'm a smoker", "Clinic", "town") == {"Clinic.town": "leeds", "Clinic.smoker": True}

    @pytest.mark.parametrize(("reply", "count"), [("yes, roughly 20 a day", 20), ("yeah maybe 6 per day", 6)])
    def test_a_count_per_a_period_of_the_fields_name_is_the_number_right_before_it(self, reply, count):
        assert _current(reply, "Clinic", "smoker") == {"Clinic.smoker": True, "Clinic.cigarettes_per_day": count}

    def test_a_number_with_its_own_unit_before_the_period_is_no_count(self):
        assert "Clinic.cigarettes_per_day" not in _current("yes, and i work 8 hours a day", "Clinic", "smoker")

    def test_another_forms_name_is_no_keyword(self):
        """"smoker" names Clinic's smoker; Rental's "smokers" (someone in the flat) is another form's word."""
        found = _current("leeds, and i'm a smoker", "Clinic", "town", all_forms=True)
        assert "Rental.smokers" not in found and found["Clinic.smoker"] is True


class TestDurationsAndEndings:
    def test_a_length_of_time_is_no_amount_for_a_money_keyword(self):
        found = _current("3 weeks rent is what i can do", "Rental", "deposit_available", {"monthly_rent_budget": 900})
        assert "Rental.monthly_rent_budget" not in found

    def test_an_option_in_a_clause_that_says_it_ended_is_no_value_of_now(self):
        found = _current("we don't keep a dog any more, she went to my sister's", "Rental", "pet_type",
                         {"has_pets": True})
        assert "Rental.pet_type" not in found
