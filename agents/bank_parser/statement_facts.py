"""What a statement prints about itself, read from its text lines on the host.

A bank statement verifies itself: it prints an opening balance, each transaction on a line
with a date and one or more amounts (the amount, the running balance), a closing balance and
often totals. This module reads those facts from the PDF's text lines (the text layer, or
OCR lines for scanned pages), with generic vocabulary only, so that :mod:`.verify` can check
a parser's frame against them without knowing the bank.

Amounts are read as absolute integers of cents: a line's numbers are compared by value,
whatever sign convention (minus, parentheses, Dr/Cr) the statement prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
DATE_PATTERN = re.compile(
    rf"\b\d{{1,2}}[/.\-]\d{{1,2}}[/.\-]\d{{2,4}}\b|\b\d{{4}}[/.\-]\d{{1,2}}[/.\-]\d{{1,2}}\b"
    rf"|\b\d{{1,2}}[ \-]{MONTHS}[ \-,]*\d{{2,4}}\b|\b{MONTHS} \d{{1,2}},? \d{{4}}\b",
    re.IGNORECASE,
)
#: An amount: digits in groups (of three, or Indian lakh groups of two), then one or two
#: decimals after "." or ",".
AMOUNT_PATTERN = re.compile(
    r"(?<![\d.,])\d{1,3}(?:[,.'\u00a0]\d{2,3})*[.,]\d{1,2}(?!\d)|(?<![\d.,])\d+[.,]\d{1,2}(?!\d)"
)
#: A whole amount (a currency without minor units: yen, won): grouped digits or a plain number.
#: Read only from a statement that prints no amount with decimals at all.
WHOLE_PATTERN = re.compile(r"(?<![\d.,'])(?:\d{1,3}(?:[,.'\u00a0]\d{3})+|\d+)(?![\d.,']?\d)")
#: A space OCR put after a decimal separator ("7,29,242. 60CR"): closed before amounts are read,
#: as the parser's own reading drops spaces inside a cell.
OCR_GAP = re.compile(r"(?<=\d)([.,]) (?=\d{2}(?![\d.,]))")
#: The same with spaces between groups ("1 234,56"): read as an extra, alternative amount.
SPACED_PATTERN = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+[.,]\d{1,2}(?!\d)")
OPENING = re.compile(r"\b(opening|previous|starting|beginning)\s+balance\b|\bbalance\s+(brought|b/)\s*f", re.I)
CLOSING = re.compile(r"\b(closing|ending|final|new)\s+balance\b", re.I)
SUMMARY = re.compile(
    r"\b(opening|closing|previous|ending)\s+balance\b|\b(brought|carried)\s+(forward|fwd|over)\b"
    r"|\b[bc]/[fd]\b|\btotals?\b",
    re.I,
)
TOTAL_DEBITS = re.compile(r"\btotal\s+(debits?|withdrawals?|paid\s+out|money\s+out|payments?)\b", re.I)
BARE_TOTAL = re.compile(r"^\W*totals?\b(?!\s+(debit|credit|withdrawal|deposit|paid|money|payment|receipt))", re.I)
TOTAL_CREDITS = re.compile(r"\btotal\s+(credits?|deposits?|paid\s+in|money\s+in|receipts?)\b", re.I)


@dataclass(frozen=True)
class StatementLine:
    """One transaction-like line: a date and at least one amount, no summary words."""

    page: int
    text: str
    amounts: tuple[int, ...]
    """Every amount on the line, in absolute cents, left to right."""


@dataclass(frozen=True)
class StatementFacts:
    """The statement's own figures and its transaction-like lines."""

    lines: tuple[StatementLine, ...] = ()
    opening: int | None = None
    """Opening (or first brought-forward) balance in absolute cents, if printed."""
    closing: int | None = None
    """Closing balance in absolute cents, if printed."""
    debit_totals: tuple[int, ...] = ()
    credit_totals: tuple[int, ...] = ()
    bare_totals: tuple[tuple[int, ...], ...] = ()
    """Every printed total, in order: "Total debits", "Total credits", and a bare "Total"
    line's two amounts (debits and credits, in the table's column order). A file that joins
    two statement periods prints one set per period."""
    complete: bool = True
    """Whether every page was read (else counts and coverage cannot be checked)."""
    pages_read: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total_debits(self) -> int | None:
        """The last printed total of debits."""
        return self.debit_totals[-1] if self.debit_totals else None

    @property
    def total_credits(self) -> int | None:
        """The last printed total of credits."""
        return self.credit_totals[-1] if self.credit_totals else None

    def describe(self) -> str:
        """One line for the analysis summary."""
        parts = [f"{len(self.lines)} transaction-like line(s) on {self.pages_read} page(s)"]
        if not self.complete:
            parts.append("not every page read")
        for name in ("opening", "closing", "total_debits", "total_credits"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name.replace('_', ' ')} {value / 100:.2f}")
        return "statement: " + ", ".join(parts)


def cents(token: str) -> int:
    """An amount token as absolute cents: every digit counts; one decimal means tens of cents."""
    decimals = len(re.split(r"[.,]", token)[-1])
    return int(re.sub(r"\D", "", token)) * (10 if decimals == 1 else 1)


def figures_text(text: str) -> str:
    """The line with its dates blanked and OCR's gaps after decimal separators closed."""
    return OCR_GAP.sub(r"\1", DATE_PATTERN.sub(" ", text))


def amounts_in(text: str, whole: bool = False) -> tuple[int, ...]:
    """The amounts printed on a line (dates removed first, so "05.08.24" is no amount).

    Readings with spaces between digit groups come first (they may be a description's
    number next to an amount), then the plain readings, so the last is the line's last amount.
    ``whole``: every number is an amount in whole units (see :data:`WHOLE_PATTERN`).
    """
    stripped = figures_text(text)
    if whole:
        return tuple(_whole_cents(m.group(0)) for m in WHOLE_PATTERN.finditer(stripped))
    spaced = tuple(cents(m.group(0)) for m in SPACED_PATTERN.finditer(stripped))
    return spaced + tuple(cents(m.group(0)) for m in AMOUNT_PATTERN.finditer(stripped))


def last_amount(text: str, whole: bool = False) -> int | None:
    """The line's last amount, read as far left as its digit groups go: "Balance 13 297,90"
    is 13297.90, not 297.90 (for balance and total lines, which print no other number)."""
    if whole:
        found = amounts_in(text, whole=True)
        return found[-1] if found else None
    stripped = figures_text(text)
    matches = [*SPACED_PATTERN.finditer(stripped), *AMOUNT_PATTERN.finditer(stripped)]
    if not matches:
        return None
    end = max(m.end() for m in matches)
    return cents(min((m for m in matches if m.end() == end), key=lambda m: m.start()).group(0))


def _whole_cents(token: str) -> int:
    return int(re.sub(r"\D", "", token)) * 100


def prints_decimals(pages: Sequence[tuple[int, str]]) -> bool:
    """Whether any line of the statement prints an amount with decimals."""
    return any(AMOUNT_PATTERN.search(figures_text(line)) for _, text in pages for line in text.splitlines())


def has_date(text: str) -> bool:
    """Whether a line holds a date in one of the common printed forms."""
    return DATE_PATTERN.search(text) is not None


def read_facts(pages: Iterable[tuple[int, str]], complete: bool = True) -> StatementFacts:
    """The facts of a statement from its pages' text (page number, text), in order.

    The first line naming an opening or brought-forward balance gives the opening balance;
    the last naming a closing balance gives the closing one. A statement that prints no
    amount with decimals anywhere (yen, won) has its numbers read as whole amounts.
    """
    pages = list(pages)
    whole = not prints_decimals(pages)  # a currency without minor units: whole amounts
    lines: list[StatementLine] = []
    opening = closing = None
    debits: list[int] = []
    credits: list[int] = []
    bare: list[tuple[int, ...]] = []
    count = 0
    for number, text in pages:
        count += 1
        for raw in text.splitlines():
            amounts = amounts_in(raw, whole)
            if not amounts:
                continue
            if opening is None and not lines and OPENING.search(raw):
                opening = last_amount(raw, whole)
            if CLOSING.search(raw):
                closing = last_amount(raw, whole)
            both = TOTAL_DEBITS.search(raw) and TOTAL_CREDITS.search(raw) and len(amounts) > 1
            if TOTAL_DEBITS.search(raw):
                debits.append(amounts[0])
            if TOTAL_CREDITS.search(raw):
                credits.append(amounts[-1] if both else last_amount(raw, whole) or amounts[0])
            if BARE_TOTAL.search(raw) and len(amounts) == 2:
                bare.append(amounts)
            if has_date(raw) and not SUMMARY.search(raw):
                lines.append(StatementLine(number, " ".join(raw.split()), amounts))
    return StatementFacts(
        tuple(lines), opening, closing, debit_totals=tuple(debits), credit_totals=tuple(credits),
        bare_totals=tuple(bare), complete=complete, pages_read=count,
    )
