"""The offline coder: writes a parser from the analysis alone, with no network or model.

It derives candidate :class:`~agents.bank_parser.coders._plan.ParserPlan` objects
(extraction strategy x row filter x summary rows x continuation handling x column
boundaries), previews each on the analysed pages (:mod:`._preview`: the rows its parser
would return, against the expected CSV's samples), ranks them by that preview, renders each
to source, and walks that list: ``generate`` returns the best candidate, ``refine`` the
untried candidate that the latest failure points to. What was tried is read from the
feedback history, so the same code is never returned twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders._plan import ParserPlan, candidate_plans
from agents.bank_parser.coders._preview import Previewer, PreviewScore
from agents.bank_parser.coders._template import render
from agents.bank_parser.coders.base import CoderExhausted, FailureKind, Feedback, GeneratedCode

Hint = Literal["no_rows", "fewer_rows", "more_rows", "values", "unknown"]

#: Failures of the extraction itself: another extraction strategy is the likely fix.
CRASHES = frozenset(
    {FailureKind.EXECUTION_ERROR, FailureKind.TYPE_ERROR, FailureKind.TIMEOUT, FailureKind.OOM}
)
#: Row filters and summary handling from strictest (fewest rows) to most permissive.
PERMISSIVE = {"strict": 0, "lenient": 1, "drop": 0, "keep": 1}


@dataclass(frozen=True)
class Candidate:
    """A plan with its rendered source; ``rank`` is its place in the ranked order."""

    rank: int
    plan: ParserPlan
    code: str
    preview: PreviewScore = field(default_factory=lambda: PreviewScore(1, 0, True))


class OfflineCoder:
    """Rule-based coder: header, columns and expected schema -> a readable pdfplumber parser."""

    name = "offline"

    def __init__(self) -> None:
        self._cached: tuple[Analysis, list[Candidate]] | None = None

    def generate(self, analysis: Analysis) -> GeneratedCode:
        """Return the best candidate for ``analysis``.

        Raises:
            CoderExhausted: when the analysis shows no table header to build on.
        """
        candidates = self.candidates(analysis)
        if not candidates:
            raise CoderExhausted("no table header found in the analysed pages")
        return _answer(candidates[0], "best candidate for this layout", analysis)

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
            return _answer(fresh[0], "next candidate", analysis)
        if analysis.expected is None:  # self-consistency decides: the next best-ranked plan
            return _answer(fresh[0], f"after {history[-1].kind.value}: next self-consistent candidate", analysis)
        failed = read_failure(history, candidates, analysis)
        best = min(fresh, key=lambda c: (preference(c.plan, failed), c.rank))
        why = f"after {failed.kind.value} with {history[-1].strategy} ({failed.hint})"
        return _answer(best, why, analysis)

    def candidates(self, analysis: Analysis) -> list[Candidate]:
        """Every distinct parser this coder can write for ``analysis``, best first.

        Ranked by preview (plans whose preview reproduces the samples first), then by the
        default order. Computed once per analysis object.
        """
        if self._cached is not None and self._cached[0] is analysis:
            return self._cached[1]
        previewer = Previewer(analysis)
        plans = candidate_plans(analysis)
        scored = sorted(
            ((previewer.score(p), i, p) for i, p in enumerate(plans)),
            key=lambda t: (-t[0].verdict, -t[0].matched, not t[0].count_ok, t[1]),
        )
        seen: set[str] = set()
        out: list[Candidate] = []
        for score, _, plan in scored:
            code = render(plan)
            if code not in seen:
                seen.add(code)
                out.append(Candidate(len(out), plan, code, score))
        self._cached = (analysis, out)
        return out


@dataclass(frozen=True)
class Failure:
    """The latest attempt's failure as refine weighs it."""

    kind: FailureKind
    hint: Hint
    strategy: str
    plan: ParserPlan | None  # None when the attempt was not one of ours
    crashed: frozenset[str]  # extraction strategies that crashed at any attempt
    columns: frozenset[str] = frozenset()  # columns the diff report names


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
    columns = frozenset(re.findall(r"(?:row \d+, |dtype of )'([^']+)'", latest.detail))
    return Failure(latest.kind, hint, _extraction(latest.strategy), plan, crashed, columns)


def _extraction(strategy: str) -> str:
    """The extraction part of a strategy label (``word_positions/strict/...``)."""
    return strategy.split("/", maxsplit=1)[0]


def preference(plan: ParserPlan, failed: Failure) -> int:
    """How well ``plan`` answers the latest failure (lower is tried sooner; ties keep rank).

    A crash points at the extraction: strategies that never crashed come first. No rows
    at all points at another extraction too. Too few rows points at a more permissive row
    filter or keeping summary rows; too many at a stricter one, then another extraction.
    Same shape but wrong cells keeps the rows and changes what lands in a cell: wrapped
    lines when text columns differ, column boundaries when numbers or dates do.
    """
    same = plan.strategy == failed.strategy
    if failed.kind in CRASHES:
        return 1 if plan.strategy in failed.crashed else 0
    if failed.hint == "no_rows":
        return 0 if not same else 1
    before = failed.plan
    if before is None:
        return 0
    looser = _permissiveness(plan) - _permissiveness(before)
    if failed.hint == "fewer_rows":
        return 0 if same and looser > 0 else (1 if not same else 2)
    if failed.hint == "more_rows":
        return 0 if same and looser < 0 else (1 if not same else 2)
    if failed.hint == "values":
        return _cell_preference(plan, before, failed)
    return 0


def _permissiveness(plan: ParserPlan) -> int:
    return PERMISSIVE[plan.row_filter] + PERMISSIVE[plan.summaries]


def _cell_preference(plan: ParserPlan, before: ParserPlan, failed: Failure) -> int:
    """Wrong cells, same rows: change what the wrong columns point at, keep the row rules.

    Text columns wrong: wrapped-line handling; date columns: the date rule; numbers:
    column boundaries. A plan changing just that comes first, then one changing it among
    other things, then other changes, then other extractions and row rules.
    """
    if plan.strategy != failed.strategy:
        return 3
    if (plan.row_filter, plan.summaries) != (before.row_filter, before.summaries):
        return 4
    changed = {
        "continuation": plan.continuation != before.continuation,
        "date_choice": plan.date_choice != before.date_choice,
        "boundary": plan.boundary != before.boundary,
    }
    kinds = {c.kind for c in before.columns if c.name in failed.columns}
    wanted = {"text": "continuation", "date": "date_choice", "number": "boundary"}
    targets = {wanted[k] for k in kinds} or set(wanted.values())
    hits = {name for name, differs in changed.items() if differs}
    if hits and hits <= targets:
        return 0
    return 1 if hits & targets else 2


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


def _answer(candidate: Candidate, why: str, analysis: Analysis) -> GeneratedCode:
    """Wrap a candidate as the coder's answer, with why it was chosen in the notes."""
    samples = len(analysis.expected.sample_rows) if analysis.expected else 8
    notes = f"{why}; {candidate.preview.describe(samples)}; {describe(candidate.plan)}"
    return GeneratedCode(candidate.code, candidate.plan.label, notes)


def describe(plan: ParserPlan) -> str:
    """One line on the column mapping and normalisation, for the run's notes."""
    parts = []
    for column in plan.columns:
        rule = plan.date_rule(column)
        extra = f", {rule.pdf_format}->{rule.csv_format}" if rule else ""
        parts.append(f"{column.name} <- {plan.source_label(column)} ({column.kind}{extra})")
    amounts = f"; amounts: {plan.amounts.kind}" if plan.amounts else ""
    return f"{plan.label}: " + "; ".join(parts) + amounts
