"""Font metrics shared by the ledger (which trims descriptions) and the renderer (which wraps)."""

from __future__ import annotations

from reportlab.pdfbase.pdfmetrics import stringWidth

from tests.corpus.specs import BankSpec

FONT = "Helvetica"
BOLD = "Helvetica-Bold"
SIZE = 8.0
PADDING = 4.0
"""Space kept free at each side of a cell, so that columns never touch."""


def text_width(text: str, font: str = FONT, size: float = SIZE) -> float:
    """Width of ``text`` in points."""
    return stringWidth(text, font, size)


def wrap(text: str, width: float) -> list[str]:
    """Greedy word wrap into lines no wider than ``width`` (a long word stands alone)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines or [""]


def description_width(spec: BankSpec) -> float:
    """The width description text may use in ``spec``'s table."""
    column = next(c for c in spec.columns if c.field == "description")
    return column.width - 2 * PADDING
