"""Two texts side by side (difflib), with the differences marked inside changed lines.

Used for code (compare two attempts) and for frames (expected against produced rows). Each row
is one line of either side; rows of a replaced block are paired, and within a pair the
characters that differ are wrapped in ``<mark>`` (each piece escaped first) when the two lines are
similar (:data:`SIMILAR`); two lines that differ entirely are marked whole, not at the few
characters they happen to share. The first
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
#: The :meth:`difflib.SequenceMatcher.ratio` from which two paired lines count as one line edited
#: (its characters marked) rather than one line replaced by another (marked whole). 0.6 is
#: difflib's own cut-off for "close" (:func:`difflib.get_close_matches`): below it, what two lines
#: share is mostly incidental (spaces, common letters), and marking around it scatters marks
#: over characters that are not an edit.
SIMILAR = 0.6


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
    """``a`` and ``b`` escaped, the characters where they differ wrapped in ``<mark>``; each line
    marked whole when the two are not similar (:data:`SIMILAR`)."""
    if len(a) > MAX_MARKED or len(b) > MAX_MARKED:
        return escape(a), escape(b)
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < SIMILAR:
        return whole(a), whole(b)
    left, right = [], []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
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


def whole(text: str) -> Markup:
    """``text`` escaped and marked whole (nothing for an empty text)."""
    return Markup("<mark>") + escape(text) + Markup("</mark>") if text else Markup("")


def pairs(a: list[str], b: list[str]) -> list[tuple[str, int | None, int | None]]:
    """The lines of ``a`` and ``b`` aligned: (kind, index in ``a``, index in ``b``), kind ``same``,
    ``changed`` (a replaced block's lines paired in order), ``removed`` or ``added``."""
    out: list[tuple[str, int | None, int | None]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out += [("same", i1 + k, j1 + k) for k in range(i2 - i1)]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            out.append(("changed", i, j) if i < i2 and j < j2
                       else ("removed", i, None) if i < i2 else ("added", None, j))
    return out


def _row(kind: str, i: int | None, j: int | None, a: list[str], b: list[str]) -> DiffRow:
    left, right = (a[i] if i is not None else ""), (b[j] if j is not None else "")
    texts = marked(left, right) if kind == "changed" else (escape(left), escape(right))
    return DiffRow(kind, None if i is None else i + 1, texts[0], None if j is None else j + 1, texts[1])


def _rows(a: list[str], b: list[str]) -> list[DiffRow]:
    return [_row(kind, i, j, a, b) for kind, i, j in pairs(a, b)]


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
