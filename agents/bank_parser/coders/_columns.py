"""One output column of a parser plan (shared by the plan and the schema-driven columns)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.bank_parser.coders._mapping import SourceKey
from agents.bank_parser.coders._values import DateRule

Kind = Literal["text", "number", "date"]


@dataclass(frozen=True)
class ColumnSpec:
    """One output column: its name and dtype, where its values come from, their kind.

    ``source`` is a header position (an int), a computed amount (``"debit"``, ``"credit"``,
    ``"signed"``) or None (no source found: the column is left empty).
    """

    name: str
    source: SourceKey | None
    kind: Kind
    dtype: str
    always_present: bool
    dates: tuple[DateRule, ...] = ()
    """For date columns: the format pairs that fit the samples, best first."""

    @property
    def date(self) -> DateRule | None:
        """The best date rule (None for other kinds)."""
        return self.dates[0] if self.dates else None
