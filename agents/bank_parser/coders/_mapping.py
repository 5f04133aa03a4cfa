"""Which PDF column (or computed amount) feeds each expected CSV column: by name and content.

Names are compared by spelling and by shared banking concepts ("Withdrawals" and "Debit"
are one concept). Content weighs more: the CSV's sample values found among a source's
values is strong evidence even when the names differ. A *source* is a column of the PDF's
table or an amount computed from the row (its debit part, credit part or signed amount, see
:mod:`~agents.bank_parser.coders._amounts`), so a CSV that wants separate columns where the
PDF prints one (or the reverse) maps like any other.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from agents.bank_parser.analysis import ExpectedSchema
from agents.bank_parser.coders._runtime import squash, tidy
from agents.bank_parser.coders._values import (
    LENIENT,
    NumberFormat,
    date_formats_of,
    parse_date,
    parse_number,
)

#: Generic banking vocabulary: header words that mean the same thing across statements.
SYNONYMS: dict[str, str] = {
    "withdrawal": "debit", "withdrawals": "debit", "debits": "debit", "dr": "debit",
    "out": "debit", "payments": "debit", "spent": "debit",
    "deposit": "credit", "deposits": "credit", "credits": "credit", "cr": "credit",
    "in": "credit", "receipts": "credit", "received": "credit",
    "narration": "description", "narrative": "description", "particulars": "description",
    "details": "description", "remarks": "description", "desc": "description",
    "memo": "description", "amt": "amount", "bal": "balance",
    "txn": "transaction", "tran": "transaction", "trans": "transaction", "dt": "date",
    "ref": "reference", "utr": "reference", "chq": "cheque", "check": "cheque",
    "no": "number", "num": "number",
}  # fmt: skip

#: The name a computed amount answers to, for name similarity.
DERIVED_NAMES = {"debit": "debit", "credit": "credit", "signed": "amount"}

SourceKey = int | str


@dataclass(frozen=True)
class Source:
    """Where an output column's values may come from: a header position or a computed amount."""

    key: SourceKey
    name: str
    values: frozenset[object]


def concepts(text: str) -> set[str]:
    """Words of a name mapped to their banking concept (withdrawal -> debit)."""
    return {SYNONYMS.get(t, t) for t in re.findall(r"[a-z0-9]+", text.lower())}


def name_similarity(a: str, b: str) -> float:
    """Similarity of two column names in [0, 1], by spelling and by shared banking concepts."""
    spelling = SequenceMatcher(None, squash(a), squash(b)).ratio()
    ta, tb = concepts(a), concepts(b)
    overlap = len(ta & tb) / len(ta | tb) if ta and tb else 0.0
    return max(spelling, overlap)


@functools.lru_cache(maxsize=16384)
def cell_key(cell: str, numbers: NumberFormat = LENIENT) -> object:
    """What a cell means, comparable with a sample value: a number, a date or plain text."""
    number = parse_number(cell, numbers)
    if number is not None:
        return round(number, 6)
    formats = date_formats_of([cell])
    parsed = parse_date(cell, formats[0]) if formats else None
    return parsed.date() if parsed is not None else tidy(cell).lower()


def sample_key(value: object) -> object:
    """A sample value of the expected CSV, comparable with :func:`cell_key`."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return round(float(value), 6)
    return cell_key(str(value))


def match_columns(expected: ExpectedSchema, sources: Sequence[Source]) -> dict[str, SourceKey]:
    """Map each expected column to a source, greedily on the best (column, source) pairs.

    Score: name similarity plus the share of the column's samples found among the
    source's values. Pairs under 0.5 are not used; a column left over stays empty.
    """
    pairs = [
        (name_similarity(column, source.name) + content_score(expected, column, source), i, column)
        for column in expected.columns
        for i, source in enumerate(sources)
    ]
    mapping: dict[str, SourceKey] = {}
    used: set[int] = set()
    for score, i, column in sorted(pairs, key=lambda p: (-p[0], p[1])):
        if score >= 0.5 and column not in mapping and i not in used:
            mapping[column] = sources[i].key
            used.add(i)
    return mapping


def content_score(expected: ExpectedSchema, column: str, source: Source) -> float:
    """Share of the column's non-empty sample values found among the source's values."""
    samples = [s[column] for s in expected.sample_rows if s.get(column) is not None]
    if not samples:
        return 0.0
    return sum(1 for s in samples if sample_key(s) in source.values) / len(samples)
