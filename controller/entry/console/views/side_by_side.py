"""Two texts side by side (difflib), with the differences marked inside changed lines.

Used for code (compare two attempts) and for frames (expected against produced rows). Each row
is one line of either side; rows of a replaced block are paired, and within a pair the
characters that differ are wrapped in ``<mark>`` (each piece escaped first). The first
:data:`FIRST` differing rows carry an anchor (``#d1`` …), so the page links straight to them.
The inputs are bounded (:data:`MAX_LINES` per side, :data:`MAX_MARKED` characters per marked line).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from markupsafe import Markup, escape

MAX_LINES = 5000
MAX_MARKED = 2000
FIRST = 3


@dataclass(frozen=True)
class DiffRow:
    """One row: its kind (same, changed, removed, added), each side's number and text, and its anchor."""

    kind: str
    left_no: int | None
    left: Markup
    right_no: int | None
    right: Markup
    anchor: str = ""


@dataclass(frozen=True)
class SideBySide:
    """The rows, how many differ, and whether an input was cut at :data:`MAX_LINES`."""

    rows: tuple[DiffRow, ...]
    differing: int
    cut: bool

    @property
    def same(self) -> bool:
        """Whether the two sides are equal."""
        return self.differing == 0


def marked(a: str, b: str) -> tuple[Markup, Markup]:
    """``a`` and ``b`` escaped, the characters where they differ wrapped in ``<mark>``."""
    if len(a) > MAX_MARKED or len(b) > MAX_MARKED:
        return escape(a), escape(b)
    left, right = [], []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        piece_a, piece_b = escape(a[i1:i2]), escape(b[j1:j2])
        if op == "equal":
            left.append(piece_a)
            right.append(piece_b)
            continue
        if piece_a:
            left.append(Markup("<mark>") + piece_a + Markup("</mark>"))
        if piece_b:
            right.append(Markup("<mark>") + piece_b + Markup("</mark>"))
    return Markup("").join(left), Markup("").join(right)


def _replace(a: list[str], b: list[str], i1: int, i2: int, j1: int, j2: int) -> list[DiffRow]:
    rows = []
    for k in range(max(i2 - i1, j2 - j1)):
        i, j = i1 + k, j1 + k
        if i < i2 and j < j2:
            left, right = marked(a[i], b[j])
            rows.append(DiffRow("changed", i + 1, left, j + 1, right))
        elif i < i2:
            rows.append(DiffRow("removed", i + 1, escape(a[i]), None, Markup("")))
        else:
            rows.append(DiffRow("added", None, Markup(""), j + 1, escape(b[j])))
    return rows


def _rows(a: list[str], b: list[str]) -> list[DiffRow]:
    rows: list[DiffRow] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            rows += [DiffRow("same", i1 + k + 1, escape(a[i1 + k]), j1 + k + 1, escape(b[j1 + k]))
                     for k in range(i2 - i1)]
        else:
            rows += _replace(a, b, i1, i2, j1, j2)
    return rows


def _anchored(rows: list[DiffRow]) -> tuple[tuple[DiffRow, ...], int]:
    out, differing = [], 0
    for row in rows:
        if row.kind != "same":
            differing += 1
            if differing <= FIRST:
                row = DiffRow(row.kind, row.left_no, row.left, row.right_no, row.right, f"d{differing}")
        out.append(row)
    return tuple(out), differing


def side_by_side(a: list[str], b: list[str]) -> SideBySide:
    """``a`` (left) against ``b`` (right), line by line."""
    cut = len(a) > MAX_LINES or len(b) > MAX_LINES
    rows, differing = _anchored(_rows(a[:MAX_LINES], b[:MAX_LINES]))
    return SideBySide(rows, differing, cut)
