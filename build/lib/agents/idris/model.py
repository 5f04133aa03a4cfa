"""What the analysis finds in a document: typed, frozen records the generator works from.

Every field carries an Idris identifier (``ident``) chosen once, here, so that the
analysis markdown, the generated module and the fixer all speak of the same names.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

InvariantKind = Literal["sum", "rate", "product", "items_sum", "order"]
Origin = Literal["observed", "stated", "rule"]
Rounding = Literal["exact", "down", "up"]


@dataclass(frozen=True)
class TextField:
    """A labelled piece of text (contract number, title, ...)."""

    ident: str
    label: str
    value: str
    line: int


@dataclass(frozen=True)
class Amount:
    """A labelled amount of money, in minor units (``scale`` per major unit, see the analysis)."""

    ident: str
    label: str
    value: int
    role: str
    line: int
    stated_rate: Fraction | None = None
    in_words: str = ""
    words_value: int | None = None


@dataclass(frozen=True)
class DateField:
    """A labelled calendar date."""

    ident: str
    label: str
    value: dt.date
    role: str
    line: int


@dataclass(frozen=True)
class Period:
    """A labelled range of dates (``start``..``end``)."""

    ident: str
    label: str
    start: dt.date
    end: dt.date
    line: int


@dataclass(frozen=True)
class PartyDetail:
    """One labelled detail of a party (registration number, representative, ...)."""

    ident: str
    label: str
    value: str


@dataclass(frozen=True)
class Party:
    """A party of the document: its role (갑, Seller, 기안자 ...), name and details."""

    ident: str
    role_label: str
    role: str
    name: str
    details: tuple[PartyDetail, ...]
    line: int

    def detail(self, ident: str) -> str:
        """The value of detail ``ident``, or ``""``."""
        return next((d.value for d in self.details if d.ident == ident), "")


@dataclass(frozen=True)
class LineItem:
    """A row of an itemised table: quantity × unit price = amount."""

    description: str
    quantity: int
    unit_price: int
    amount: int
    line: int


@dataclass(frozen=True)
class Invariant:
    """A rule the document's data obey (or, with ``holds=False``, should obey but do not).

    Attributes:
        kind: ``sum`` (terms[0] = terms[1] + terms[2] ...), ``rate`` (terms[0] = terms[1] ×
            rate), ``product`` (each line item: amount = unit price × quantity), ``items_sum``
            (the line items add up to terms[0]), ``order`` (date terms[0] ≤ date terms[1]).
        statement: The rule in the document's own words (labels).
        formula: The rule in identifiers, as the module names them.
        terms: Identifiers involved (``period.start`` for a period's bounds).
        rate: For ``rate``, the factor (e.g. 1/10).
        rounding: For ``rate``, whether the result is exact or rounded down/up to a unit.
        holds: Whether the document's numbers satisfy it.
        origin: ``observed`` (found in the numbers), ``stated`` (the text names the rate),
            ``rule`` (a rule of the domain, e.g. a period starts before it ends).
    """

    kind: InvariantKind
    statement: str
    formula: str
    terms: tuple[str, ...]
    rate: Fraction | None = None
    rounding: Rounding = "exact"
    holds: bool = True
    origin: Origin = "observed"


@dataclass(frozen=True)
class DocumentAnalysis:
    """Everything the offline analysis found in one document."""

    source: str
    kind: str
    pages: int
    title: str
    document_type: str
    detected_type: str
    currency: str
    scale: int
    text_fields: tuple[TextField, ...] = ()
    parties: tuple[Party, ...] = ()
    amounts: tuple[Amount, ...] = ()
    dates: tuple[DateField, ...] = ()
    periods: tuple[Period, ...] = ()
    items: tuple[LineItem, ...] = ()
    clauses: tuple[str, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def amount(self, ident: str) -> Amount | None:
        """The amount named ``ident``, if any."""
        return next((a for a in self.amounts if a.ident == ident), None)

    def violated(self) -> tuple[Invariant, ...]:
        """Rules the document itself breaks."""
        return tuple(i for i in self.invariants if not i.holds)
