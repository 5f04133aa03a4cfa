"""Issue 35: the statement probe's page text comes in reading order.

Called in this process on the corpus's own PDFs (trusted files; production runs the probe in
a sandbox): two tables side by side come one after the other, a page of one table as
pdfplumber reads it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pdfplumber
import pytest

from agents import pdf_probe
from tests.corpus.generate import generate


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("probe")
    generate(out, 7, ["tamsin", "quillon"])
    return out


def dates(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line[:2].isdigit() and line[2:3] == "/"]


class TestReadingText:
    """analyse(): each page's text for the statement's facts."""

    def test_two_tables_side_by_side_read_down_then_across(self, corpus: Path) -> None:
        """Every line holds one transaction, in the statement's order, left table first."""
        found = pdf_probe.analyse(str(corpus / "tamsin" / "statement.pdf"), {"max_pages": 50, "analysed_pages": 1})
        expected = [d[:6] + d[8:] for d in pd.read_csv(corpus / "tamsin" / "result.csv")["Date"]]
        read = [d for _, text in found["texts"] for d in dates(text)]
        assert read == expected
        assert dates(found["pages"][0]["text"]) == expected[: len(dates(found["pages"][0]["text"]))]

    def test_one_table_is_read_as_pdfplumber_reads_it(self, corpus: Path) -> None:
        """A page without tables side by side keeps pdfplumber's own text."""
        found = pdf_probe.analyse(str(corpus / "quillon" / "statement.pdf"), {"max_pages": 50, "analysed_pages": 1})
        with pdfplumber.open(corpus / "quillon" / "statement.pdf") as pdf:
            assert [text for _, text in found["texts"]] == [page.extract_text() for page in pdf.pages]


class TestPanelCut:
    """_panel_cut on OCR words, whose two headers need not share a top to the point."""

    @staticmethod
    def word(text: str, x0: float, top: float) -> dict[str, object]:
        return {"text": text, "x0": x0, "x1": x0 + 30, "top": top, "bottom": top + 8}

    def test_headers_a_point_apart_still_give_the_cut(self) -> None:
        """Tesseract's two header lines, 1.2 points apart: the cut lies between them."""
        words = [self.word(t, 40 + 40 * i, 100) for i, t in enumerate(("Date", "Details", "Amount"))]
        words += [self.word(t, 420 + 40 * i, 101.2) for i, t in enumerate(("Date", "Details", "Amount"))]
        cut = pdf_probe._panel_cut(words)
        assert cut is not None and 150 < cut < 420

    def test_a_single_table_has_none(self) -> None:
        """One header, or a line of figures that repeat, is no pair of tables."""
        words = [self.word(t, 40 + 40 * i, 100) for i, t in enumerate(("Date", "Details", "Amount", "Balance"))]
        assert pdf_probe._panel_cut(words) is None
        assert pdf_probe._panel_cut([self.word("5.00", 40, 10), self.word("x", 80, 10),
                                     self.word("5.00", 420, 10), self.word("x", 460, 10)]) is None
