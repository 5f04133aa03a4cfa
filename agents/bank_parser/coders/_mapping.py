"""Which PDF column (or computed amount) feeds each expected CSV column: by name and content.

Content decides first: the CSV's sample rows are lined up with the table's first dated
rows, and a source that holds the sample's value in the same row (or is empty where the
sample is) agrees with it. Names help where content cannot tell (spelling and shared
banking concepts: "Withdrawals" and "Debit" are one concept), and are ignored when barely
alike, so a CSV named in another language maps by content alone. A *source* is a column of
the PDF's table or an amount computed from the row (its debit part, credit part or signed
amount, see :mod:`~agents.bank_parser.coders._amounts`), so a CSV that wants separate
columns where the PDF prints one (or the reverse) maps like any other.
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

#: Names less alike than this say nothing (short words share letters by chance).
NAME_FLOOR = 0.6
NAME_WEIGHT = 0.5
#: The CSV's first row is looked for among the table's first few dated rows (balance rows).
MAX_OFFSET = 5

#: The name a computed amount answers to, for name similarity.
DERIVED_NAMES = {"debit": "debit", "credit": "credit", "signed": "amount"}

SourceKey = int | str


@dataclass(frozen=True)
class Source:
    """Where an output column's values may come from: a header position or a computed amount."""

    key: SourceKey
    name: str
    values: tuple[object, ...]
    """The source's value (a :func:`cell_key`, None when empty) on each dated row of the table."""


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
    """What a cell means, comparable with a sample value: a date, a number or plain text.

    Dates first: with a decimal comma, "01.09.23" would also read as the number 10923.
    """
    formats = date_formats_of([cell])
    parsed = parse_date(cell, formats[0]) if formats else None
    if parsed is not None:
        return parsed.date()
    number = parse_number(cell, numbers)
    return round(number, 6) if number is not None else tidy(cell).lower()


def sample_key(value: object) -> object:
    """A sample value of the expected CSV, comparable with :func:`cell_key`."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return round(float(value), 6)
    return cell_key(str(value))


def match_columns(
    expected: ExpectedSchema, sources: Sequence[Source], *, pair: bool = True
) -> dict[str, SourceKey]:
    """Map each expected column to a source, greedily on the best (column, source) pairs.

    Score: the share of sample rows the source agrees with (see :func:`content_score`) plus
    half the name similarity when the names are clearly alike. Pairs under 0.5 are not
    used; a column left over stays empty. With ``pair``, a debit/credit pair of computed
    amounts is settled first (see :func:`_debit_credit_pair`).
    """
    offset = align(expected, sources)
    pairs = [
        (
            content_score(expected, column, source, offset)
            + NAME_WEIGHT * _name_score(column, source.name),
            i,
            column,
        )
        for column in expected.columns
        for i, source in enumerate(sources)
    ]
    mapping, used = _debit_credit_pair(pairs, sources) if pair else ({}, set())
    for score, i, column in sorted(pairs, key=lambda p: (-p[0], p[1])):
        if score >= 0.5 and column not in mapping and i not in used:
            mapping[column] = sources[i].key
            used.add(i)
    return mapping


def _debit_credit_pair(
    pairs: Sequence[tuple[float, int, str]], sources: Sequence[Source]
) -> tuple[dict[str, SourceKey], set[int]]:
    """Two CSV columns that are at their best as the computed debit and credit parts.

    When the samples show only debits, "the PDF's Amount column" explains the debit column
    as well as "the debit part" does; that another column is the credit part settles it.
    """
    index = {s.key: i for i, s in enumerate(sources)}
    if "debit" not in index or "credit" not in index:
        return {}, set()
    best: dict[str, float] = {}
    for score, _, column in pairs:
        best[column] = max(best.get(column, 0.0), score)
    at_best = {(i, column) for score, i, column in pairs if score >= 0.5 and score == best[column]}
    debits = [c for i, c in at_best if i == index["debit"]]
    credits = [c for i, c in at_best if i == index["credit"]]
    if len(debits) == 1 and len(credits) == 1 and debits != credits:
        return {debits[0]: "debit", credits[0]: "credit"}, {index["debit"], index["credit"]}
    return {}, set()


def _name_score(a: str, b: str) -> float:
    similarity = name_similarity(a, b)
    return similarity if similarity >= NAME_FLOOR else 0.0


def align(expected: ExpectedSchema, sources: Sequence[Source]) -> int | None:
    """Which dated row of the table the CSV's first sample row is (None: no row agrees).

    The offset where most sample values reappear in the same rows wins; the table's first
    rows may be balance rows the CSV leaves out.
    """
    rows = min((len(s.values) for s in sources), default=0)
    best: tuple[int, int] | None = None
    for offset in range(min(rows, MAX_OFFSET + 1)):
        hits = 0
        for r, sample in enumerate(expected.sample_rows[: rows - offset]):
            wanted = {sample_key(v) for v in sample.values() if v is not None}
            hits += len(wanted & {s.values[offset + r] for s in sources})
        if hits and (best is None or hits > best[0]):
            best = (hits, offset)
    return None if best is None else best[1]


def content_score(
    expected: ExpectedSchema, column: str, source: Source, offset: int | None
) -> float:
    """Share of the sample rows where the source holds the sample's value (or, like the
    sample, nothing) in the aligned row; 0 when the rows could not be aligned."""
    if offset is None:
        return 0.0
    compared = agreed = 0
    for r, sample in enumerate(expected.sample_rows):
        if offset + r >= len(source.values):
            break
        compared += 1
        agreed += agrees(sample.get(column), source.values[offset + r])
    return agreed / compared if compared else 0.0


def agrees(sample: object, value: object) -> bool:
    """Whether a cell's key stands for a sample value: equal, both empty, or a long text
    whose first words the cell holds (a description wrapped onto lines the cell lacks)."""
    if sample is None or value is None:
        return sample is None and value is None
    key = sample_key(sample)
    if key == value:
        return True
    return (
        isinstance(key, str)
        and isinstance(value, str)
        and len(key) >= 8
        and len(value) >= 4
        and key.startswith(value + " ")
    )
