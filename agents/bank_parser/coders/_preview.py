"""Previewing a plan on the analysed pages: the rows its parser would return, on the host.

The preview runs the parser's own extraction and row functions
(:mod:`~agents.bank_parser.coders._runtime`, project code) on the words and ruled tables
the analysis already holds, then compares the first rows with the expected CSV's sample
rows and, when the analysis covered every page, the row count. It costs no sandbox run, so
the coder can rank dozens of candidates and send the likeliest first. It is a forecast,
not a verdict: only the first pages are analysed, and the sandbox run on the whole PDF is
what counts. Aligned-table plans need pdfplumber's page objects and are not previewed.
A scan's rows are repaired by the running balance first, as its parser repairs them
(:mod:`._repair_runtime`), a row OCR lost is searched for where the balance still breaks
(:mod:`._search_runtime`), and words OCR confused are replaced by the statement's own
(:mod:`._words_runtime`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from agents.bank_parser.analysis import Analysis, ExpectedSchema
from agents.bank_parser.coders._plan import ParserPlan
from agents.bank_parser.coders._repair_runtime import repair_rows
from agents.bank_parser.coders._runtime import (
    RawRow,
    build_frame,
    collect_rows,
    page_table_rows,
    page_word_rows,
)
from agents.bank_parser.coders._search_runtime import find_lost_rows, renumber
from agents.bank_parser.coders._table import page_words
from agents.bank_parser.coders._words_runtime import repair_words
from agents.bank_parser.repairs import Repair
from agents.bank_parser.verify import verify

FULL, UNKNOWN, PARTIAL = 2, 1, 0


@dataclass(frozen=True, order=True)
class PreviewScore:
    """How well a plan's preview fits the expected CSV; compares larger-is-better."""

    verdict: int
    """FULL: every sample row and the row count fit; UNKNOWN: no preview; PARTIAL: otherwise."""
    matched: int
    """Sample rows reproduced before the first that is not."""
    count_ok: bool
    """Row count equal to the CSV's (all pages analysed) or not above it (some were not)."""

    def describe(self, samples: int) -> str:
        """A few words for the coder's notes."""
        if self.verdict == UNKNOWN:
            return "not previewed"
        count = "row count fits" if self.count_ok else "row count does not fit"
        return f"preview: {self.matched}/{samples} sample rows, {count}"


class Previewer:
    """Previews plans on one analysis; raw rows are shared by plans that extract alike."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.complete = analysis.page_count <= len(analysis.pages)
        self._raw: dict[tuple[object, ...], list[RawRow]] = {}

    def rows(self, plan: ParserPlan) -> list[dict[str, str]] | None:
        """The rows the plan's parser would return from the analysed pages (None: cannot tell)."""
        found = self.repaired_rows(plan)
        return None if found is None else found[0]

    def repaired_rows(self, plan: ParserPlan) -> tuple[list[dict[str, str]], tuple[Repair, ...]] | None:
        """The preview's rows and the repairs a scan's parser would make to them."""
        if plan.strategy == "aligned_tables":
            return None
        config = SimpleNamespace(**plan.config())
        raw = self._raw_rows(plan, config)
        made: list[dict[str, Any]] = []
        if plan.strategy == "ocr_words":
            raw, made = repair_rows(raw, config)
            raw, found = find_lost_rows(raw, config)
            made = renumber(made, found) + found
            raw, words = repair_words(raw, config)
            made += words
        repairs = tuple(Repair(r["row"], r["column"], r["before"], r["after"], r["rule"]) for r in made)
        return collect_rows(raw, config), repairs

    def score(self, plan: ParserPlan) -> PreviewScore:
        """The plan's preview against the expected CSV's samples and row count."""
        expected = self.analysis.expected
        if expected is None and self.analysis.facts is not None:
            return self.consistency(plan)
        rows = self.rows(plan) if expected is not None else None
        if expected is None or rows is None:
            return PreviewScore(UNKNOWN, 0, True)
        matched = leading_matches(rows, expected)
        total = expected.row_count
        count_ok = len(rows) == total if self.complete else len(rows) <= total
        full = matched == min(len(expected.sample_rows), total) and count_ok
        return PreviewScore(FULL if full else PARTIAL, matched, count_ok)

    def consistency(self, plan: ParserPlan) -> PreviewScore:
        """Without a CSV: the preview's frame checked for self-consistency (issue 15).

        FULL when it is self-consistent on the analysed pages; ``matched`` counts the checks
        that held; ``count_ok`` is whether every transaction-like line there became a row.
        """
        found = self.repaired_rows(plan)
        facts = self.analysis.facts
        if found is None or facts is None:
            return PreviewScore(UNKNOWN, 0, True)
        rows, repairs = found
        read = {p.number for p in self.analysis.pages}
        shown = replace(facts, lines=tuple(x for x in facts.lines if x.page in read),
                        complete=self.complete, closing=facts.closing if self.complete else None,
                        debit_totals=(), credit_totals=(), bare_totals=())
        try:
            frame = build_frame(rows, SimpleNamespace(**plan.config()))
        except (ValueError, KeyError, TypeError):
            return PreviewScore(PARTIAL, 0, False)
        result = verify(frame, shown, repairs)
        held = [c.name for c in result.checks if c.state == "held"]
        return PreviewScore(FULL if result.self_consistent else PARTIAL, len(held), "coverage" in held)

    def _raw_rows(self, plan: ParserPlan, config: SimpleNamespace) -> list[RawRow]:
        key = (
            plan.strategy,
            plan.header_labels,
            plan.header_lines,
            plan.boundary,
            plan.line_tolerance,
            plan.fixed_cuts,
        )
        if key not in self._raw:
            state: dict[str, Any] = {}
            pages = self.analysis.pages
            if plan.strategy == "ruled_tables":
                rows = [r for page in pages for r in page_table_rows(page.tables, state, config)]
            else:
                rows = [
                    r for page in pages for r in page_word_rows(page_words(page), state, config)
                ]
            self._raw[key] = rows
        return self._raw[key]


def leading_matches(rows: Sequence[dict[str, str]], expected: ExpectedSchema) -> int:
    """How many sample rows the preview reproduces, counting from the first, until one differs."""
    matched = 0
    for row, sample in zip(rows, expected.sample_rows, strict=False):
        if not all(same_value(row.get(c, ""), sample.get(c)) for c in expected.columns):
            break
        matched += 1
    return matched


def same_value(text: str, value: object) -> bool:
    """Whether the parser's CSV text would read back as the sample value."""
    if value is None:
        return text == ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return text == str(value)
