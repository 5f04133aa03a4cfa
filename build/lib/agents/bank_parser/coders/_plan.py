"""From an analysis to parser plans: what the offline coder knows about a statement's table.

A :class:`ParserPlan` is plain data (which extraction strategy, which PDF header label feeds
which output column, how numbers and dates are normalised, which rows are kept). The
template turns a plan into source code; the coder picks among plans. Nothing here is
specific to a bank: every decision comes from the PDF's header words, the expected CSV's
column names and dtypes, and its few sample rows.

Extending to new layouts means adding a field (with a default that keeps today's
behaviour) and the detection that sets it, not rewriting the pipeline.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from difflib import SequenceMatcher
from typing import Literal

from agents.bank_parser.analysis import Analysis, ExpectedSchema, PageAnalysis, Word

Kind = Literal["text", "number", "date"]
Strategy = Literal["ruled_tables", "word_positions", "aligned_tables"]

#: Date layouts tried, day-first before month-first (the more common reading worldwide).
DATE_FORMATS: tuple[str, ...] = (
    "%d-%m-%Y", "%d/%m/%Y", "%d.%m.%Y", "%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%m-%d-%Y",
    "%d-%m-%y", "%d/%m/%y", "%d %b %Y", "%d-%b-%Y", "%d/%b/%Y", "%d %b %y", "%d-%b-%y",
    "%d %B %Y", "%b %d, %Y", "%B %d, %Y", "%Y-%m-%d %H:%M:%S",
)  # fmt: skip

#: Generic banking vocabulary: header words that mean the same thing across statements.
SYNONYMS: dict[str, str] = {
    "withdrawal": "debit", "withdrawals": "debit", "debits": "debit", "dr": "debit",
    "deposit": "credit", "deposits": "credit", "credits": "credit", "cr": "credit",
    "narration": "description", "particulars": "description", "details": "description",
    "remarks": "description", "desc": "description", "amt": "amount", "bal": "balance",
    "txn": "transaction", "tran": "transaction", "dt": "date",
}  # fmt: skip

TEXT_DTYPES = frozenset({"str", "object", "string"})
NUMERIC_DTYPES = frozenset({"float64", "int64", "Float64", "Int64", "float32", "int32"})
SUFFIXES = ("cr", "dr")
CURRENCY_TOKENS = ("₹", "$", "€", "£", "¥", "Rs.", "INR")
LINE_TOLERANCE = 3.0


@dataclass(frozen=True)
class DateRule:
    """How a date column's PDF text becomes the CSV's text (kept when the formats agree)."""

    pdf_format: str
    csv_format: str


@dataclass(frozen=True)
class NumberFormat:
    """How amounts are written in the PDF; the parser undoes this to get the CSV's text."""

    thousands: str = ","
    decimal: str = "."
    currency_tokens: tuple[str, ...] = CURRENCY_TOKENS
    #: Suffix -> sign it implies, e.g. (("Dr", "-"), ("Cr", "")); empty: no suffixes seen.
    suffix_signs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ColumnSpec:
    """One output column: its name and dtype, the PDF header label it comes from, its kind."""

    name: str
    label: str | None
    kind: Kind
    dtype: str
    always_present: bool
    date: DateRule | None = None


@dataclass(frozen=True)
class ParserPlan:
    """Everything the template needs to write one parser; a candidate the coder may try."""

    strategy: Strategy
    header_labels: tuple[str, ...]
    columns: tuple[ColumnSpec, ...]
    numbers: NumberFormat = field(default_factory=NumberFormat)
    row_filter: Literal["strict", "lenient"] = "strict"
    continuation: Literal["drop", "merge"] = "drop"
    boundary: Literal["valley", "gap_midpoint", "center_midpoint"] = "valley"
    line_tolerance: float = LINE_TOLERANCE
    max_continuation_gap: float = 0.0

    @property
    def label(self) -> str:
        """A short, stable name of the approach, used as the attempt's strategy."""
        parts = [self.strategy, self.row_filter, self.continuation]
        if self.strategy != "ruled_tables":
            parts.append(self.boundary)
        return "/".join(parts)

    @property
    def required(self) -> tuple[str, ...]:
        """Columns a transaction row must have a value in; other rows are dropped."""
        mapped = [c for c in self.columns if c.label]
        dates = tuple(c.name for c in mapped if c.kind == "date")
        if self.row_filter == "lenient" and dates:
            return dates
        return dates + tuple(c.name for c in mapped if c.kind == "number" and c.always_present)


@dataclass
class Layout:
    """A table found in the analysed pages: its header labels and the text under each."""

    source: Literal["tables", "words"]
    labels: list[str]
    values: list[list[str]]
    line_pitch: float = 0.0
    continuations: int = 0


# --- text helpers -----------------------------------------------------------------------


def squash(text: str) -> str:
    """Lowercase letters and digits only, so "Debit\\nAmt." and "debit amt" compare equal."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def tidy(text: str | None) -> str:
    """Collapse whitespace (wrapped cells hold newlines); None becomes empty."""
    return " ".join((text or "").split())


def name_similarity(a: str, b: str) -> float:
    """Similarity of two column names in [0, 1], by spelling and by shared banking concepts."""
    spelling = SequenceMatcher(None, squash(a), squash(b)).ratio()
    ta, tb = _concepts(a), _concepts(b)
    overlap = len(ta & tb) / len(ta | tb) if ta and tb else 0.0
    return max(spelling, overlap)


def _concepts(text: str) -> set[str]:
    """Words of a name mapped to their banking concept (withdrawal -> debit)."""
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return {SYNONYMS.get(t, t) for t in tokens}


def parse_number(text: str, numbers: NumberFormat = NumberFormat()) -> float | None:
    """Read an amount as the parser will (separators, currency, suffixes, parentheses)."""
    value = text.replace(" ", "")
    for token in numbers.currency_tokens:
        value = value.replace(token, "")
    value = re.sub(r"(?i)(cr|dr)$", "", value)
    negative = value.startswith("(") and value.endswith(")")
    value = value.strip("()")
    if numbers.thousands:
        value = value.replace(numbers.thousands, "")
    value = value.replace(numbers.decimal, ".")
    if not re.fullmatch(r"[-+]?\d+(\.\d+)?-?", value):
        return None
    number = float(value.rstrip("-"))
    return -number if negative or value.endswith("-") else number


def parse_date(text: str, fmt: str) -> datetime | None:
    """Parse ``text`` with ``fmt``; None when it does not fit."""
    try:
        return datetime.strptime(tidy(text), fmt)
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


@functools.lru_cache(maxsize=4096)
def _formats_of_one(value: str) -> tuple[str, ...]:
    """The formats that read ``value``; cached, as the same cells are asked about often."""
    if not re.search(r"\d", value) or len(value) > 32:
        return ()
    return tuple(f for f in DATE_FORMATS if parse_date(value, f))


def is_date(text: str) -> bool:
    """Whether ``text`` reads as a date in any known format."""
    return bool(date_formats_of([tidy(text)]))


# --- finding the table header -----------------------------------------------------------


def group_lines(words: Sequence[Word], tolerance: float = LINE_TOLERANCE) -> list[list[Word]]:
    """Group words into text lines by their top edge, each line sorted left to right."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w.top, w.x0)):
        if lines and abs(word.top - lines[-1][0].top) <= tolerance:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w.x0) for line in lines]


def split_header(line: Sequence[Word]) -> list[tuple[str, float, float]]:
    """Split a header line into labels where the gap is wider than about a word's height.

    Words of one label ("Debit Amt") are a space apart; columns are much further apart.
    """
    groups: list[list[Word]] = []
    for word in line:
        gap_limit = 0.8 * (word.bottom - word.top)
        if groups and word.x0 - groups[-1][-1].x1 <= gap_limit:
            groups[-1].append(word)
        else:
            groups.append([word])
    return [(" ".join(w.text for w in g), g[0].x0, g[-1].x1) for g in groups]


def header_score(labels: Sequence[str], expected: ExpectedSchema | None) -> float:
    """How much a row of labels looks like the table header (higher is better, 0: not)."""
    if len(labels) < 2 or any(not squash(x) or is_numberish(x) for x in labels):
        return 0.0
    if expected is None:
        return 0.5
    best = [max(name_similarity(col, x) for x in labels) for col in expected.columns]
    hits = sum(1 for b in best if b >= 0.6)
    return hits / len(expected.columns) if hits >= min(2, len(expected.columns)) else 0.0


def is_numberish(text: str) -> bool:
    """Whether a cell holds an amount or a date rather than a label."""
    return parse_number(text) is not None or is_date(text)


def cut_points(spans: Sequence[tuple[float, float]], below: Sequence[Word]) -> list[float]:
    """X positions separating adjacent columns: the emptiest x between two label centres.

    The same "valley" rule as the generated parser's default, so the analysis sees the
    columns the parser will.
    """
    centres = [(x0 + x1) / 2 for x0, x1 in spans]
    return [emptiest_x(a, b, below) for a, b in itertools.pairwise(centres)]


def emptiest_x(left: float, right: float, words: Sequence[Word]) -> float:
    """The middle of the widest run of x positions in (left, right) crossed by fewest words."""
    spans = [(w.x0, w.x1) for w in words if w.x1 > left and w.x0 < right]
    xs = [left + step for step in range(1, int(right - left))]
    if not xs:
        return (left + right) / 2
    counts = [sum(1 for x0, x1 in spans if x0 <= x <= x1) for x in xs]
    least = min(counts)
    best: list[float] = []
    run: list[float] = []
    for x, count in zip(xs, counts, strict=True):
        run = [*run, x] if count == least else []
        best = run if len(run) > len(best) else best
    return (best[0] + best[-1]) / 2


def split_line(line: Sequence[Word], cuts: Sequence[float]) -> list[str]:
    """Assign each word to the column its centre falls in; join words per column."""
    cells: list[list[str]] = [[] for _ in range(len(cuts) + 1)]
    for word in line:
        centre = (word.x0 + word.x1) / 2
        cells[sum(1 for cut in cuts if centre > cut)].append(word.text)
    return [" ".join(c) for c in cells]


def table_layout(pages: Sequence[PageAnalysis], expected: ExpectedSchema | None) -> Layout | None:
    """The ruled tables' header row (best match among each table's first rows) and values."""
    layout: Layout | None = None
    for table in (t for page in pages for t in page.tables):
        rows = [[tidy(c) for c in row] for row in table]
        scored = [(header_score(r, expected), i) for i, r in enumerate(rows[:3])]
        score, at = max(scored, default=(0.0, 0))
        if score > 0 and (layout is None or rows[at] == layout.labels):
            layout = layout or Layout("tables", rows[at], [[] for _ in rows[at]])
            _add_rows(layout, rows[at + 1 :])
        elif layout is not None and rows and len(rows[0]) == len(layout.labels):
            _add_rows(layout, rows)  # a continuation table without its own header
    return layout


def _add_rows(layout: Layout, rows: Iterable[Sequence[str]]) -> None:
    """Append rows as wide as the header to the layout's columns; skip the others."""
    for row in rows:
        if len(row) == len(layout.labels):
            for column, cell in zip(layout.values, row, strict=True):
                column.append(cell)


def word_layout(pages: Sequence[PageAnalysis], expected: ExpectedSchema | None) -> Layout | None:
    """The header line found among the positioned words, and the words under each label."""
    layout: Layout | None = None
    for page in pages:
        lines = group_lines(page.words)
        at = _header_line(lines, expected)
        if at is None:
            continue
        groups = split_header(lines[at])
        labels = [g[0] for g in groups]
        if layout is not None and labels != layout.labels:
            continue
        layout = layout or Layout("words", labels, [[] for _ in labels])
        below = lines[at + 1 :]
        cuts = cut_points([(g[1], g[2]) for g in groups], [w for line in below for w in line])
        _add_rows(layout, (split_line(line, cuts) for line in below))
        layout.line_pitch = layout.line_pitch or _line_pitch(lines[at:])
        layout.continuations += _continuations(below, layout.line_pitch)
    return layout


def _continuations(lines: Sequence[Sequence[Word]], pitch: float) -> int:
    """Lines without amounts or dates right under a line with some: wrapped text."""
    count = 0
    for above, line in itertools.pairwise(lines):
        close = line[0].top - above[0].top <= 1.6 * pitch
        if close and _has_data(above) and not _has_data(line):
            count += 1
    return count


def _has_data(line: Sequence[Word]) -> bool:
    """Whether a line holds an amount or a date, i.e. is not just labels or prose."""
    return any(is_numberish(w.text) for w in line)


def _header_line(lines: Sequence[Sequence[Word]], expected: ExpectedSchema | None) -> int | None:
    """Index of the header line: the best-scoring line followed by a line with data in it."""
    best: tuple[float, int] | None = None
    for i, line in enumerate(lines[:-1]):
        score = header_score([g[0] for g in split_header(line)], expected)
        if score > 0 and _has_data(lines[i + 1]) and (best is None or score > best[0]):
            best = (score, i)
            if expected is None:
                break
    return None if best is None else best[1]


def _line_pitch(lines: Sequence[Sequence[Word]]) -> float:
    """Typical distance between consecutive lines, to tell a wrapped line from a gap."""
    tops = [line[0].top for line in lines]
    gaps = [b - a for a, b in itertools.pairwise(tops) if b > a]
    return statistics.median(gaps) if gaps else 0.0


# --- matching expected columns to header labels -----------------------------------------


def match_columns(layout: Layout, expected: ExpectedSchema) -> dict[str, int]:
    """Map each expected column to a header label by name similarity plus sample content.

    Greedy on the best (column, label) pairs: a column's samples appearing under a label is
    strong evidence even when the names differ ("Withdrawal" for "Debit Amt").
    """
    keys = [{_cell_key(c) for c in cells if c} for cells in layout.values]
    pairs = [
        (name_similarity(col, label) + _content_score(expected, col, keys[i]), col, i)
        for col in expected.columns
        for i, label in enumerate(layout.labels)
    ]
    mapping: dict[str, int] = {}
    for score, col, i in sorted(pairs, key=lambda p: -p[0]):
        if score >= 0.5 and col not in mapping and i not in mapping.values():
            mapping[col] = i
    return mapping


def _content_score(expected: ExpectedSchema, column: str, keys: set[object]) -> float:
    """Share of the column's non-empty sample values found among a label's cell ``keys``."""
    samples = [s[column] for s in expected.sample_rows if s.get(column) is not None]
    if not samples:
        return 0.0
    return sum(1 for s in samples if _sample_key(s) in keys) / len(samples)


@functools.lru_cache(maxsize=4096)
def _cell_key(cell: str) -> object:
    """What a cell means, comparable with a sample value: a number, a date or plain text."""
    number = parse_number(cell)
    if number is not None:
        return round(number, 6)
    formats = date_formats_of([cell])
    return parse_date(cell, formats[0]).date() if formats else tidy(cell).lower()  # type: ignore[union-attr]


def _sample_key(value: object) -> object:
    """A sample value of the expected CSV, comparable with :func:`_cell_key`."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return round(float(value), 6)
    return _cell_key(str(value))


# --- column specs, dates and numbers ----------------------------------------------------


def expected_specs(layout: Layout, expected: ExpectedSchema) -> list[ColumnSpec]:
    """One spec per expected column, in the CSV's order, from the matched labels."""
    mapping = match_columns(layout, expected)
    specs = []
    for col in expected.columns:
        samples = [s.get(col) for s in expected.sample_rows]
        present = [str(v) for v in samples if v is not None]
        cells = layout.values[mapping[col]] if col in mapping else []
        kind = _expected_kind(expected.dtypes[col], present)
        specs.append(
            ColumnSpec(
                name=col,
                label=layout.labels[mapping[col]] if col in mapping else None,
                kind=kind,
                dtype=expected.dtypes[col],
                always_present=bool(samples) and len(present) == len(samples),
                date=choose_date_rule(cells, present) if kind == "date" else None,
            )
        )
    return specs


def _expected_kind(dtype: str, present: Sequence[str]) -> Kind:
    """Number for numeric dtypes, date for text whose samples read as dates."""
    if dtype in NUMERIC_DTYPES:
        return "number"
    if dtype in TEXT_DTYPES and date_formats_of(present):
        return "date"
    return "text"


def inferred_specs(layout: Layout) -> list[ColumnSpec]:
    """Without an expected CSV: the header labels are the columns, types come from values."""
    specs = []
    for label, cells in zip(layout.labels, layout.values, strict=True):
        filled = [c for c in cells if c]
        dates = sum(1 for c in filled if is_date(c))
        numbers = sum(1 for c in filled if parse_number(c) is not None)
        kind: Kind = "text"
        if filled and dates >= 0.6 * len(filled):
            kind = "date"
        elif filled and numbers >= 0.6 * len(filled):
            kind = "number"
        specs.append(
            ColumnSpec(
                name=label,
                label=label,
                kind=kind,
                dtype="float64" if kind == "number" else "str",
                always_present=bool(cells) and len(filled) == len(cells),
                date=choose_date_rule(cells, []) if kind == "date" else None,
            )
        )
    return specs


def choose_date_rule(pdf_cells: Sequence[str], csv_values: Sequence[str]) -> DateRule:
    """Pick the PDF's date format and the CSV's, converting only when the samples need it.

    Among format pairs, the one whose conversion of the PDF dates reproduces most CSV
    samples wins; ties prefer keeping the text unchanged, then the earlier format.
    """
    pdf_values = [tidy(c) for c in pdf_cells if c and is_date(c)]
    pdf_options = _ranked_formats(pdf_values) or [DATE_FORMATS[0]]
    csv_options = date_formats_of(csv_values) or pdf_options[:1]
    targets = set(csv_values)
    best = max(
        ((p, c) for p in pdf_options for c in csv_options),
        key=lambda pc: (_reproduced(pdf_values, pc, targets), pc[0] == pc[1]),
    )
    return DateRule(*best)


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
            converted.add(value if formats[0] == formats[1] else parsed.strftime(formats[1]))
    return len(converted & targets)


def detect_numbers(
    layout: Layout, specs: Sequence[ColumnSpec], expected: ExpectedSchema | None
) -> NumberFormat:
    """Thousands/decimal separators and Dr/Cr suffixes, from the amounts in the PDF."""
    labels = {c.label for c in specs if c.kind == "number" and c.label}
    cells = [
        c
        for label, col in zip(layout.labels, layout.values, strict=True)
        if label in labels
        for c in col
        if c
    ]
    european = any(re.fullmatch(r"-?\d{1,3}(\.\d{3})+,\d{1,2}", c.replace(" ", "")) for c in cells)
    suffixed = any(
        c.strip().lower().endswith(SUFFIXES) and parse_number(c) is not None for c in cells
    )
    signs: tuple[tuple[str, str], ...] = ()
    if suffixed:
        signs = (("Dr", "-" if _samples_negative(expected, specs) else ""), ("Cr", ""))
    if european:
        return NumberFormat(thousands=".", decimal=",", suffix_signs=signs)
    return NumberFormat(suffix_signs=signs)


def _samples_negative(expected: ExpectedSchema | None, specs: Sequence[ColumnSpec]) -> bool:
    """Whether any amount in the sample rows is negative (so Dr means minus)."""
    if expected is None:
        return False
    numeric = [c.name for c in specs if c.kind == "number"]
    values = (row.get(n) for row in expected.sample_rows for n in numeric)
    return any(isinstance(v, (int, float)) and not math.isnan(v) and v < 0 for v in values)


# --- candidates -------------------------------------------------------------------------


def base_plan(
    strategy: Strategy, layout: Layout, expected: ExpectedSchema | None
) -> ParserPlan | None:
    """The plan for one extraction strategy, or None if its table matches no column."""
    specs = expected_specs(layout, expected) if expected else inferred_specs(layout)
    if not any(s.label for s in specs):
        return None
    return ParserPlan(
        strategy=strategy,
        header_labels=tuple(layout.labels),
        columns=tuple(specs),
        numbers=detect_numbers(layout, specs, expected),
        continuation="merge" if layout.continuations else "drop",
        max_continuation_gap=round(1.6 * layout.line_pitch, 2) if layout.source == "words" else 0.0,
    )


def fallback_layout(expected: ExpectedSchema) -> Layout:
    """When no header was seen in the analysed pages: hope the CSV's names are the labels."""
    return Layout("words", list(expected.columns), [[] for _ in expected.columns])


def candidate_plans(analysis: Analysis) -> list[ParserPlan]:
    """Every plan worth trying, best first; without duplicates.

    Order: each viable extraction's base plan (ruled tables first when the header sits in
    a ruled table), then the row-filter / continuation / boundary variants of each.
    """
    bases = _base_plans(analysis)
    variants = [v for base in bases for v in _variants(base)]
    unique: dict[str, ParserPlan] = {}
    for plan in bases + variants:
        unique.setdefault(plan.label, plan)
    return list(unique.values())


def _base_plans(analysis: Analysis) -> list[ParserPlan]:
    """One plan per extraction that found the header: ruled tables, words, aligned."""
    expected = analysis.expected
    tables = table_layout(analysis.pages, expected)
    words = word_layout(analysis.pages, expected)
    if words is None and expected is not None:
        words = fallback_layout(expected)
    plans = [
        base_plan("ruled_tables", tables, expected) if tables else None,
        base_plan("word_positions", words, expected) if words else None,
        base_plan("aligned_tables", words, expected) if words else None,
    ]
    return [p for p in plans if p is not None]


def _variants(base: ParserPlan) -> list[ParserPlan]:
    """Variations on a base plan that fix the usual mismatches without a new extraction.

    Row filter (too few rows), wrapped-line handling (cut descriptions) and, for
    position-based strategies, other column boundaries (text landing in amount columns).
    """
    other = "drop" if base.continuation == "merge" else "merge"
    out = [replace(base, row_filter="lenient"), replace(base, continuation=other)]
    if base.strategy != "ruled_tables":
        for rule in ("gap_midpoint", "center_midpoint"):
            out.append(replace(base, boundary=rule))  # type: ignore[arg-type]
            out.append(replace(base, boundary=rule, continuation=other))  # type: ignore[arg-type]
    return out
