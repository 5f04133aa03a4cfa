"""The compare step: ``DataFrame.equals`` against the expected CSV, and a diff report.

Runs on the host with the frame decoded from the sandbox's JSON; the expected CSV is read
here and never enters a sandbox. The report says what a person (or a coder) needs to fix
the parser: shape, columns, dtypes and the first mismatching cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

FIRST_CELLS = 10
#: Longest rendering of one cell in a report (a parser's cell may hold 64 KiB of text).
SHOWN_CHARS = 200


@dataclass(frozen=True)
class CellDiff:
    """One cell that differs, at a row position and a column name."""

    row: int
    column: str
    expected: str
    actual: str


@dataclass(frozen=True)
class Comparison:
    """The verdict and, when it fails, why."""

    passed: bool
    expected_shape: tuple[int, int]
    actual_shape: tuple[int, int]
    missing_columns: list[str] = field(default_factory=list)
    extra_columns: list[str] = field(default_factory=list)
    column_order_differs: bool = False
    dtype_diffs: dict[str, tuple[str, str]] = field(default_factory=dict)
    index_differs: bool = False
    cells: list[CellDiff] = field(default_factory=list)
    mismatched_cells: int = 0

    def summary(self) -> str:
        """One line for the progress display."""
        if self.passed:
            return f"equal ({self.actual_shape[0]} rows)"
        parts = []
        if self.expected_shape != self.actual_shape:
            parts.append(f"shape {self.actual_shape} != expected {self.expected_shape}")
        if self.missing_columns or self.extra_columns or self.column_order_differs:
            parts.append("columns differ")
        if self.dtype_diffs:
            parts.append(f"{len(self.dtype_diffs)} dtype(s) differ")
        if self.mismatched_cells:
            parts.append(f"{self.mismatched_cells} cell(s) differ")
        if self.index_differs:
            parts.append("index differs")
        return "; ".join(parts) or "frames differ"

    def report(self) -> str:
        """The full diff report as text (saved with the attempt and shown to coders)."""
        lines = [f"result: {'PASS' if self.passed else 'FAIL'}: {self.summary()}",
                 f"shape: expected {self.expected_shape}, got {self.actual_shape}"]
        if self.missing_columns:
            lines.append(f"missing columns: {self.missing_columns}")
        if self.extra_columns:
            lines.append(f"unexpected columns: {self.extra_columns}")
        if self.column_order_differs:
            lines.append("column order differs from the expected CSV")
        for column, (want, got) in self.dtype_diffs.items():
            lines.append(f"dtype of {column!r}: expected {want}, got {got}")
        if self.index_differs:
            lines.append("index: expected a default RangeIndex 0..n-1")
        if self.cells:
            lines.append(f"first mismatching cells ({self.mismatched_cells} in all):")
            lines += [f"  row {c.row}, {c.column!r}: expected {c.expected}, got {c.actual}"
                      for c in self.cells]
        return "\n".join(lines)


def compare_frames(actual: pd.DataFrame, expected: pd.DataFrame) -> Comparison:
    """Compare with ``DataFrame.equals`` and, if that fails, explain the difference."""
    base = {"expected_shape": expected.shape, "actual_shape": actual.shape}
    if actual.equals(expected):
        return Comparison(passed=True, **base)
    exp_cols, act_cols = [str(c) for c in expected.columns], [str(c) for c in actual.columns]
    shared = [c for c in exp_cols if c in act_cols]
    cells, count = _cell_diffs(actual, expected, shared)
    return Comparison(
        passed=False,
        missing_columns=[c for c in exp_cols if c not in act_cols],
        extra_columns=[c for c in act_cols if c not in exp_cols],
        column_order_differs=shared != [c for c in act_cols if c in exp_cols],
        dtype_diffs=_dtype_diffs(actual, expected, shared),
        index_differs=not actual.index.equals(pd.RangeIndex(len(actual))),
        cells=cells,
        mismatched_cells=count,
        **base,
    )


def _dtype_diffs(actual: pd.DataFrame, expected: pd.DataFrame, shared: list[str]) -> dict[str, tuple[str, str]]:
    want = {str(c): str(t) for c, t in zip(expected.columns, expected.dtypes)}
    got: dict[str, str] = {}
    for c, t in zip(actual.columns, actual.dtypes):
        got.setdefault(str(c), str(t))
    return {c: (want[c], got[c]) for c in shared if want[c] != got[c]}


def _cell_diffs(
    actual: pd.DataFrame, expected: pd.DataFrame, columns: list[str]
) -> tuple[list[CellDiff], int]:
    rows = max(len(actual), len(expected))
    diffs: list[CellDiff] = []
    count = 0
    exp_at = {column: [str(c) for c in expected.columns].index(column) for column in columns}
    act_at = {column: [str(c) for c in actual.columns].index(column) for column in columns}
    for row in range(rows):
        for column in columns:
            want = _at(expected, row, exp_at[column])
            got = _at(actual, row, act_at[column])
            if not _same(want, got):
                count += 1
                if len(diffs) < FIRST_CELLS:
                    diffs.append(CellDiff(row, column, _show(want), _show(got)))
    return diffs, count


_MISSING_ROW = object()


def _at(frame: pd.DataFrame, row: int, position: int) -> object:
    """The cell by position: a column's name may repeat, or print like another's (``5`` vs ``"5"``)."""
    if row >= len(frame):
        return _MISSING_ROW
    return frame.iat[row, position]


def _same(left: object, right: object) -> bool:
    """Value equality per cell; dtype differences are reported separately, not per cell."""
    if left is _MISSING_ROW or right is _MISSING_ROW:
        return left is right
    if _isna(left) and _isna(right):
        return True
    try:
        return bool(left == right)
    except (TypeError, ValueError):
        return False


def _isna(value: object) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _show(value: object) -> str:
    if value is _MISSING_ROW:
        return "(no row)"
    shown = repr(value)
    shown = shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 1] + "…"
    return f"{shown} ({type(value).__name__})"
