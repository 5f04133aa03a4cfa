"""The offline coder: writes a parser from the analysis alone, with no network or model.

It derives an ordered list of candidate :class:`~agents.bank_parser.coders._plan.ParserPlan`
objects (extraction strategy x row filter x continuation handling x column boundaries),
renders each to source, and walks that list: ``generate`` returns the best candidate,
``refine`` the untried candidate that the latest failure points to. It is stateless: what
was tried is read from the feedback history, so the same code is never returned twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders._plan import ParserPlan, candidate_plans
from agents.bank_parser.coders._template import render
from agents.bank_parser.coders.base import CoderExhausted, FailureKind, Feedback, GeneratedCode

Hint = Literal["no_rows", "fewer_rows", "more_rows", "values", "unknown"]

#: Failures of the extraction itself: another extraction strategy is the likely fix.
CRASHES = frozenset(
    {FailureKind.EXECUTION_ERROR, FailureKind.TYPE_ERROR, FailureKind.TIMEOUT, FailureKind.OOM}
)


@dataclass(frozen=True)
class Candidate:
    """A plan with its rendered source; ``rank`` is its place in the default order."""

    rank: int
    plan: ParserPlan
    code: str


class OfflineCoder:
    """Rule-based coder: header words + expected schema -> a readable pdfplumber parser."""

    name = "offline"

    def generate(self, analysis: Analysis) -> GeneratedCode:
        """Return the best candidate for ``analysis``.

        Raises:
            CoderExhausted: when the analysis shows no table header to build on.
        """
        candidates = self.candidates(analysis)
        if not candidates:
            raise CoderExhausted("no table header found in the analysed pages")
        return _answer(candidates[0], "best candidate for this layout")

    def refine(self, analysis: Analysis, history: Sequence[Feedback]) -> GeneratedCode:
        """Return the untried candidate the latest failure points to.

        With an empty history, the first candidate counts as tried (``generate`` gave it).

        Raises:
            CoderExhausted: when every candidate's code has been tried.
        """
        candidates = self.candidates(analysis)
        tried = {f.code for f in history} or {c.code for c in candidates[:1]}
        fresh = [c for c in candidates if c.code not in tried]
        if not fresh:
            raise CoderExhausted(f"all {len(candidates)} offline candidates were tried")
        if not history:
            return _answer(fresh[0], "next candidate")
        failed = read_failure(history, candidates, analysis)
        best = min(fresh, key=lambda c: (preference(c.plan, failed), c.rank))
        why = f"after {failed.kind.value} with {history[-1].strategy} ({failed.hint})"
        return _answer(best, why)

    def candidates(self, analysis: Analysis) -> list[Candidate]:
        """Every distinct parser this coder can write for ``analysis``, best first."""
        seen: set[str] = set()
        out: list[Candidate] = []
        for plan in candidate_plans(analysis):
            code = render(plan)
            if code not in seen:
                seen.add(code)
                out.append(Candidate(len(out), plan, code))
        return out


@dataclass(frozen=True)
class Failure:
    """The latest attempt's failure as refine weighs it."""

    kind: FailureKind
    hint: Hint
    strategy: str
    plan: ParserPlan | None  # None when the attempt was not one of ours
    crashed: frozenset[str]  # extraction strategies that crashed at any attempt


def read_failure(
    history: Sequence[Feedback], candidates: Sequence[Candidate], analysis: Analysis
) -> Failure:
    """Summarise the history for choosing the next candidate (the latest attempt counts most)."""
    latest = history[-1]
    hint: Hint = "unknown"
    if latest.kind == FailureKind.MISMATCH:
        hint = mismatch_hint(latest.detail, analysis)
    plan = next((c.plan for c in candidates if c.code == latest.code), None)
    crashed = frozenset(_extraction(f.strategy) for f in history if f.kind in CRASHES)
    return Failure(latest.kind, hint, _extraction(latest.strategy), plan, crashed)


def _extraction(strategy: str) -> str:
    """The extraction part of a strategy label (``word_positions/strict/...``)."""
    return strategy.split("/", maxsplit=1)[0]


def preference(plan: ParserPlan, failed: Failure) -> int:
    """How well ``plan`` answers the latest failure (lower is tried sooner; ties keep rank).

    A crash points at the extraction: strategies that never crashed come first. No rows
    at all points at another extraction too. Too few rows points at the row filter; too
    many at another extraction's filtering. Same shape but wrong cells points at column
    boundaries or wrapped lines: the same extraction and row filter with other boundaries
    or continuation handling.
    """
    same = plan.strategy == failed.strategy
    if failed.kind in CRASHES:
        return 1 if plan.strategy in failed.crashed else 0
    if failed.hint == "no_rows":
        return 0 if not same else 1
    if failed.hint == "fewer_rows":
        return 0 if same and plan.row_filter == "lenient" else (1 if not same else 2)
    if failed.hint == "more_rows":
        return 0 if not same and plan.row_filter == "strict" else (1 if same else 2)
    if failed.hint == "values":
        keeps_rows = failed.plan is None or plan.row_filter == failed.plan.row_filter
        return (0 if same else 1) if keeps_rows else 2
    return 0


def mismatch_hint(detail: str, analysis: Analysis) -> Hint:
    """Read the diff report for what went wrong: row count first, then cells or dtypes.

    Shapes are read as "(rows, cols)" pairs or "N rows"; the expected row count comes from
    the analysis, so the other count is the parser's.
    """
    expected = analysis.expected.row_count if analysis.expected else None
    shapes = [int(r) for r in re.findall(r"\((\d+),\s*\d+\)", detail)]
    counts = shapes or [int(n) for n in re.findall(r"(\d+)\s+rows?\b", detail)]
    others = [n for n in counts if n != expected]
    if expected is not None and others:
        got = others[0]
        return "no_rows" if got == 0 else ("fewer_rows" if got < expected else "more_rows")
    if re.search(r"(?i)dtype|value|cell|column", detail):
        return "values"
    return "unknown"


def _answer(candidate: Candidate, why: str) -> GeneratedCode:
    """Wrap a candidate as the coder's answer, with why it was chosen in the notes."""
    return GeneratedCode(candidate.code, candidate.plan.label, f"{why}; {describe(candidate.plan)}")


def describe(plan: ParserPlan) -> str:
    """One line on the column mapping and normalisation, for the run's notes."""
    parts = []
    for column in plan.columns:
        source = repr(column.label) if column.label else "nothing (left empty)"
        extra = f", {column.date.pdf_format}->{column.date.csv_format}" if column.date else ""
        parts.append(f"{column.name} <- {source} ({column.kind}{extra})")
    return f"{plan.label}: " + "; ".join(parts)
