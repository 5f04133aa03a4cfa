"""Two frames side by side as table columns, the cells that differ marked.

Rows are aligned as the side-by-side diff aligns lines (:func:`~controller.entry.console.views.side_by_side.pairs`,
over each row's printed text); each side keeps its own columns, padded to the wider of its header
and its rows, so every cell sits under its column name. In a paired row, a cell differs from the
cell in the same column of the other side (a cell the other side lacks differs too); every cell of
a row only one side has differs. A differing cell is told by its class (the colour) and by a
``<mark>`` and a title (no colour needed). The first :data:`~controller.entry.console.views.side_by_side.FIRST`
differing rows are anchored (``#d1`` …) as in the text diff.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.entry.console.views.frames import FrameText
from controller.entry.console.views.side_by_side import FIRST, MAX_LINES, pairs


@dataclass(frozen=True)
class Cell:
    """One printed cell, and whether it differs from the other side's."""

    text: str
    differs: bool = False


@dataclass(frozen=True)
class FrameRow:
    """One aligned row: its kind (same, changed, removed, added), each side's row number and cells."""

    kind: str
    left_no: int | None
    left: tuple[Cell, ...]
    right_no: int | None
    right: tuple[Cell, ...]
    anchor: str = ""


@dataclass(frozen=True)
class FrameTable:
    """Both sides' column names (their cells marked where the names differ), the rows, how many differ,
    and whether a side was cut at :data:`~controller.entry.console.views.side_by_side.MAX_LINES` rows."""

    left_columns: tuple[Cell, ...]
    right_columns: tuple[Cell, ...]
    rows: tuple[FrameRow, ...]
    differing: int
    cut: bool

    @property
    def same(self) -> bool:
        """Whether the two frames are equal, row for row."""
        return self.differing == 0 and all(not c.differs for c in self.left_columns + self.right_columns)


def _side(cells: list[str] | None, other: list[str] | None, width: int) -> tuple[Cell, ...]:
    """This side's cells of a row, padded to ``width``: empty when the row is only on the other side
    (``cells`` None), all differing when it is only on this one (``other`` None), else each differing
    where ``other`` has another value in its column (or none)."""
    if cells is None:
        return tuple(Cell("") for _ in range(width))
    padded = cells + [""] * (width - len(cells))
    if other is None:
        return tuple(Cell(text, k < len(cells)) for k, text in enumerate(padded))
    return tuple(Cell(text, k < len(cells) and (k >= len(other) or other[k] != text)) for k, text in enumerate(padded))


def _width(rows: list[list[str]]) -> int:
    return max((len(row) for row in rows), default=0)


def frame_table(left: FrameText, right: FrameText, anchor: str = "d") -> FrameTable:
    """``left`` (a header, then rows) against ``right``, column by column; the first differing rows'
    anchors are ``anchor`` and their number (another prefix where a page has a text diff too)."""
    cut = len(left.rows) > MAX_LINES + 1 or len(right.rows) > MAX_LINES + 1
    head_a, head_b = (left.rows[0] if left.rows else []), (right.rows[0] if right.rows else [])
    a, b = left.rows[1:MAX_LINES + 1], right.rows[1:MAX_LINES + 1]
    width_a, width_b = _width([head_a, *a]), _width([head_b, *b])
    rows: list[FrameRow] = []
    differing = 0
    for kind, i, j in pairs(left.lines[1:MAX_LINES + 1], right.lines[1:MAX_LINES + 1]):
        row_a, row_b = (a[i] if i is not None else None), (b[j] if j is not None else None)
        if kind != "same":
            differing += 1
        name = f"{anchor}{differing}" if kind != "same" and differing <= FIRST else ""
        rows.append(FrameRow(kind, None if i is None else i + 1, _side(row_a, row_b, width_a),
                             None if j is None else j + 1, _side(row_b, row_a, width_b), name))
    return FrameTable(_side(head_a, head_b, width_a), _side(head_b, head_a, width_b), tuple(rows), differing, cut)
