"""The eighth round's reading rules (issue 40), each on phrasings of our own, each failing on the reader before it.

docs/intake.md ("Eighth round") says which corpus class each one raised.
"""

from __future__ import annotations

import datetime

import pytest

from agents.intake import patterns, reading, units
from agents.intake.catalogue import available, shipped
from agents.intake.models import Question, Resolution
from agents.intake.resolver import ResolverInput, resolve
from tests.intake_replies import CORPUS
from tests.unit.agents.intake.helpers import ask

TODAY = datetime.date(2026, 6, 15)


def _resolve(reply: str, node: str, name: str, values: dict | None = None, *,  # type: ignore[type-arg]
             all_forms: bool = False) -> Resolution:
    forms = available(CORPUS)
    schemas = forms if all_forms else {node: forms[node]}
    question = Question(node, name, forms[node].question(name))  # the form's own question, as the agent asks it
    return resolve(ResolverInput(reply, question, schemas, {node: values} if values else {}, TODAY))


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


_BEFORE = ("we've been in this flat since 2021 and it started at 875 a month, then went to 940, and the agent says "
           "it will be 1,010 from october, which is why we're looking. my partner's commute is 40 minutes and mine "
           "is about 25, we have 2 bikes and no car, and honestly the whole thing has been a bit stressful. ")


class TestAStoryLandsOnItsAnswer:
    """A long story's values are asked, not guessed; but a sentence opening with "so" or "anyway", holding one
    value of the asked kind, is where the story lands: the answer."""

    @pytest.mark.parametrize(("end", "value"), [("so realistically we can manage 1,250 a month.", 1250),
                                                ("anyway, having done the sums, we can stretch to 1,180.", 1180)])
    def test_the_value_of_the_sentence_a_story_lands_on_is_the_answer(self, end, value):
        assert _current(_BEFORE + end, "Rental", "monthly_rent_budget") == {"Rental.monthly_rent_budget": value}

    def test_a_date_a_story_lands_on_is_the_answer(self):
        story = _BEFORE + "so ideally we would move in on the 12th of september, before the school term."
        assert _current(story, "Rental", "move_in_date") == {"Rental.move_in_date": "2026-09-12"}

    def test_only_the_last_sentence_a_story_lands_on_is_the_answer(self):
        story = _BEFORE + "so 1,200 at a push. so 1,150 is more comfortable for us."
        assert _current(story, "Rental", "monthly_rent_budget") == {"Rental.monthly_rent_budget": 1150}

    @pytest.mark.parametrize("end", ["so if the landlord agrees we could do 1,300.",
                                     "so 1,200 or 1,300, not sure yet.",
                                     "so it was 1,250 when we looked last year."])
    def test_a_condition_two_values_or_another_time_leave_it_asked(self, end):
        result = _resolve(_BEFORE + end, "Rental", "monthly_rent_budget")
        assert not [u for u in result.updates if u.field == "monthly_rent_budget" and u.current]
        assert "monthly_rent_budget" in {p.field for p in result.unsure}


def _shipped(reply: str, node: str, name: str) -> Resolution:
    return resolve(ResolverInput(reply, ask(node, name), shipped(), {}, TODAY))


def _shipped_now(reply: str, node: str, name: str) -> dict:  # type: ignore[type-arg]
    """The reply's current values by field, on the shipped forms."""
    return {u.field: u.value for u in _shipped(reply, node, name).updates if u.current}


class TestACountInATimeUnitItsKeywordNames:
    """A count without ``x-unit`` whose keyword is a time unit's name ("months") is counted in that unit."""

    @pytest.mark.parametrize(("reply", "months"), [("roughly half a year", 6), ("a whole year i reckon", 12),
                                                   ("two years at a push", 24), ("9", 9)])
    def test_a_duration_in_another_unit_is_converted(self, reply, months):
        assert _shipped_now(reply, "Savings", "months_covered") == {"months_covered": months}

    def test_a_vague_duration_is_not_counted(self):
        assert _shipped_now("a few weeks, no more", "Savings", "months_covered") == {}


class TestNumberWordsTheLibrariesLeave:
    """text2num and numerizer read neither dozens, nor "a couple of hundred", nor a half after its scale, nor a
    year said as two pairs; each is a count people type."""

    @pytest.mark.parametrize(("said", "digits"), [
        ("about a dozen a day", "about 12 a day"), ("half a dozen", "6"), ("three dozen", "36"),
        ("a couple of hundred quid", "200 quid"), ("a couple grand", "2 grand"), ("a grand and a half", "1.5 grand"),
        ("nineteen seventy-two", "1972"), ("twenty twenty-seven", "2027"), ("twenty forty", "2040"),
        ("twenty one", "21"), ("twenty thousand", "20000")])
    def test_the_words_become_digits(self, said, digits):
        assert reading.digits_for_words(said) == digits

    @pytest.mark.parametrize(("reply", "node", "name", "value"), [
        ("half a dozen, more on a bad day", "Clinic", "cigarettes_per_day", 6),
        ("a couple of hundred a month", "Parents", "monthly_support", 200),
        ("twenty thirty-five hopefully", "Goals", "target_year", 2035)])
    def test_the_answer_is_read(self, reply, node, name, value):
        forms = available(CORPUS)
        result = resolve(ResolverInput(reply, ask(node, name), {node: forms[node]}, {}, TODAY))
        assert {u.field: u.value for u in result.updates if u.current} == {name: value}


class TestDaysDateparserDoesNotRead:
    """Holidays named as days, and days said relative to today that dateparser reads as a month or not at all."""

    @pytest.mark.parametrize(("said", "day"), [("boxing day 2024", "2024-12-26"), ("xmas eve 2025", "2025-12-24"),
                                               ("New Years Day, 2026", "2026-01-01")])
    def test_a_holiday_is_its_day(self, said, day):
        found = reading.dates(reading.digits_for_words(said), TODAY)
        assert [span.value for span in found] == [day]

    def test_a_holiday_without_day_or_eve_is_no_day(self):
        """"by christmas" is a season of plans, not the 25th."""
        assert reading.digits_for_words("aiming for 80 by christmas") == "aiming for 80 by christmas"

    @pytest.mark.parametrize(("said", "day"), [("the 3rd of next month", "2026-07-03"),
                                               ("15th of this month", "2026-06-15"),
                                               ("this time next month", "2026-07-15"),
                                               ("3 weeks today", "2026-07-06"), ("a week tomorrow", "2026-06-23")])
    def test_a_day_relative_to_today(self, said, day):
        assert [span.value for span in reading.dates(said, TODAY, "future")] == [day]

    def test_a_weekday_after_on_is_the_next_for_the_future_and_the_last_for_the_past(self):
        wednesday = datetime.date(2026, 6, 17)
        assert [s.value for s in reading.dates("on friday", wednesday, "future")] == ["2026-06-19"]
        assert [s.value for s in reading.dates("on friday", wednesday, "past")] == ["2026-06-12"]
        assert reading.dates("on friday", wednesday, "current_period") == []

    def test_a_day_no_month_has_is_none(self):
        assert reading.dates("the 31st of this month", TODAY, "future") == []  # June has 30 days


class TestRelationWords:
    """A form of a user's own whose options name relations ("parent", "sibling") without synonyms: "my mum",
    "my brother" name them, and the name after the relation is still the person's."""

    def test_a_relation_before_a_name_gives_both(self):
        found = _current("my brother, Sam Okoro", "Clinic", "emergency_contact_name")
        assert found == {"Clinic.emergency_contact_name": "Sam Okoro", "Clinic.emergency_contact_relation": "sibling"}

    def test_a_relation_asked_is_read(self):
        assert _current("he's my dad", "Clinic", "emergency_contact_relation") == {
            "Clinic.emergency_contact_relation": "parent"}

    @pytest.mark.parametrize("reply", ["my mum's neighbour, Rita Cole", "a sister from church, Rita Cole"])
    def test_someone_elses_relation_or_one_without_my_is_none(self, reply):
        assert "Clinic.emergency_contact_relation" not in _current(reply, "Clinic", "emergency_contact_name")

    def test_another_forms_relation_options_take_nothing(self):
        found = _current("my daughter is 12", "Family", "dependants", all_forms=True)
        assert "Clinic.emergency_contact_relation" not in found


class TestYesAndNoSaidAroundOtherWords:
    @pytest.mark.parametrize("reply", ["only my flatmate does, on the balcony", "just my partner does"])
    def test_someone_else_doing_it_is_yes_to_a_question_about_anyone(self, reply):
        assert _current(reply, "Rental", "smokers") == {"Rental.smokers": True}

    def test_someone_else_doing_it_is_no_answer_to_a_question_about_you(self):
        assert _current("only my husband does", "Clinic", "smoker") == {}

    @pytest.mark.parametrize(("reply", "value"), [("technically the building society does, but yeah", True),
                                                  ("i wish haha but no, renting", False)])
    def test_the_yes_or_no_after_but_answers(self, reply, value):
        result = _shipped(reply, "Assets", "owns_home")
        assert {u.field: u.value for u in result.updates if u.current} == {"owns_home": value}

    def test_but_no_longer_is_no_answer(self):
        result = _shipped("i did but no longer", "Assets", "owns_home")
        assert "owns_home" not in {u.field for u in result.updates if u.current and u.value is True}

    @pytest.mark.parametrize(("reply", "pet"), [("yup we've got a rabbit", "rabbit"), ("yes i have a dog", "dog")])
    def test_an_option_after_we_have_is_said_on_its_own(self, reply, pet):
        assert _current(reply, "Rental", "has_pets") == {"Rental.has_pets": True, "Rental.pet_type": pet}


class TestWhatAChangeCameTo:
    """A past clause's value that a change came to is the present one: an age after "turned" this year, a place
    after "moved to" with no later move; "for now" beside a future option; "actually" ending a reply."""

    @pytest.mark.parametrize(("reply", "age"), [("turned 62 in march", 62), ("i turned 28 a couple of weeks back", 28)])
    def test_an_age_turned_this_year_is_the_age(self, reply, age):
        assert _shipped(reply, "Personal", "age").updates[0].value == age
        assert _shipped(reply, "Personal", "age").updates[0].current

    @pytest.mark.parametrize("reply", ["turned 30 two years ago", "i turned 40 in 2024"])
    def test_an_age_turned_in_another_year_is_no_age_now(self, reply):
        assert not [u for u in _shipped(reply, "Personal", "age").updates if u.current]

    @pytest.mark.parametrize(("reply", "city"), [("we moved to Whitby in the spring", "Whitby"),
                                                 ("moved to Inverness last year", "Inverness")])
    def test_the_place_moved_to_is_where_the_person_lives(self, reply, city):
        assert _current(reply, "Rental", "current_city") == {"Rental.current_city": city}

    def test_a_place_moved_to_then_left_is_not(self):
        assert _current("moved to Whitby in 2019, then to Hull", "Rental", "current_city") == {
            "Rental.current_city": "Hull"}

    def test_an_option_for_now_beside_a_future_one_is_the_option(self):
        assert [(u.field, u.value) for u in _shipped("engaged for now, getting married next spring", "Personal",
                                                     "marital_status").updates if u.current] == []
        found = _shipped("divorced for now, getting married again next year", "Personal", "marital_status")
        assert [(u.field, u.value) for u in found.updates if u.current] == [("marital_status", "divorced")]

    def test_actually_ending_a_reply_takes_nothing_back(self):
        found = _current("moved in on the 2nd of may actually", "Rental", "move_in_date")
        assert found == {"Rental.move_in_date": "2026-05-02"}


class TestAUnitNamesItsField:
    """A quantity whose unit is of the dimension of one other field of the asked node names that field."""

    @pytest.mark.parametrize(("reply", "weight"), [("6 foot 1, about 95 kilos", 95), ("180cm and 12st", 76.2)])
    def test_a_weight_beside_the_height(self, reply, weight):
        found = _current(reply, "Clinic", "height")
        assert found["Clinic.weight"] == pytest.approx(weight, abs=0.1) and "Clinic.height" in found

    def test_a_height_beside_the_weight(self):
        assert _current("70 kg and 1.75 m", "Clinic", "weight") == {"Clinic.weight": 70, "Clinic.height": 175}

    def test_two_weights_or_one_of_the_past_are_not_taken(self):
        assert "Clinic.weight" not in _current("6 foot, 90 kilos, sorry 88", "Clinic", "height")
        assert "Clinic.weight" not in _current("6 foot. i was 90 kilos at new year", "Clinic", "height")

    def test_an_ordinal_is_no_stone(self):
        """"the 21st" spells 21 "st": a day, never 133 kg."""
        assert units.quantities("born on the 21st of may", "kg") == []
        assert _current("the 21st of may 1990", "Clinic", "date_of_birth") == {"Clinic.date_of_birth": "1990-05-21"}


class TestOneCurrencyAndMoreOrLess:
    @pytest.mark.parametrize(("reply", "amount"), [("£2,400 GBP give or take", 2400), ("€ 3.200 euros", 3200),
                                                   ("about 3k more or less", 3000)])
    def test_a_sign_and_a_code_of_one_currency_or_more_or_less_leave_one_amount(self, reply, amount):
        result = _shipped(reply, "Savings", "emergency_fund")
        assert {u.field: u.value for u in result.updates if u.current} == {"emergency_fund": amount}

    @pytest.mark.parametrize("reply", ["$500 or €450", "3k or 4k"])
    def test_two_currencies_or_two_amounts_are_asked(self, reply):
        result = _shipped(reply, "Savings", "emergency_fund")
        assert not [u for u in result.updates if u.current] and [p.field for p in result.unsure] == ["emergency_fund"]


class TestTheValueAReckoningEndsOn:
    @pytest.mark.parametrize(("reply", "count"), [("a few roll ups, so 8", 8), ("half a pack or so, so 10ish", 10)])
    def test_a_doubt_before_so_is_the_reckoning_and_the_value_after_it_the_answer(self, reply, count):
        assert _current(reply, "Clinic", "cigarettes_per_day") == {"Clinic.cigarettes_per_day": count}

    def test_a_doubt_after_so_is_still_asked(self):
        assert _current("a couple of packs, so 40 or 50", "Clinic", "cigarettes_per_day") == {}


class TestANeedForWhenTheChangeComes:
    @pytest.mark.parametrize("reply", ["we'll need a parking space, we have a van", "i will definitely need parking"])
    def test_a_need_said_in_the_future_answers_a_question_of_need(self, reply):
        assert _current(reply, "Rental", "parking_needed") == {"Rental.parking_needed": True}

    def test_another_future_of_a_field_of_no_need_is_not_now(self):
        assert "Rental.smokers" not in _current("2 of us, and my partner will need to smoke outside", "Rental",
                                                "occupants")


class TestWordsThatLookedLikeDoubtOrThePast:
    def test_if_we_were_is_a_condition_not_the_past(self):
        assert patterns.temporal_cue("if we were careful") is None
        assert patterns.temporal_cue("we were careful") == "past"

    def test_a_condition_leaves_a_duration_the_answer(self):
        result = _shipped("about 4 months, if we were strict", "Savings", "months_covered")
        assert {u.field: u.value for u in result.updates if u.current} == {"months_covered": 4}

    def test_somewhere_is_a_doubt_only_before_a_range(self):
        assert _current("the 9th of may, the letter is here somewhere", "Clinic", "last_checkup") == {
            "Clinic.last_checkup": "2026-05-09"}
        assert _current("somewhere between 10 and 15", "Clinic", "cigarettes_per_day") == {}


class TestABoundThatDescribesWhatWasCounted:
    @pytest.mark.parametrize(("reply", "found"), [("two, both under five", {"dependants": 2}),
                                                  ("3 kids, all over 16 now", {"dependants": 3}),
                                                  ("two, and 3 more at weekends", {})])  # a second count: asked
    def test_the_count_is_read_and_the_bound_is_none(self, reply, found):
        assert _shipped_now(reply, "Family", "dependants") == found


class TestSignsWrittenAsShorthand:
    @pytest.mark.parametrize(("reply", "blood"), [("AB -ve", "ab-"), ("O+ve i think", "o+"), ("its A +ve", "a+")])
    def test_plus_ve_and_minus_ve_are_the_signs(self, reply, blood):  # enum values are kept lower-cased
        assert _current(reply, "Clinic", "blood_type") == {"Clinic.blood_type": blood}


class TestAPartOfAYear:
    @pytest.mark.parametrize(("reply", "found"), [("late 2030 hopefully", {"target_year": 2030}),
                                                  ("mid 2029", {"target_year": 2029}),
                                                  ("early 2028 or 2029", {})])  # two years: asked
    def test_early_late_or_mid_leave_the_year(self, reply, found):
        assert _shipped_now(reply, "Goals", "target_year") == found


class TestAPlaceForNow:
    @pytest.mark.parametrize(("reply", "found"), [
        ("york for now but moving to hull in the spring", {"Rental.current_city": "york"}),
        ("Derby at the moment, but we move to Leeds next month", {"Rental.current_city": "Derby"}),
        ("moving to hull next month", {})])  # the place to come: no city of now
    def test_the_place_said_for_now_beside_a_move_to_come_is_the_city(self, reply, found):
        assert _current(reply, "Rental", "current_city") == found
