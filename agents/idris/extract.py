"""Walk a document's lines and pull out what a domain model needs: labelled text, parties,
amounts, dates, periods, itemised rows and clauses.

Rules, in the order they are tried on each line:

* ``제N조 (Label) value`` (Korean article) and ``Label: value`` split a line into label
  and value; a Markdown table row ``| a | b |`` and a plain row ending in three numbers
  are table rows;
* a label that *is* a party word (``갑``, ``Seller``, ``기안자`` …) opens a party; the
  detail lines under it (``상호:``, ``Registration No:`` …) belong to it;
* a value holding two dates is a period, one date a date, money an amount (with any
  ``(10%)`` stated next to it, and any ``금 …원정`` in words); otherwise a short value is
  a text field and a sentence is a clause;
* a row whose last three numbers satisfy quantity × unit price = amount is a line item.

Numbers are kept as :class:`~decimal.Decimal` until the end, when the analysis picks one
scale (1, or 100 when any amount has cents) and turns them into integers.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from agents.idris import vocabulary as vocab
from agents.idris.korean_numbers import amount_in_words
from agents.idris.names import Names

_ARTICLE = re.compile(r"^\s*제\s*\d+\s*조\s*[\(（](?P<label>[^)）]+)[\)）]\s*(?P<value>.*)$")
_LABELLED = re.compile(r"^\s*(?:[-*•·]\s*)?(?P<label>[^:：|]{1,40}?)\s*[:：]\s*(?P<value>.*)$")
_HEADING = re.compile(r"^\s*#+\s*")
_MONEY = re.compile(
    r"(?P<pre>₩|KRW|USD|US\$|\$|EUR|€)?\s*(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d{1,2})?\s*"
    r"(?P<post>원|KRW|USD|EUR|€|달러)?"
)
_PERCENT = re.compile(r"(?P<num>\d+(?:\.\d+)?)\s*%")
_NUMBER_TOKEN = re.compile(r"^[₩$€]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d{1,2})?$")
_DATE_PATTERNS = (
    re.compile(r"(?P<y>\d{4})\s*년\s*(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일"),
    re.compile(r"(?P<y>\d{4})\s*[-./]\s*(?P<m>\d{1,2})\s*[-./]\s*(?P<d>\d{1,2})\.?"),
    re.compile(r"(?P<mn>[A-Z][a-z]{2,8})\.?\s+(?P<d>\d{1,2}),\s*(?P<y>\d{4})"),
    re.compile(r"(?P<d>\d{1,2})\s+(?P<mn>[A-Z][a-z]{2,8})\.?\s+(?P<y>\d{4})"),
)
_MONTHS = {name: index for index, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_CURRENCIES = {"₩": "KRW", "원": "KRW", "KRW": "KRW", "USD": "USD", "US$": "USD", "$": "USD", "달러": "USD",
               "EUR": "EUR", "€": "EUR"}
_SENTENCE = re.compile(r"(다|함|음)\.(\s|$)|\.\s+\S.*\.$")
MAX_TEXT_VALUE = 80


@dataclass
class RawAmount:
    """An amount before the scale is known."""

    label: str
    term: vocab.Term | None
    value: Decimal
    line: int
    rate: Fraction | None
    words: tuple[str, int] | None


@dataclass
class RawItem:
    """A line item before the scale is known."""

    description: str
    quantity: int
    unit_price: Decimal
    amount: Decimal
    line: int


@dataclass
class RawParty:
    """A party being read: header first, details as they come."""

    term: vocab.Term
    role_label: str
    name: str
    line: int
    details: list[tuple[vocab.Term | None, str, str]] = field(default_factory=list)


@dataclass
class Extraction:
    """What the walk found, before identifiers and scale are settled."""

    title: str = ""
    texts: list[tuple[vocab.Term | None, str, str, int]] = field(default_factory=list)
    parties: list[RawParty] = field(default_factory=list)
    amounts: list[RawAmount] = field(default_factory=list)
    dates: list[tuple[vocab.Term | None, str, dt.date, int]] = field(default_factory=list)
    periods: list[tuple[vocab.Term | None, str, dt.date, dt.date, int]] = field(default_factory=list)
    items: list[RawItem] = field(default_factory=list)
    clauses: list[str] = field(default_factory=list)
    currencies: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def extract(lines: list[str]) -> Extraction:
    """Walk ``lines`` once and collect everything the rules above recognise."""
    found = Extraction()
    party: RawParty | None = None
    for number, raw in enumerate(lines, start=1):
        line = _HEADING.sub("", raw).strip()
        if not line:
            continue
        if not found.title:
            found.title = line.strip("*# ")
            continue
        party = _line(found, party, line, number)
    return found


def _line(found: Extraction, party: RawParty | None, line: str, number: int) -> RawParty | None:
    """Handle one line; return the party that is open after it."""
    split = _split(line)
    if split is None and (alone := vocab.match_term(line, vocab.PARTIES, exact=True)) is not None:
        return _party_header(found, alone, line, "", number)  # a heading such as 갑 (발주자)
    if line.startswith("|") or split is None:
        _row(found, line, number)
        return None
    label, value = split
    header = vocab.match_term(label, vocab.PARTIES, exact=True)
    if header is not None:
        return _party_header(found, header, label, value, number)
    detail = vocab.match_term(label, vocab.PARTY_DETAILS)
    if party is not None and detail is not None:
        party.details.append((detail, label, value.strip()))
        return party
    _labelled(found, label, value, number)
    return None


def _split(line: str) -> tuple[str, str] | None:
    for pattern in (_ARTICLE, _LABELLED):
        match = pattern.match(line)
        if match:
            return match["label"].strip(), match["value"].strip()
    return None


def _party_header(found: Extraction, term: vocab.Term, label: str, value: str, number: int) -> RawParty | None:
    if any(p.term.ident == term.ident for p in found.parties):
        return None  # a second mention (e.g. the signature block): the party is known
    party = RawParty(term, label, value.strip(), number)
    found.parties.append(party)
    return party


def _labelled(found: Extraction, label: str, value: str, number: int) -> None:
    dates = find_dates(value)
    if len(dates) >= 2:
        found.periods.append((vocab.match_term(label, vocab.PERIODS), label, dates[0], dates[1], number))
    elif len(dates) == 1:
        found.dates.append((vocab.match_term(label, vocab.DATES), label, dates[0], number))
    elif (money := _money(label, value)) is not None:
        found.amounts.append(_raw_amount(found, label, value, money, number))
    elif not value:
        return  # a section heading such as 제3조 (계약금액)
    elif _SENTENCE.search(value) or len(value) > MAX_TEXT_VALUE:
        found.clauses.append(f"{label}: {value}")
    else:
        found.texts.append((vocab.match_term(label, vocab.TEXTS), label, value, number))


def _money(label: str, value: str) -> tuple[Decimal, str | None] | None:
    """The first amount in ``value``: marked by a currency, or unmarked under an amount label."""
    known = vocab.match_term(label, vocab.AMOUNTS) is not None
    for match in _MONEY.finditer(value):
        marker = match["pre"] or match["post"]
        if marker or (known and "," in match["num"]):
            return _decimal(match["num"] + (match["frac"] or "")), _CURRENCIES.get(marker or "")
    return None


def _raw_amount(found: Extraction, label: str, value: str, money: tuple[Decimal, str | None], number: int) -> RawAmount:
    amount, currency = money
    if currency:
        found.currencies.append(currency)
    percent = _PERCENT.search(label) or _PERCENT.search(value)
    rate = Fraction(percent["num"]) / 100 if percent else None
    return RawAmount(label, vocab.match_term(label, vocab.AMOUNTS), amount, number, rate, amount_in_words(value))


def _row(found: Extraction, line: str, number: int) -> None:
    """A table row: a line item when its last three numbers multiply out."""
    cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("|") else line.split()
    tokens = [t for cell in cells for t in ([cell] if line.startswith("|") else [cell])]
    numbers: list[Decimal] = []
    while tokens and _NUMBER_TOKEN.match(tokens[-1].replace(" ", "")):
        numbers.insert(0, _decimal(tokens.pop().lstrip("₩$€")))
    description = " ".join(t for t in tokens if t).strip()
    if len(numbers) < 3 or not description or vocab.plain_label(description) in vocab.TABLE_WORDS:
        return
    quantity, unit, amount = numbers[-3:]
    if quantity == quantity.to_integral_value() and quantity > 0 and quantity * unit == amount:
        found.items.append(RawItem(description, int(quantity), unit, amount, number))


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the regexes only pass digits
        return Decimal(0)


def find_dates(text: str) -> list[dt.date]:
    """Every valid calendar date in ``text``, in order (Korean, ISO-ish and English forms)."""
    found: list[tuple[int, dt.date]] = []
    taken: list[range] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            span = range(match.start(), match.end())
            if any(span.start in r or r.start in span for r in taken):
                continue
            date = _date(match)
            if date is not None:
                found.append((match.start(), date))
                taken.append(span)
    return [date for _, date in sorted(found, key=lambda pair: pair[0])]


def _date(match: re.Match[str]) -> dt.date | None:
    groups = match.groupdict()
    month = int(groups["m"]) if groups.get("m") else _MONTHS.get((groups.get("mn") or "")[:3].lower())
    if month is None:
        return None
    try:
        return dt.date(int(groups["y"]), month, int(groups["d"]))
    except ValueError:
        return None


def claim_idents(found: Extraction, names: Names) -> None:
    """Reserve the party-detail identifiers first: they are shared by every party."""
    for term in vocab.PARTY_DETAILS:
        if any(detail[0] is term for party in found.parties for detail in party.details):
            names.claim(term.ident)
