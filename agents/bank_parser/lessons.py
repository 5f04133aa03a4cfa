"""Lessons the parser agent draws from a failed attempt, for the execution history.

A lesson is one sentence a coder can act on in a later run on the same statement. It is
read from the attempt's feedback: the diff report of a mismatch (row counts, header rows
kept as data, swapped columns, dtypes, names and order of columns) or the error of a
parser that crashed. Failures of the model itself (``no_code``, ``llm_error``) say
nothing about the statement and yield no lesson, though they are still recorded.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agents.bank_parser.coders.base import FailureKind, Feedback
from agents.bank_parser.nodes import AGENT
from agents.bank_parser.state import ParserState
from agents.lessons import FailedAttempt, RunOutcome

_SHAPE = re.compile(r"^shape: expected \((\d+), (\d+)\), got \((\d+), (\d+)\)$", re.MULTILINE)
_CELL = re.compile(r"^\s*row (\d+), '(.+?)': expected (.+) \((\w+)\), got (.+) \((\w+)\)$", re.MULTILINE)
_DTYPE = re.compile(r"^dtype of '(.+?)': expected (\S+), got (\S+)$", re.MULTILINE)
_LIST = re.compile(r"^(missing|unexpected) columns: \[(.*)\]$", re.MULTILINE)
MAX_LESSON = 200


@dataclass(frozen=True)
class Cell:
    """One mismatching cell of a diff report (values as the report shows them: reprs)."""

    row: int
    column: str
    expected: str
    actual: str


def lessons_for(feedback: Feedback) -> tuple[str, ...]:
    """The lessons of one failed attempt (none for failures of the model itself)."""
    if feedback.kind == FailureKind.MISMATCH:
        return tuple(lesson[:MAX_LESSON] for lesson in mismatch_lessons(feedback.detail))
    crash = {
        FailureKind.EXECUTION_ERROR: "parse() raised {}",
        FailureKind.TYPE_ERROR: "parse() broke the contract: {}",
        FailureKind.TIMEOUT: "parse() was too slow: {}",
        FailureKind.OOM: "parse() used too much memory: {}",
    }.get(feedback.kind)
    return (crash.format(feedback.summary)[:MAX_LESSON],) if crash else ()


def mismatch_lessons(report: str) -> list[str]:
    """Lessons from a comparison's diff report (see agents.bank_parser.compare)."""
    cells = [Cell(int(r), c, e, a) for r, c, e, _, a, _ in _CELL.findall(report)]
    columns = _columns(report, cells)
    lessons = _row_lessons(report, cells, columns)
    lessons += _column_lessons(report)
    lessons += [f"{a!r} and {b!r} swapped" for a, b in swapped_columns(cells)]
    lessons += [f"{col!r} came out as {got}, expected {want}" for col, want, got in _DTYPE.findall(report)]
    if "index: expected a default RangeIndex" in report:
        lessons.append("the index was not a default RangeIndex 0..n-1")
    if not lessons and cells:
        first = cells[0]
        lessons.append(f"cells differ, e.g. {first.column!r} row {first.row}: expected {first.expected}, "
                       f"got {first.actual}")
    return lessons


def _row_lessons(report: str, cells: Sequence[Cell], columns: set[str]) -> list[str]:
    lessons = []
    header_rows = sorted({c.row for c in cells if _unquote(c.actual) in columns})
    if header_rows:
        count = len(header_rows)
        lessons.append(f"output had {count} header row{'s' if count > 1 else ''} kept as data "
                       f"(rows holding the column names)")
    shape = _SHAPE.search(report)
    if shape:
        want, got = int(shape[1]), int(shape[3])
        if got == 0:
            lessons.append("parse() returned no rows")
        elif got > want:
            lessons.append(f"output had {got - want} extra row(s) ({got} instead of {want}): "
                           "headers, titles or balance lines kept as transactions")
        elif got < want:
            lessons.append(f"output had {want - got} row(s) too few ({got} instead of {want}): "
                           "transactions dropped (wrapped lines, page breaks, rows without an amount)")
    return lessons


def _column_lessons(report: str) -> list[str]:
    named = dict(_LIST.findall(report))
    lessons = []
    if named.get("missing") or named.get("unexpected"):
        lessons.append(f"column names wrong: missing [{named.get('missing', '')}], "
                       f"unexpected [{named.get('unexpected', '')}]")
    if "column order differs" in report:
        lessons.append("columns came out in the wrong order")
    return lessons


def swapped_columns(cells: Sequence[Cell]) -> list[tuple[str, str]]:
    """Column pairs whose values were exchanged (A's expected value found in B and back)."""
    by_row: dict[int, dict[str, Cell]] = {}
    for cell in cells:
        by_row.setdefault(cell.row, {})[cell.column] = cell
    pairs: Counter[tuple[str, str]] = Counter()
    for row in by_row.values():
        names = sorted(row)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if row[a].expected == row[b].actual and row[b].expected == row[a].actual:
                    pairs[(a, b)] += 1
    return [pair for pair, _ in pairs.most_common()]


def _columns(report: str, cells: Sequence[Cell]) -> set[str]:
    names = {c.column for c in cells}
    for _, listed in _LIST.findall(report):
        names.update(n.strip().strip("'\"") for n in listed.split(",") if n.strip())
    return names


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def run_record(run_id: str, target: str, coder: str, state: ParserState) -> RunOutcome:
    """The history record of a finished run: each failure with its lessons, and what fixed it."""
    failures = tuple(FailedAttempt(f.attempt, f.kind.value, f.summary, lessons_for(f))
                     for f in state.get("feedback", []))
    fixed_by = ""
    if state.get("status") == "passed" and failures:
        fixed_by = f"attempt {state.get('attempt', 0)} ({state['code'].strategy})"
    return RunOutcome(AGENT, target, run_id, coder, state.get("status", "failed"),
                     state.get("attempt", 0), failures, fixed_by)
