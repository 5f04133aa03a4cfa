"""What a statement page is to the analysis: its text, ruled tables and positioned words."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    """A word of the PDF's text layer with its box, in PDF points from the top-left."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float


@dataclass(frozen=True)
class PageAnalysis:
    """Text, ruled tables and positioned words of one page."""

    number: int
    width: float
    height: float
    text: str
    tables: list[list[list[str | None]]]
    words: list[Word]
