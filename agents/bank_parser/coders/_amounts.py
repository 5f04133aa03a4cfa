"""How a statement prints each transaction's amount and direction.

Three models, told apart by the table's columns and their content:

* ``split``: separate debit and credit columns (which is which: by name, else by the
  balance, which goes down by debits and up by credits);
* ``signed``: one amount column whose sign is printed (minus, parentheses or a Dr suffix);
* ``marker``: one unsigned amount column next to a Dr/Cr column.

The balance column is not a transaction amount. Reference and cheque-number columns hold
numbers too, but are recognised by their names or by zero-padded integers, and left alone.
With a model known, the coder can offer the CSV computed columns (debit part, credit part,
signed amount) whatever the PDF prints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.bank_parser.coders._mapping import concepts
from agents.bank_parser.coders._runtime import squash
from agents.bank_parser.coders._table import Layout
from agents.bank_parser.coders._values import NumberFormat, is_date, parse_number

AMOUNT_WORDS = frozenset({"debit", "credit", "amount", "balance", "paid", "money", "value"})
REFERENCE_WORDS = frozenset({"reference", "cheque", "number", "id", "instrument", "code"})
DEBIT_MARKERS = ("d", "dr", "debit", "withdrawal")
MARKERS = frozenset(DEBIT_MARKERS) | {"c", "cr", "credit", "deposit"}
NUMERIC_SHARE = 0.6
MARKER_SHARE = 0.8


@dataclass(frozen=True)
class AmountModel:
    """Which header positions hold a row's amount, and how its direction is shown."""

    kind: str  # "split" | "signed" | "marker"
    debit: int | None = None
    credit: int | None = None
    amount: int | None = None
    marker: int | None = None

    def config(self) -> dict[str, object]:
        """The parser's ``amounts`` setting."""
        if self.kind == "split":
            return {"kind": "split", "debit": self.debit, "credit": self.credit}
        if self.kind == "marker":
            return {
                "kind": "marker",
                "amount": self.amount,
                "marker": self.marker,
                "debit_markers": list(DEBIT_MARKERS),
            }
        return {"kind": "signed", "amount": self.amount}


def detect_amounts(layout: Layout, numbers: NumberFormat) -> AmountModel | None:
    """The amount model of ``layout``'s table, or None when it has no amount columns."""
    numeric = numeric_columns(layout, numbers)
    balances = [i for i in numeric if "balance" in concepts(layout.labels[i])]
    balance = balances[-1] if balances else None
    amounts = [i for i in numeric if i != balance]
    if len(amounts) == 1:
        marker = marker_column(layout)
        if marker is not None:
            return AmountModel("marker", amount=amounts[0], marker=marker)
        return AmountModel("signed", amount=amounts[0])
    if len(amounts) >= 2:
        pair = _debit_credit(layout, amounts, balance, numbers)
        if pair is not None:
            return AmountModel("split", debit=pair[0], credit=pair[1])
    return None


def numeric_columns(layout: Layout, numbers: NumberFormat) -> list[int]:
    """Header positions whose cells are mostly amounts (not dates, not references)."""
    out = []
    for i, label in enumerate(layout.labels):
        cells = [c for c in layout.column(i) if c]
        words = concepts(label)
        if not cells or (words & REFERENCE_WORDS and not words & AMOUNT_WORDS):
            continue
        amounts = [c for c in cells if parse_number(c, numbers) is not None and not is_date(c)]
        if len(amounts) >= NUMERIC_SHARE * len(cells) and not _zero_padded(amounts):
            out.append(i)
    return out


def _zero_padded(cells: Sequence[str]) -> bool:
    """Integers with leading zeros: cheque or reference numbers, not amounts."""
    return sum(1 for c in cells if re.fullmatch(r"0\d+", c.strip())) >= 0.5 * len(cells)


def marker_column(layout: Layout) -> int | None:
    """A column whose cells are Dr/Cr markers."""
    for i in range(len(layout.labels)):
        cells = [squash(c) for c in layout.column(i) if c]
        if len(cells) >= 3 and sum(1 for c in cells if c in MARKERS) >= MARKER_SHARE * len(cells):
            return i
    return None


def _debit_credit(
    layout: Layout, amounts: Sequence[int], balance: int | None, numbers: NumberFormat
) -> tuple[int, int] | None:
    """(debit position, credit position) among two or more amount columns."""
    debits = [i for i in amounts if "debit" in concepts(layout.labels[i])]
    credits = [i for i in amounts if "credit" in concepts(layout.labels[i])]
    if len(debits) == 1 and len(credits) == 1 and debits != credits:
        return debits[0], credits[0]
    if len(amounts) != 2:
        return None
    first, second = amounts
    if balance is not None:
        vote = _balance_vote(layout, first, second, balance, numbers)
        if vote:
            return (second, first) if vote > 0 else (first, second)
    return first, second


def _balance_vote(layout: Layout, a: int, b: int, balance: int, numbers: NumberFormat) -> int:
    """Positive when the balance rises by column ``a`` (a holds credits), negative for ``b``."""
    votes = 0
    previous: float | None = None
    for cells, _ in layout.rows:
        current = parse_number(cells[balance], numbers)
        if current is None:
            continue
        va = abs(parse_number(cells[a], numbers) or 0.0)
        vb = abs(parse_number(cells[b], numbers) or 0.0)
        if previous is not None and (va or vb):
            delta = current - previous
            votes += 1 if math.isclose(delta, va - vb, abs_tol=0.005) else 0
            votes -= 1 if math.isclose(delta, vb - va, abs_tol=0.005) else 0
        previous = current
    return votes
