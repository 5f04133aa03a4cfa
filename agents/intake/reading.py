"""Reading values out of a reply's words: number words, amounts, dates. Libraries do the reading.

- number words ("forty-two", "sixty five thousand") become digits with ``text2num``'s
  ``alpha2digit`` (MIT, compiled, offline: no model, no download);
- an amount's digits ("112,000", "1.234,56", "1 234,56", "7,29,242") are read by
  ``price-parser`` (BSD), which settles which separator is the decimal one; a suffix ("70k",
  "3.2k", "2.5 million") multiplies it, a currency sign or word ("$", "USD", "euros") marks it as money;
- a date or a time relative to today ("last year", "from January", "in three years", "by the
  end of 2027", "March 2015", "03/04/2027": day first) is read by ``dateparser`` (BSD), at
  the precision the user gave (a year, a month, a day), relative to the conversation's today.

Replies are hostile text. The caller caps a reply (``MAX_REPLY_CHARS``) before anything here
sees it, and cuts it into at most 40 clauses; every pattern is linear (bounded repeats, no
nested quantifiers); and dateparser, whose own search over long text is slow (0.4 to 3.8 s for
4 KiB of reply-like text on the development machine), never searches: it reads at most
:data:`MAX_DATE_SPANS` candidate spans of at most :data:`MAX_DATE_CHARS` characters per clause,
found first by one pattern here (a whole 4 KiB reply is read in 17 to 33 ms).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

from dateparser.date import DateDataParser
from numerizer import numerize
from price_parser import Price
from text_to_num import alpha2digit

#: Most date candidates handed to dateparser per text, and their longest form.
MAX_DATE_SPANS = 12
#: Most date candidates read in one whole reply (dateparser takes about 1.5 ms each: the 2,000-character
#: bound of 50 ms holds only if a reply of many dates is not read to its end; the first dates are kept).
MAX_REPLY_DATE_SPANS = 10
MAX_DATE_CHARS = 40
Precision = Literal["year", "month", "day"]

#: A month's name, whole or shortened ("march", "mar").
MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_PERIOD = r"(?:year|month|week|summer|winter|spring|autumn|fall)"
_PREP = r"(?:in|by|since|until|till|before|after|from|of|around|during|circa|as of)"
_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}-\d{2}"                                                   # 2027-03-01
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{4}"                                             # 1/3/2027 (day first)
    rf"|(?:\d{{1,2}}(?:st|nd|rd|th)?\s{{1,2}})?{MONTH}\.?(?:\s{{1,2}}\d{{1,2}}(?:st|nd|rd|th)?,?)?\s{{1,2}}(?:of\s)?\d{{4}}"
    rf"|(?:(?:the\s)?(?:end|start|beginning|middle)\sof\s)?(?:last|next|this)\s{_PERIOD}"
    r"|(?:the\s)?(?:end|start|beginning|middle)\sof\s\d{4}"
    r"|(?:in|within)\s(?:the\s)?(?:next\s)?\d{1,2}\s(?:years?|months?)|\d{1,2}\s(?:years?|months?)\sago"
    rf"|{_PREP}\s{MONTH}\b(?!\.?\s{{1,2}}(?:\d|of\s))"
    rf"|{_PREP}\s(?:(?:19|20|21)\d{{2}})\b"
    rf"|(?:the\s)?\d{{1,2}}(?:st|nd|rd|th)?\s(?:of\s)?{MONTH}\b(?:,?\s(?:19|20)\d\d\b)?"  # the 3rd of July (1979)
    rf"|{MONTH}\.?\s\d{{1,2}}(?:st|nd|rd|th)?\b(?!\s?\d)"                               # August 1st
    r"|(?:the\sday\safter\s)?(?:tomorrow|tmrw|tmr|tomoz|tmoz|2moro|2morrow|tomorow|tommorow|tommorrow)"
    r"|(?:the\s)?(?:day\sbefore\s)?(?:yesterday|yday|yest)"
    rf"|(?:next|last|this)\s{_WEEKDAY}"
    r"|in\s\d{1,2}\s(?:days?|weeks?)|(?:\d{1,2}|a)\s(?:days?|weeks?)\sago)",
    re.IGNORECASE)
#: Shortened "tomorrow" and "yesterday", as typed ("tmrw", "2moro", "yday").
_SHORT_DAY = re.compile(r"\b(?:tmrw|tmr|tomoz|tmoz|2moro|2morrow|tomorow|tommorow|tommorrow|yday|yest)\b",
                        re.IGNORECASE)
_LEADING = re.compile(rf"^(?:{_PREP}\s|the\s)?(?:(?:end|start|beginning|middle)\sof\s)?", re.IGNORECASE)
_WITHIN = re.compile(r"^(?:in|within)\s(?:the\s)?(?:next\s)?(\d{1,2}\s(?:years?|months?|weeks?|days?))$", re.IGNORECASE)
#: A relative time that names a day ("in 2 weeks", "a week ago"), unlike "last week" (a week: no day).
_DAY_COUNT = re.compile(r"\d\s(?:days?|weeks?)|\ba\s(?:day|week)\sago", re.IGNORECASE)
#: The period an amount is per, right after it: "4k a month", "$1,500/month", "30k yearly".
_PER = re.compile(r"\s{0,2}(?:(?:a|an|per|each|every)\s{1,2}|/\s?)(month|mo|year|yr|annum|week|wk|hour|hr)\b"
                  r"|\s{0,2}(monthly|annually|yearly|weekly)\b", re.IGNORECASE)
_PERIODS = {"month": "month", "mo": "month", "monthly": "month", "year": "year", "yr": "year", "annum": "year",
            "annually": "year", "yearly": "year", "week": "week", "wk": "week", "weekly": "week",
            "hour": "hour", "hr": "hour"}
_YEAR_ONLY = re.compile(r"^(?:19|20|21)\d{2}$")
#: An amount or a number: an optional currency before, the digits, a suffix, a currency after, a percent.
_NUMBER = re.compile(
    r"(?<![\w.,/-])(?P<before>[$€£₹¥]|(?:usd|eur|gbp|inr|chf|cad|aud|jpy)\s?)?"
    r"(?P<digits>\d{1,3}(?:[,.'\u00a0\u202f ]\d{3}){1,4}(?:[.,]\d{1,2})?|\d{1,2}(?:,\d{2}){1,3},\d{3}(?:\.\d{1,2})?"
    r"|\d{1,12}(?:[.,]\d{1,3})?)(?!\d|/\d)"
    r"(?:\s?(?P<suffix>k|m|mil|bn|grand|thousand|million|billion|lakhs?|lacs?|crores?)\b)?"
    r"(?:\s?(?P<after>dollars?|euros?|pounds?|rupees?|bucks|usd|eur|gbp|inr)\b)?"
    r"(?P<percent>\s?%|\s?percent\b)?", re.IGNORECASE)
_NUMBER_WORDS = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                 r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)")
#: "N and a half [thousand]": the fraction text2num does not read; numerizer does ("one and a half thousand" → 1500).
_AND_A_HALF = re.compile(rf"\b(?:{_NUMBER_WORDS}(?:[\s-]{_NUMBER_WORDS}){{0,2}}|\d{{1,4}})\sand\sa\shalf"
                         r"(?:\s(?:thousand|million|billion|hundred)\b)?", re.IGNORECASE)
#: "half a million", "quarter of a mil", "three quarters of a million", "half a grand": a part of a scale.
_PART_OF = re.compile(r"\b(half|quarter|three quarters)\s(?:of\s)?an?\s(million|mil|grand|thousand|k)\b", re.IGNORECASE)
_PARTS = {"half": 0.5, "quarter": 0.25, "three quarters": 0.75}
_PART_SCALE = {"million": 1_000_000, "mil": 1_000_000, "grand": 1_000, "thousand": 1_000, "k": 1_000}


def _part_of(match: re.Match[str]) -> str:
    value = _PARTS[match[1].lower()] * _PART_SCALE[match[2].lower()]
    return str(int(value))


_DECIMAL_SCALE = re.compile(r"\b(\d{1,3}\.\d{1,2})\s(1000|1000000|1000000000)\b")
_SCALE_WORD = re.compile(r"(\d)\s?(thousand|million|billion)\b", re.IGNORECASE)
_SCALE_MARK = {"thousand": "k", "million": "m", "billion": "bn"}
_SCALE = {"k": 1_000, "grand": 1_000, "thousand": 1_000, "m": 1_000_000, "mil": 1_000_000, "million": 1_000_000,
          "bn": 1_000_000_000, "billion": 1_000_000_000,
          # India's scale words ("12 lakh per annum"): a lakh is 100,000, a crore 10,000,000
          "lakh": 100_000, "lakhs": 100_000, "lac": 100_000, "lacs": 100_000,
          "crore": 10_000_000, "crores": 10_000_000}


@dataclass(frozen=True)
class Span:
    """A value read from a text, with where it stands (to pair it with a keyword, and to use it once).

    Attributes:
        kind: ``number`` (an amount or a count) or ``date``.
        value: The number, or the date as ISO text at its precision (``2027``, ``2015-03``, ``2027-03-01``).
        start: Where it starts in the text.
        end: Where it ends.
        money: A currency or an amount suffix marks it as money ("$80k", "3.2k", "80,000 dollars").
        percent: It is a percentage ("4.5%").
        year: A date's year (or None).
        precision: A date's precision.
        per: The period an amount is given per (``month``, ``year``, ``week``), when the reply says.
    """

    kind: Literal["number", "date"]
    value: int | float | str
    start: int
    end: int
    money: bool = False
    percent: bool = False
    year: int | None = None
    precision: Precision | None = None
    per: str | None = None

    def overlaps(self, start: int, end: int) -> bool:
        """It shares a character with ``[start, end)``."""
        return self.start < end and start < self.end


_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
#: A year said as two pairs ("nineteen eighty-eight", "twenty thirty"): text2num reads "19 88", two numbers.
_YEAR_WORDS = re.compile(rf"\b(nineteen|twenty)[\s-]({'|'.join(_TEENS)}|"
                         rf"(?:{'|'.join(_TENS)})(?:[\s-](?:{'|'.join(_UNITS)}))?)\b"
                         r"(?![\s-](?:hundred|thousand|million|grand|k)\b)", re.IGNORECASE)
#: "a dozen", "half a dozen", "2 dozen": the count text2num leaves as words.
_DOZEN = re.compile(r"\b(?:(half)\s(?:a\s)?|(a|one)\s|(\d{1,2})\s)dozen\b", re.IGNORECASE)
#: "a couple of hundred", "a couple grand": two of the scale.
_COUPLE_OF = re.compile(r"\ba\scouple\s(?:of\s)?(hundred|thousand|grand|k)\b", re.IGNORECASE)
#: "a grand and a half", "2 thousand and a half": the half after the scale.
_SCALE_AND_A_HALF = re.compile(r"\b(a|one|\d{1,3})\s(grand|thousand|million|mil|k)\sand\sa\shalf\b", re.IGNORECASE)


#: Days named for a holiday ("boxing day 2025", "new year's day"): their day and month, as dateparser reads them.
_HOLIDAYS = re.compile(r"\b(?:(christmas|xmas|new\s?year'?s?|boxing)\s(day|eve))\b", re.IGNORECASE)
_HOLIDAY_DATES = {("christmas", "day"): "25 december", ("christmas", "eve"): "24 december",
                  ("boxing", "day"): "26 december", ("newyear", "day"): "1 january", ("newyear", "eve"): "31 december"}


def _holiday(match: re.Match[str]) -> str:
    said = match[1].lower()
    name = "christmas" if said.startswith(("christ", "xmas")) else "newyear" if said.startswith("new") else said
    return _HOLIDAY_DATES.get((name, match[2].lower()), match.group())


def _year_words(match: re.Match[str]) -> str:
    century = 19 if match[1].lower() == "nineteen" else 20
    words = re.split(r"[\s-]", match[2].lower())
    if words[0] in _TEENS:
        return str(century * 100 + 10 + _TEENS.index(words[0]))
    return str(century * 100 + 10 * (2 + _TENS.index(words[0])) + (1 + _UNITS.index(words[1]) if len(words) > 1 else 0))


def _dozen(match: re.Match[str]) -> str:
    return "6" if match[1] else "12" if match[2] else str(12 * int(match[3]))


def _scale_and_a_half(match: re.Match[str]) -> str:
    count = 1 if match[1].lower() in ("a", "one") else int(match[1])
    return f"{count}.5 {match[2]}"


def digits_for_words(text: str) -> str:
    """``text`` with its number words as digits ("I'm forty-two" → "I'm 42", "sixty five thousand" → "65000").

    Every number word counts, "one" and "two" too: a reply to "how many children?" is often one word.
    """
    text = _YEAR_WORDS.sub(_year_words, text)
    text = _HOLIDAYS.sub(_holiday, text)
    text = _COUPLE_OF.sub(lambda m: "200" if m[1].lower() == "hundred" else f"2 {m[1]}", text)
    text = _SCALE_AND_A_HALF.sub(_scale_and_a_half, text)
    text = _AND_A_HALF.sub(lambda m: str(numerize(m.group())), text)
    text = _PART_OF.sub(_part_of, text)
    text = _SCALE_WORD.sub(lambda m: m[1] + _SCALE_MARK[m[2].lower()], text)  # "2.5 million": keep it whole
    try:
        text = str(alpha2digit(text, "en", threshold=0))
    except (ValueError, TypeError):  # the library's own refusal of odd input: keep the words
        return text
    # "one point five million" comes back as "1.5 1000000": the decimal times its scale
    text = _DECIMAL_SCALE.sub(lambda m: str(round(float(m[1]) * int(m[2]))), text)
    return _DOZEN.sub(_dozen, text) if "dozen" in text.lower() else text


def numbers(text: str, dates_found: list[Span]) -> list[Span]:
    """Amounts and numbers in ``text`` that are not part of a date, left to right."""
    found = []
    for match in _NUMBER.finditer(text):
        if any(d.overlaps(match.start("digits"), match.end("digits")) for d in dates_found):
            continue
        value = _amount(match)
        if value is not None:
            per = _PER.match(text, match.end())
            found.append(Span("number", value, match.start(), match.end(),
                              money=bool(match["before"] or match["after"] or match["suffix"]),
                              percent=bool(match["percent"]),
                              per=_PERIODS[(per[1] or per[2]).lower()] if per else None))
    return found


def _amount(match: re.Match[str]) -> int | float | None:
    """The match's value: price-parser reads the digits (separators), the suffix multiplies."""
    digits = match["digits"]
    if match["percent"]:
        try:
            parsed: Decimal | None = Decimal(digits.replace(",", "."))
        except InvalidOperation:  # "1.234,56%": two separators are no percentage
            return None
    else:
        parsed = Price.fromstring(digits.replace("\u00a0", " ").replace("\u202f", " ")).amount
    if parsed is None:
        return None
    value = float(parsed) * _SCALE.get((match["suffix"] or "").lower(), 1)
    return int(value) if value.is_integer() else round(value, 2)


Prefer = Literal["past", "future", "current_period"]


@lru_cache(maxsize=8)
def _date_parser(today: datetime.date, prefer: Prefer) -> DateDataParser:
    """English, day first, the first day of a period when none is given, relative to ``today``."""
    base = datetime.datetime(today.year, today.month, today.day)
    return DateDataParser(languages=["en"], settings={"DATE_ORDER": "DMY", "PREFER_DAY_OF_MONTH": "first",
                                                     "RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer})


def date_candidates(text: str) -> list[re.Match[str]]:
    """Where ``text`` may hold a date (at most :data:`MAX_DATE_SPANS`): what :func:`dates` reads."""
    return list(_DATE.finditer(text))[:MAX_DATE_SPANS]


def dates(text: str, today: datetime.date, prefer: Prefer = "current_period", most: int = MAX_DATE_SPANS) -> list[Span]:
    """Dates and relative times in ``text`` (see the module doc), left to right, at most ``most``
    candidates read; a month without a year is the one in the ``prefer``red direction (a question
    about the past: the last January)."""
    own = list(_OWN_RELATIVE.finditer(text))
    found = [span for match in own if (span := _own_relative(match, today, prefer))]
    for match in date_candidates(text)[:most]:
        if any(match.start() < mine.end() and mine.start() < match.end() for mine in own):
            continue  # "the 1st of next month": the day (or none, the 31st of June), not the month dateparser reads
        span = _date(match.group()[:MAX_DATE_CHARS], match.start(), match.end(), _date_parser(today, prefer))
        if span is not None:
            found.append(span)
    return sorted(found, key=lambda span: span.start)


#: Days said relative to today that dateparser reads as a month or not at all: "the 1st of next month",
#: "this time next week", "two weeks today" (British: 14 days from today), "on monday" (the next one for a
#: question about the future, the last one for a question about the past).
_OWN_RELATIVE = re.compile(
    r"\b(?:the\s)?(?P<day>\d{1,2})(?:st|nd|rd|th)?\sof\s(?P<which>next|this)\smonth\b"
    r"|\bthis\stime\snext\s(?P<next>week|month|year)\b"
    r"|\b(?P<count>\d{1,2}|a)\sweeks?\s(?P<from>today|tomorrow)\b"
    rf"|\bon\s(?P<weekday>{_WEEKDAY})\b", re.IGNORECASE)


def _own_relative(match: re.Match[str], today: datetime.date, prefer: Prefer) -> Span | None:
    """One of :data:`_OWN_RELATIVE`'s days, or None (no such day, or a weekday with no direction to read it in)."""
    day: datetime.date | None = None
    try:
        if match["day"]:
            month = today.month + (match["which"].lower() == "next")
            day = datetime.date(today.year + (month > 12), (month - 1) % 12 + 1, int(match["day"]))
        elif match["next"]:
            period = match["next"].lower()
            month = today.month + (period == "month")
            day = today + datetime.timedelta(weeks=1) if period == "week" else \
                today.replace(year=today.year + (month > 12) + (period == "year"), month=(month - 1) % 12 + 1)
        elif match["count"]:
            weeks = 1 if match["count"].lower() == "a" else int(match["count"])
            day = today + datetime.timedelta(days=7 * weeks + (match["from"].lower() == "tomorrow"))
        elif prefer in ("future", "past"):
            wanted = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                      "sunday").index(match["weekday"].lower())
            ahead = (wanted - today.weekday()) % 7 or 7
            day = today + datetime.timedelta(days=ahead if prefer == "future" else ahead - 7 if ahead < 7 else -7)
    except ValueError:  # "the 31st of next month" in a month of 30 days
        return None
    if day is None:
        return None
    return Span("date", day.isoformat(), match.start(), match.end(), year=day.year, precision="day")


def _date(raw: str, start: int, end: int, parser: DateDataParser) -> Span | None:
    """One candidate read by dateparser; None when it reads no date."""
    within = _WITHIN.match(raw.strip())
    core = f"in {within[1]}" if within else _LEADING.sub("", raw.strip()).strip()
    core = _SHORT_DAY.sub(lambda m: "tomorrow" if m.group()[:1] in "t2T" else "yesterday", core)  # "tmrw", "yday"
    if _YEAR_ONLY.match(core):
        return Span("date", core, start, end, year=int(core), precision="year")
    data = parser.get_date_data(core) if core else None
    if data is None or data.date_obj is None:
        return None
    # "in two weeks", "a week ago" name a day; a month or a year is read at that precision
    period = "day" if data.period == "week" and _DAY_COUNT.search(core) else data.period
    precision: Precision = "year" if period == "year" else "month" if period in ("month", "week") else "day"
    iso = data.date_obj.date().isoformat()
    value = iso[:4] if precision == "year" else iso[:7] if precision == "month" else iso
    return Span("date", value, start, end, year=data.date_obj.year, precision=precision)
