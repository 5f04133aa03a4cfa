"""Deskew (issues 15 and 24): the angle the OCR runtime measures undoes the scan's rotation.

A corpus page is rendered and turned by a known angle, as ``tests/corpus/scan.py`` turns its
scans; ``skew_angle`` must find the turn back to within a tenth of a degree or so (its fine
step), for a ruled and a borderless layout. No Tesseract needed.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image

from agents.bank_parser.coders._ocr_runtime import skew_angle
from tests.corpus.generate import generate


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Image.Image]:
    """The first page of a borderless (dunmore) and a ruled (glenrock) statement, at 150 dpi."""
    out = tmp_path_factory.mktemp("deskew")
    generate(out, 7, ["dunmore", "glenrock"])
    rendered = {}
    for bank in ("dunmore", "glenrock"):
        document = pdfium.PdfDocument(str(Path(out) / bank / "statement.pdf"))
        try:
            rendered[bank] = document[0].render(scale=150 / 72, grayscale=True).to_pil().convert("L")
        finally:
            document.close()
    return rendered


@pytest.mark.parametrize("bank", ["dunmore", "glenrock"])
@pytest.mark.parametrize("angle", [-1.2, -0.7, 0.3, 0.7, 1.5])
def test_the_measured_angle_turns_the_page_back(pages: dict[str, Image.Image], bank: str, angle: float) -> None:
    """Turned by ``angle``, the page measures ``-angle`` (within 0.15°)."""
    turned = pages[bank].rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    assert abs(skew_angle(turned) + angle) <= 0.15, skew_angle(turned)


def test_a_level_page_is_left_alone(pages: dict[str, Image.Image]) -> None:
    """A page that is already level measures 0."""
    assert skew_angle(pages["dunmore"]) == 0.0
