"""Columns for a statement without an expected CSV: the target's output schema (issue 15).

With no samples to line up, roles are found in the table itself: the first column whose
cells are mostly dates is the date, the text column with the longest cells the description,
the numeric column named like a balance the balance, and the amounts are the computed debit
and credit parts (or the signed amount) of the row's amount model, whatever the PDF prints.
"""

from __future__ import annotations

import statistics

from agents.bank_parser.coders._amounts import AmountModel, numeric_columns
from agents.bank_parser.coders._columns import ColumnSpec
from agents.bank_parser.coders._mapping import concepts
from agents.bank_parser.coders._table import Layout
from agents.bank_parser.coders._values import DateRule, NumberFormat, date_formats_of, is_date
from agents.bank_parser.output_schema import OutputSchema

DATE_SHARE = 0.6


def balance_position(layout: Layout, numbers: NumberFormat) -> int | None:
    """The header position of the running balance (the last numeric column named so)."""
    found = [i for i in numeric_columns(layout, numbers) if "balance" in concepts(layout.labels[i])]
    return found[-1] if found else None


def date_position(layout: Layout) -> int | None:
    """The first column whose filled cells are mostly dates."""
    for i in range(len(layout.labels)):
        filled = [c for c in layout.column(i) if c]
        if filled and sum(1 for c in filled if is_date(c)) >= DATE_SHARE * len(filled):
            return i
    return None


def description_position(layout: Layout, taken: set[int], numbers: NumberFormat) -> int | None:
    """The text column with the longest cells (a narration), not a date or an amount."""
    numeric = set(numeric_columns(layout, numbers))
    best: tuple[float, int] | None = None
    for i in range(len(layout.labels)):
        if i in taken or i in numeric:
            continue
        filled = [c for c in layout.column(i) if c and not is_date(c)]
        if not filled:
            continue
        length = statistics.mean(len(c) for c in filled)
        if best is None or length > best[0]:
            best = (length, i)
    return None if best is None else best[1]


def schema_specs(
    layout: Layout, schema: OutputSchema, numbers: NumberFormat, amounts: AmountModel | None
) -> list[ColumnSpec]:
    """One spec per schema column, sources found by role."""
    date = date_position(layout)
    balance = balance_position(layout, numbers)
    description = description_position(layout, {p for p in (date, balance) if p is not None}, numbers)
    specs = []
    for name, role in schema.columns():
        if role == "date":
            cells = [c for c in layout.column(date) if c and is_date(c)] if date is not None else []
            formats = date_formats_of(cells) or ["%d/%m/%Y"]
            rule = DateRule(formats[0], schema.date_format)
            specs.append(ColumnSpec(name, date, "date", "str", True, (rule,)))
        elif role == "description":
            specs.append(ColumnSpec(name, description, "text", "str", False))
        elif role == "balance":
            specs.append(ColumnSpec(name, balance, "number", "float64", balance is not None))
        else:
            source = {"debit": "debit", "credit": "credit", "amount": "signed"}[role]
            specs.append(ColumnSpec(name, source if amounts else None, "number", "float64", False))
    return specs
