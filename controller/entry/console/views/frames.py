"""The expected frame (the target's ``result.csv``) against the one an attempt produced (its
``result.json``), as rows of text for :func:`~controller.entry.console.views.side_by_side.side_by_side`.

``result.json`` was written in a sandbox: it is decoded with the bounded decoder
(:func:`agents.bounded_json.loads_bounded`) and read only as plain lists and strings. Both
sides are printed the same way, cell by cell, so that equal values print equally: numbers
in one canonical form (``1935.30`` and ``1935.3`` alike, ``5`` and ``5.0`` alike), missing
values (``NaN``, an empty CSV cell) as nothing. The first row holds the column names; a row's
:attr:`FrameText.lines` (cells joined with `` | ``) is what rows are aligned by
(:mod:`~controller.entry.console.views.frame_table` shows them as columns).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded

MAX_BYTES = 32 * 1024 * 1024
MAX_ROWS = 5000
BOUNDS = JSONBounds(max_bytes=MAX_BYTES, max_depth=4, max_values=2_000_000)
SEPARATOR = " | "


@dataclass(frozen=True)
class FrameText:
    """A frame as rows of printed cells (a header, then its rows), or why it could not be read."""

    rows: list[list[str]]
    problem: str = ""

    @property
    def lines(self) -> list[str]:
        """Each row as one line of text, its cells joined with :data:`SEPARATOR`."""
        return [SEPARATOR.join(row) for row in self.rows]


def cell(value: Any) -> str:
    """One cell in its canonical printed form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isnan(number):
            return ""
        return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)
    text = str(value)
    try:
        return cell(float(text)) if text.strip() and text.strip().lower() not in ("nan", "inf", "-inf") else text
    except ValueError:
        return text


def _cells(values: list[Any]) -> list[str]:
    return [cell(v) for v in values]


def expected_frame(path: Path) -> FrameText:
    """The target's ``result.csv`` (its first :data:`MAX_ROWS` rows)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES)
    except OSError:
        return FrameText([], "this target has no result.csv: the run checked the parser's own consistency")
    reader = csv.reader(io.StringIO(raw.decode("utf-8", "replace"), newline=""))
    rows = [row for _, row in zip(range(MAX_ROWS + 1), reader, strict=False)]
    if not rows:
        return FrameText([], "result.csv is empty")
    return FrameText([rows[0]] + [_cells(row) for row in rows[1:]])


def produced_frame(path: Path) -> FrameText:
    """The attempt's ``result.json`` (``sandloop.frame/1``), decoded bounded."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        document = loads_bounded(raw, BOUNDS)
    except OSError:
        return FrameText([], "the attempt produced no result.json")
    except BoundedJSONError as exc:
        return FrameText([], f"result.json cannot be read: {exc}")
    if not isinstance(document, dict) or not isinstance(document.get("columns"), list):
        message = document.get("message") if isinstance(document, dict) else None
        return FrameText([], f"no frame: {str(message)[:300]}" if message else "result.json holds no frame")
    data = document.get("data")
    rows = [row for row in data[:MAX_ROWS] if isinstance(row, list)] if isinstance(data, list) else []
    return FrameText([[str(c) for c in document["columns"]]] + [_cells(row) for row in rows])
