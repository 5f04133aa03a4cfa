"""Reading values on the host: which dates and amounts a statement prints, and how.

Amounts are read with the parser's own :func:`~agents.bank_parser.coders._runtime.clean_number`
so that what the coder concludes about a cell is what the parser will make of it. Dates are
matched against a list of English formats; where the CSV writes dates differently from the
PDF, its sample rows decide the conversion (including day and month without zero padding).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace

from agents.bank_parser.coders._runtime import clean_number, format_date, tidy

#: Date layouts tried, day-first before month-first (the more common reading worldwide).
DATE_FORMATS: tuple[str, ...] = (
    "%d-%m-%Y", "%d/%m/%Y", "%d.%m.%Y", "%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%m/%d/%Y",
    "%m-%d-%Y", "%d-%m-%y", "%d/%m/%y", "%d.%m.%y", "%m/%d/%y", "%d %b %Y", "%d-%b-%Y",
    "%d/%b/%Y", "%d %b %y", "%d-%b-%y", "%d %B %Y", "%d-%B-%Y", "%d %b, %Y", "%b %d, %Y",
    "%b %d %Y", "%B %d, %Y", "%B %d %Y", "%Y-%m-%d %H:%M:%S",
)  # fmt: skip

#: Currency marks removed from amounts, longest first ("Rs." before "Rs").
CURRENCY_TOKENS: tuple[str, ...] = (
    "INR", "USD", "EUR", "GBP", "Rs.", "Rs", "₹", "$", "€", "£", "¥",
)  # fmt: skip

#: How a "Dr"/"Cr" suffix signs an amount: debits negative.
SUFFIX_SIGNS: tuple[tuple[str, str], ...] = (("Dr", "-"), ("Cr", ""))


@dataclass(frozen=True)
class NumberFormat:
    """How amounts are written in the PDF; the parser undoes this to get the CSV's text."""

    thousands: str = ","
    decimal: str = "."
    currency_tokens: tuple[str, ...] = CURRENCY_TOKENS
    #: Suffix -> sign it implies, e.g. (("Dr", "-"), ("Cr", "")); empty: no suffixes seen.
    suffix_signs: tuple[tuple[str, str], ...] = ()

    def config(self) -> dict[str, object]:
        """The parser settings this format stands for (names as in the generated CONFIG)."""
        return {
            "thousands_separator": self.thousands,
            "decimal_separator": self.decimal,
            "currency_tokens": list(self.currency_tokens),
            "suffix_signs": dict(self.suffix_signs),
        }


#: How the host reads amounts before it knows a statement's format: suffixes included.
LENIENT = NumberFormat(suffix_signs=SUFFIX_SIGNS)


@dataclass(frozen=True)
class DateRule:
    """How a date column's PDF text becomes the CSV's text (kept when the formats agree)."""

    pdf_format: str
    csv_format: str


@functools.lru_cache(maxsize=16)
def _reader(numbers: NumberFormat) -> SimpleNamespace:
    return SimpleNamespace(**numbers.config())


def parse_number(text: str, numbers: NumberFormat = LENIENT) -> float | None:
    """Read an amount as the parser will (separators, currency, suffixes, parentheses)."""
    cleaned = clean_number(text, _reader(numbers))
    return float(cleaned) if cleaned else None


@functools.lru_cache(maxsize=1 << 16)
def parse_date(text: str, fmt: str) -> datetime | None:
    """Parse ``text`` with ``fmt`` (``%-d`` reads like ``%d``); None if it does not fit.

    Cached: ranking the candidates asks about the same cells and formats thousands of times,
    and ``strptime`` is slow.
    """
    try:
        return datetime.strptime(tidy(text), fmt.replace("%-", "%"))
    except ValueError:
        return None


def date_formats_of(values: Iterable[str]) -> list[str]:
    """The formats that read every one of ``values`` (none when there are no values)."""
    fitting: set[str] | None = None
    for value in values:
        if value:
            fitting = set(_formats_of_one(value)) & (
                fitting if fitting is not None else set(DATE_FORMATS)
            )
    return [f for f in DATE_FORMATS if fitting and f in fitting]


@functools.lru_cache(maxsize=8192)
def _formats_of_one(value: str) -> tuple[str, ...]:
    """The formats that read ``value``; cached, as the same cells are asked about often."""
    if not re.search(r"\d", value) or len(value) > 32:
        return ()
    return tuple(f for f in DATE_FORMATS if parse_date(value, f))


def is_date(text: str) -> bool:
    """Whether ``text`` reads as a date in any known format."""
    return bool(date_formats_of([tidy(text)]))


def is_numberish(text: str) -> bool:
    """Whether a cell holds an amount or a date rather than a label."""
    return parse_number(text) is not None or is_date(text)


# --- date conversion --------------------------------------------------------------------


def choose_date_rule(pdf_cells: Sequence[str], csv_values: Sequence[str]) -> DateRule:
    """The best of :func:`date_rules`: the PDF's format and the CSV's."""
    return date_rules(pdf_cells, csv_values)[0]


def date_rules(pdf_cells: Sequence[str], csv_values: Sequence[str]) -> list[DateRule]:
    """The (PDF format, CSV format) pairs that explain the samples equally well, best first.

    The CSV's format must write every sample exactly as the CSV does (that is how "5/8/2024"
    is told from "05/08/2024"). Pairs whose conversion of the PDF dates reproduces most CSV
    samples are kept; first those that keep the text, then zero-padded formats, then
    unpadded ones. Several pairs remain when the samples cannot tell (all days and months
    two digits long): the coder tries the others when the first fails.
    """
    pdf_values = [tidy(c) for c in pdf_cells if c and is_date(c)]
    pdf_options = _ranked_formats(pdf_values) or [DATE_FORMATS[0]]
    csv_options = csv_formats(csv_values) or pdf_options[:1]
    targets = set(csv_values)
    pairs = [(p, c) for p in pdf_options for c in csv_options]
    scores = {pc: _reproduced(pdf_values, pc, targets) for pc in pairs}
    top = max(scores.values())
    best = [pc for pc in pairs if scores[pc] == top]
    best.sort(key=lambda pc: (pc[0] != pc[1], _padding_rank(pc[1])))
    return [DateRule(*pc) for pc in best]


def _padding_rank(fmt: str) -> int:
    """0: zero-padded day and month; 1: neither padded; 2: one of them padded."""
    unpadded = fmt.count("%-")
    padded = sum(fmt.count(code) for code in ("%d", "%m"))
    return 0 if not unpadded else (1 if not padded else 2)


def csv_formats(values: Sequence[str]) -> list[str]:
    """Formats (with unpadded variants) that write every one of ``values`` back unchanged."""
    present = [v for v in values if v]
    options: list[str] = []
    for fmt in date_formats_of(present):
        for variant in _unpadded_variants(fmt):
            if variant not in options and all(_writes_back(v, variant) for v in present):
                options.append(variant)
    return options


def _unpadded_variants(fmt: str) -> list[str]:
    """``fmt`` and its versions with ``%-d``/``%-m`` (day or month without a leading zero)."""
    variants = [fmt]
    for code in ("%d", "%m"):
        variants += [v.replace(code, code.replace("%", "%-")) for v in variants if code in v]
    return variants


def _writes_back(value: str, fmt: str) -> bool:
    parsed = parse_date(value, fmt)
    return parsed is not None and format_date(parsed, fmt) == tidy(value)


def _ranked_formats(values: Sequence[str]) -> list[str]:
    """The date formats reading the most ``values`` (ties all kept, in order)."""
    counts = [(sum(1 for v in values if parse_date(v, f)), f) for f in DATE_FORMATS]
    top = max((n for n, _ in counts), default=0)
    return [f for n, f in counts if n and n == top]


def _reproduced(values: Sequence[str], formats: tuple[str, str], targets: set[str]) -> int:
    """How many of ``targets`` converting ``values`` with ``formats`` yields."""
    converted = set()
    for value in values:
        parsed = parse_date(value, formats[0])
        if parsed is not None:
            converted.add(value if formats[0] == formats[1] else format_date(parsed, formats[1]))
    return len(converted & targets)


# --- number formats ---------------------------------------------------------------------


def detect_numbers(cells: Iterable[str]) -> NumberFormat:
    """Thousands/decimal separators and Dr/Cr suffixes, from the amount cells in the PDF.

    A decimal comma ("1.234,56", "1 234,56") when more amounts end in a comma and one or
    two digits than in a point; an apostrophe for thousands ("1'234.50") when one shows.
    """
    cells = [c for c in cells if c]
    squeezed = [_strip_currency(c.replace(" ", "")) for c in cells]
    comma = sum(1 for c in squeezed if re.fullmatch(r"\(?-?\d+(\.\d{3})*,\d{1,2}\)?-?", c))
    point = sum(1 for c in squeezed if re.fullmatch(r"\(?-?\d+(,\d{3})*\.\d{1,2}\)?-?", c))
    apostrophe = any(re.fullmatch(r"\(?-?\d{1,3}('\d{3})+(\.\d{1,2})?\)?-?", c) for c in squeezed)
    suffixed = any(re.search(r"(?i)(cr|dr)$", c) and parse_number(c) is not None for c in cells)
    signs = SUFFIX_SIGNS if suffixed else ()
    if comma > point:
        return NumberFormat(thousands=".", decimal=",", suffix_signs=signs)
    if apostrophe:
        return NumberFormat(thousands="'", suffix_signs=signs)
    return NumberFormat(suffix_signs=signs)


def _strip_currency(text: str) -> str:
    for token in CURRENCY_TOKENS:
        text = text.replace(token, "")
    return re.sub(r"(?i)(cr|dr)$", "", text)
