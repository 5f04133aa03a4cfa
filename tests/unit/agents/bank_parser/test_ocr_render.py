"""Issue 35: a scan's page is drawn grey, one page (or one cell) at a time, within bounds.

The corpus's scan of a short statement (tests/corpus/scan.py: 200 dpi, grey, JPEG, turned
0.7°) is drawn by the OCR runtime's ``render_gray`` and compared with what pdfplumber's
``to_image`` draws: the same pixels, in a quarter of the memory. No Tesseract needed.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pdfplumber
import pytest

from agents.bank_parser.coders._ocr_runtime import erase_rules, page_dpi, peak_mib, render_gray
from tests.corpus.cases import SKEW, write_scanned


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-page skewed scan of a borderless statement."""
    folder = write_scanned(tmp_path_factory.mktemp("scan"), "dunmore", 8, 7, angle=SKEW)
    return folder / "statement.pdf"


class TestRenderGray:
    """render_gray: pdfium's grey drawing of a page or of a part of it."""

    def test_the_page_is_the_pixels_to_image_draws_one_byte_each(self, scan: Path) -> None:
        """The whole page: mode L, the same size and pixels as pdfplumber's drawing made grey."""
        with pdfplumber.open(scan) as pdf:
            page = pdf.pages[0]
            ours = render_gray(page, 150)
            theirs = page.to_image(resolution=150).original.convert("L")
        assert ours.mode == "L" and ours.size == theirs.size
        assert np.array_equal(np.asarray(ours), np.asarray(theirs))

    def test_a_crop_is_that_part_of_the_page_alone(self, scan: Path) -> None:
        """A crop given in points draws exactly the pixels of the whole page's drawing there."""
        with pdfplumber.open(scan) as pdf:
            page = pdf.pages[0]
            whole = render_gray(page, 300)
            box = (150, 300, 450, 375)  # pixels at 300 dpi: whole points (36, 72, 108, 90)
            part = render_gray(page, 300, tuple(v * 72 / 300 for v in box))  # type: ignore[arg-type]
        assert part.size == (300, 75)
        assert np.array_equal(np.asarray(part), np.asarray(whole.crop(box)))


class TestPageDpi:
    """page_dpi: no page is drawn larger than a bounded number of pixels."""

    def test_an_a4_page_keeps_its_setting(self) -> None:
        """A4 at 300 or 400 dpi is within the bound: the setting stands."""
        a4 = SimpleNamespace(width=595.0, height=842.0)
        assert page_dpi(a4, 300) == 300 and page_dpi(a4, 400) == 400

    def test_a_page_declared_a_point_a_pixel_is_drawn_smaller(self) -> None:
        """A 200 dpi scan declared at 72 dpi (1654 x 2339 points) is drawn at 16 million pixels at most."""
        page = SimpleNamespace(width=1654.0, height=2339.0)
        dpi = page_dpi(page, 300)
        assert dpi < 300 and (page.width * dpi / 72) * (page.height * dpi / 72) <= 16e6 + 1


class TestEraseRules:
    """erase_rules works on one copy of the page and leaves a borderless page alone."""

    def test_a_borderless_page_comes_back_as_it_was(self, scan: Path) -> None:
        """No ruling line: the very same image is returned."""
        with pdfplumber.open(scan) as pdf:
            image = render_gray(pdf.pages[0], 100)
        assert erase_rules(image) is image


def test_peak_memory_is_measured() -> None:
    """Both figures are positive MiB, the process's own at least a few MiB (Python itself)."""
    figures = peak_mib()
    assert set(figures) == {"peak_mib", "rss_mib"} and figures["rss_mib"] > 5 and figures["peak_mib"] > 0
