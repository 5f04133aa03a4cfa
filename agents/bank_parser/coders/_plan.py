"""From an analysis to parser plans: what the offline coder knows about a statement's table.

A :class:`ParserPlan` is plain data (which extraction strategy, which header position or
computed amount feeds which output column, how numbers and dates are normalised, which rows
are kept). :meth:`ParserPlan.config` turns it into the settings the generated parser's
``CONFIG`` holds; the template writes the code; the coder ranks the plans. Nothing here is
specific to a bank: every decision comes from the PDF's header and cells, the expected
CSV's column names and dtypes, and its few sample rows.

Extending to new layouts means adding a field (with a default that keeps today's
behaviour) and the detection that sets it, not rewriting the pipeline.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Literal

from agents.bank_parser.analysis import Analysis, ExpectedSchema
from agents.bank_parser.coders._amounts import AmountModel, detect_amounts
from agents.bank_parser.coders._columns import ColumnSpec, Kind
from agents.bank_parser.coders._mapping import (
    DERIVED_NAMES,
    Source,
    SourceKey,
    cell_key,
    match_columns,
    name_similarity,
)
from agents.bank_parser.coders._runtime import signed_amount
from agents.bank_parser.coders._schema import balance_position, schema_specs
from agents.bank_parser.coders._table import (
    CONTINUATION_PITCHES,
    LINE_TOLERANCE,
    Layout,
    aligned_layout,
    table_layout,
    word_layout,
)
from agents.bank_parser.coders._values import (
    DateRule,
    NumberFormat,
    choose_date_rule,
    date_formats_of,
    date_rules,
    detect_numbers,
    is_date,
    parse_number,
)
from agents.bank_parser.output_schema import OutputSchema

__all__ = [
    "DateRule", "NumberFormat", "ColumnSpec", "ParserPlan", "candidate_plans", "base_plans",
    "choose_date_rule", "detect_numbers", "name_similarity", "parse_number", "SUMMARY_PATTERN",
]  # fmt: skip

Strategy = Literal["ruled_tables", "word_positions", "aligned_tables", "ocr_words"]
#: OCR settings a scanned statement's parser tries in order until its balances add up.
OCR_SETTINGS = (
    {"dpi": 300, "psm": 6, "threshold": 0},
    {"dpi": 300, "psm": 4, "threshold": 0},
    {"dpi": 400, "psm": 6, "threshold": 0},
    {"dpi": 250, "psm": 6, "threshold": 150},
)
#: Seconds per page after which an OCR parser tries no further setting (see scanned_limits).
OCR_BUDGET_PER_PAGE = 30.0
TEXT_DTYPES = frozenset({"str", "object", "string"})
NUMERIC_DTYPES = frozenset({"float64", "int64", "Float64", "Int64", "float32", "int32"})

#: Rows that summarise rather than record a transaction: opening/closing balances, balances
#: brought or carried forward, totals. Generic vocabulary, matched cell by cell.
SUMMARY_PATTERN = (
    r"\b(opening|closing)\s+balance\b|\b(brought|carried)\s+(forward|fwd|over)\b"
    r"|\b[bc]/[fd]\b|^\s*(sub\s*-?\s*)?totals?\b"
)


@dataclass(frozen=True)
class ParserPlan:
    """Everything the template needs to write one parser; a candidate the coder may try."""

    strategy: Strategy
    header_labels: tuple[str, ...]
    columns: tuple[ColumnSpec, ...]
    header_lines: int = 1
    numbers: NumberFormat = field(default_factory=NumberFormat)
    amounts: AmountModel | None = None
    row_filter: Literal["strict", "lenient"] = "strict"
    summaries: Literal["drop", "keep"] = "drop"
    continuation: Literal["drop", "merge"] = "drop"
    boundary: Literal["valley", "gap_midpoint", "center_midpoint"] = "valley"
    line_tolerance: float = LINE_TOLERANCE
    max_continuation_gap: float = 0.0
    date_choice: int = 0
    """Which of each date column's equally good rules to use (0: the best)."""
    balance_index: int | None = None
    """Header position of the running balance (OCR parsers check their reading with it)."""
    ocr_first: int = 0
    """Which OCR setting an OCR parser tries first (a refine starts elsewhere)."""
    pages: int = 1
    """Pages of the statement (an OCR parser's time budget grows with them)."""
    fixed_cuts: tuple[float, ...] = ()
    """Column boundaries found by alignment, for a table printed without a header (issue 24)."""

    @property
    def label(self) -> str:
        """A short, stable name of the approach, used as the attempt's strategy."""
        parts = [self.strategy, self.row_filter, f"{self.summaries}-summaries", self.continuation]
        if self.strategy != "ruled_tables":
            parts.append(self.boundary)
        if self.date_choice:
            parts.append(f"dates-{self.date_choice + 1}")
        if self.ocr_first:
            parts.append(f"ocr-{self.ocr_first + 1}")
        if self.fixed_cuts:
            parts.append("by-alignment")
        return "/".join(parts)

    @property
    def required(self) -> tuple[str, ...]:
        """Columns a transaction row must have a value in; other rows are dropped.

        Dates, and numbers the samples always show, except a debit or credit column: which
        of those a row fills depends on the row, whatever the first few samples show.
        """
        mapped = [c for c in self.columns if c.source is not None]
        dates = tuple(c.name for c in mapped if c.kind == "date" and c.always_present)
        if self.row_filter == "lenient" and dates:
            return dates
        one_sided = {"debit", "credit"}
        if self.amounts is not None and self.amounts.kind == "split":
            one_sided |= {self.amounts.debit, self.amounts.credit}  # type: ignore[arg-type]
        return dates + tuple(
            c.name
            for c in mapped
            if c.kind == "number" and c.always_present and c.source not in one_sided
        )

    def date_rule(self, column: ColumnSpec) -> DateRule | None:
        """The date rule this plan uses for ``column``."""
        if not column.dates:
            return None
        return column.dates[min(self.date_choice, len(column.dates) - 1)]

    def source_label(self, column: ColumnSpec) -> str:
        """Where a column's values come from, in words."""
        if column.source is None:
            return "nothing (left empty)"
        if isinstance(column.source, int):
            return repr(self.header_labels[column.source])
        return f"the {column.source} amount"

    def config(self) -> dict[str, object]:
        """The generated parser's settings, in the order its CONFIG block lists them."""
        out: dict[str, object] = {
            "strategy": self.label,
            "header_labels": list(self.header_labels),
            "header_lines": self.header_lines,
            "columns": {c.name: [c.source, c.kind] for c in self.columns},
            "dtypes": {c.name: c.dtype for c in self.columns},
            "date_formats": {
                c.name: [rule.pdf_format, rule.csv_format]
                for c in self.columns
                if (rule := self.date_rule(c))
            },
            **self.numbers.config(),
            "amounts": self.amounts.config() if self.amounts else None,
            "required": list(self.required),
            "reject_unparsable": self.row_filter == "strict",
            "need_amount": self.summaries == "drop" and self.amounts is not None,
            "skip_pattern": SUMMARY_PATTERN if self.summaries == "drop" else "",
            "merge_continuations": self.continuation == "merge",
            "max_continuation_gap": self.max_continuation_gap,
        }
        if self.strategy == "ocr_words":
            settings = list(OCR_SETTINGS[self.ocr_first :] + OCR_SETTINGS[: self.ocr_first])
            out |= {"balance_index": self.balance_index, "ocr_settings": settings,
                    "ocr_budget_seconds": OCR_BUDGET_PER_PAGE * self.pages}
        if self.strategy == "ruled_tables":
            out["table_settings"] = {}
        else:
            out["line_tolerance"] = self.line_tolerance
            out["boundary_rule"] = self.boundary
        if self.fixed_cuts:
            out["fixed_cuts"] = [round(cut, 2) for cut in self.fixed_cuts]
        return out


# --- column specs -----------------------------------------------------------------------


def sources_of(layout: Layout, numbers: NumberFormat, amounts: AmountModel | None) -> list[Source]:
    """Every source an output column can map to: each header position, then computed amounts.

    A source's values are taken on the table's dated rows (transactions and balance rows,
    not wrapped lines or footers), in order, to line up with the CSV's sample rows.
    """
    dated = [cells for cells, _ in layout.rows if any(is_date(c) for c in cells)]
    out = [
        Source(
            i, label, tuple(cell_key(cells[i], numbers) if cells[i] else None for cells in dated)
        )
        for i, label in enumerate(layout.labels)
    ]
    if amounts is None:
        return out
    config = _value_config(numbers, amounts)
    signed = [signed_amount(cells, config)[0] for cells in dated]
    derived = {
        "debit": [round(-float(s), 6) if s is not None and s < 0 else None for s in signed],
        "credit": [round(float(s), 6) if s is not None and s > 0 else None for s in signed],
        "signed": [round(float(s), 6) if s is not None else None for s in signed],
    }
    return out + [Source(key, DERIVED_NAMES[key], tuple(values)) for key, values in derived.items()]


def _value_config(numbers: NumberFormat, amounts: AmountModel | None) -> SimpleNamespace:
    return SimpleNamespace(**numbers.config(), amounts=amounts.config() if amounts else None)


def expected_specs(
    layout: Layout, expected: ExpectedSchema, numbers: NumberFormat, amounts: AmountModel | None
) -> list[ColumnSpec]:
    """One spec per expected column, in the CSV's order, from the matched sources."""
    split = amounts is not None and amounts.kind == "split"  # printed debit/credit columns exist
    mapping = match_columns(expected, sources_of(layout, numbers, amounts), pair=not split)
    specs = []
    for column in expected.columns:
        samples = [s.get(column) for s in expected.sample_rows]
        present = [str(v) for v in samples if v is not None]
        source = mapping.get(column)
        kind = _expected_kind(expected.dtypes[column], present, source)
        cells = layout.column(source) if isinstance(source, int) else []
        specs.append(
            ColumnSpec(
                name=column,
                source=source,
                kind=kind,
                dtype=expected.dtypes[column],
                always_present=bool(samples) and len(present) == len(samples),
                dates=tuple(date_rules(cells, present)) if kind == "date" else (),
            )
        )
    return specs


def _expected_kind(dtype: str, present: Sequence[str], source: SourceKey | None) -> Kind:
    """Number for numeric dtypes and computed amounts, date for text whose samples are dates."""
    if dtype in NUMERIC_DTYPES or isinstance(source, str):
        return "number"
    if dtype in TEXT_DTYPES and date_formats_of(present):
        return "date"
    return "text"


def inferred_specs(layout: Layout, numbers: NumberFormat) -> list[ColumnSpec]:
    """Without an expected CSV: the header labels are the columns, types come from values."""
    specs = []
    for i, label in enumerate(layout.labels):
        cells = layout.column(i)
        filled = [c for c in cells if c]
        dates = sum(1 for c in filled if is_date(c))
        amounts = sum(1 for c in filled if parse_number(c, numbers) is not None)
        kind: Kind = "text"
        if filled and dates >= 0.6 * len(filled):
            kind = "date"
        elif filled and amounts >= 0.6 * len(filled):
            kind = "number"
        specs.append(
            ColumnSpec(
                name=label,
                source=i,
                kind=kind,
                dtype="float64" if kind == "number" else "str",
                always_present=bool(cells) and len(filled) == len(cells),
                dates=tuple(date_rules(cells, [])[:1]) if kind == "date" else (),
            )
        )
    return specs


def shows_summaries(expected: ExpectedSchema | None, specs: Sequence[ColumnSpec]) -> bool:
    """Whether the CSV's samples keep balance or summary rows (so the parser must too).

    A sample whose text reads like one, or a dated sample without any transaction amount.
    """
    if expected is None:
        return True
    amounts = [c.name for c in specs if c.kind == "number" and isinstance(c.source, str)]
    for row in expected.sample_rows:
        if any(
            isinstance(v, str) and re.search(SUMMARY_PATTERN, v, re.IGNORECASE)
            for v in row.values()
        ):
            return True
        if amounts and all(row.get(name) is None for name in amounts):
            return True
    return False


# --- plans ------------------------------------------------------------------------------


def base_plan(
    strategy: Strategy,
    layout: Layout,
    expected: ExpectedSchema | None,
    schema: OutputSchema | None = None,
) -> ParserPlan | None:
    """The plan for one extraction strategy, or None if its table matches no column.

    Without an expected CSV the columns come from ``schema`` (the target's output
    setting), or failing that from the header itself.
    """
    numbers = detect_numbers(c for cells, _ in layout.rows for c in cells)
    amounts = detect_amounts(layout, numbers)
    if expected:
        specs = expected_specs(layout, expected, numbers, amounts)
    elif schema is not None:
        specs = schema_specs(layout, schema, numbers, amounts)
    else:
        specs = inferred_specs(layout, numbers)
    if not any(s.source is not None for s in specs):
        return None
    words = layout.source == "words"
    return ParserPlan(
        strategy=strategy,
        header_labels=tuple(layout.labels),
        header_lines=layout.header_lines,
        columns=tuple(specs),
        numbers=numbers,
        amounts=amounts,
        summaries="keep" if (expected or not schema) and shows_summaries(expected, specs) else "drop",
        continuation="merge" if layout.continuations else "drop",
        max_continuation_gap=round(CONTINUATION_PITCHES * layout.line_pitch, 2) if words else 0.0,
        balance_index=balance_position(layout, numbers),
        fixed_cuts=tuple(layout.cuts or ()),
    )


def fallback_layout(expected: ExpectedSchema) -> Layout:
    """When no header was seen in the analysed pages: hope the CSV's names are the labels."""
    return Layout("words", list(expected.columns))


def base_plans(analysis: Analysis) -> list[ParserPlan]:
    """One plan per extraction that found the header: ruled tables, words, aligned."""
    expected, schema = analysis.expected, analysis.schema
    if analysis.scanned:  # no text layer: OCR words are the only extraction
        # under a header if one is seen, and by alignment alone (issue 24: without a CSV any
        # line of labels may pass for the header, "Customer ID: … Currency: …"); the
        # preview's ranking decides, the header's plan first on a tie
        layouts = (word_layout(analysis.pages, expected), aligned_layout(analysis.pages, expected))
        plans = [base_plan("ocr_words", layout, expected, schema) for layout in layouts if layout]
        return [replace(plan, pages=analysis.page_count) for plan in plans if plan is not None]
    tables = table_layout(analysis.pages, expected)
    words = word_layout(analysis.pages, expected)
    if words is None and expected is not None:
        words = fallback_layout(expected)
    plans = [
        base_plan("ruled_tables", tables, expected, schema) if tables else None,
        base_plan("word_positions", words, expected, schema) if words else None,
        base_plan("aligned_tables", words, expected, schema) if words else None,
    ]
    found = [p for p in plans if p is not None]
    if (
        not found and expected is not None
    ):  # a "header" that maps nothing: still try the CSV's names
        fallback = base_plan("word_positions", fallback_layout(expected), expected)
        found = [fallback] if fallback is not None else []
    return found


def variants(base: ParserPlan) -> list[ParserPlan]:
    """The base plan and its variations, base settings first in every dimension.

    Date rule (when the samples leave a choice), column boundaries (position-based
    strategies: text landing in amount columns), wrapped-line handling (cut descriptions),
    summary rows (balance rows kept or dropped) and the row filter (too few rows); the last
    varies fastest.
    """
    dimensions: dict[str, tuple[object, ...]] = {
        "ocr_first": tuple(range(len(OCR_SETTINGS))) if base.strategy == "ocr_words" else (0,),
        "date_choice": (0, 1) if any(len(c.dates) > 1 for c in base.columns) else (0,),
        "boundary": _first(base.boundary, ("valley", "gap_midpoint", "center_midpoint"))
        if base.strategy not in ("ruled_tables", "ocr_words")
        else (base.boundary,),
        "continuation": _first(base.continuation, ("merge", "drop")),
        "summaries": _first(base.summaries, ("drop", "keep")),
        "row_filter": _first(base.row_filter, ("strict", "lenient")),
    }
    return [
        replace(base, **dict(zip(dimensions, combination, strict=True)))  # type: ignore[arg-type]
        for combination in itertools.product(*dimensions.values())
    ]


def _first(value: str, options: tuple[str, ...]) -> tuple[str, ...]:
    return (value, *[o for o in options if o != value])


def candidate_plans(analysis: Analysis) -> list[ParserPlan]:
    """Every plan worth trying in default order (bases first, then their variants), unique."""
    bases = base_plans(analysis)
    unique: dict[str, ParserPlan] = {}
    for plan in bases + [v for base in bases for v in variants(base)]:
        unique.setdefault(plan.label, plan)
    return list(unique.values())
