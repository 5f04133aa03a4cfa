"""What a statement page is to the analysis: its text, ruled tables and positioned words; and
what the sandbox read of a whole statement."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


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
    skew: float | None = None
    """A scanned page: the degrees it was turned (counter-clockwise) to make its text level."""


@dataclass(frozen=True)
class StatementScan:
    """What the sandbox read: page count, the analysed pages, every page's text, scanned or not."""

    page_count: int
    pages: list[PageAnalysis]
    texts: list[tuple[int, str]]
    scanned: bool


class StatementSource(Protocol):
    """Where the analysis gets a statement's pages from: a sandbox (:class:`StatementReader`)."""

    def read(self, pdf_path: Path) -> StatementScan:
        """The statement's pages and texts; raises TargetError with one line when it cannot."""
        ...
