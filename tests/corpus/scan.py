"""Turn a text PDF of the corpus into a "scan": page images only, slightly rotated, grey, noisy.

Each page is rendered (pypdfium2, as pdfplumber does) in grey at :data:`DPI`, rotated by a
small angle, put on a grey paper tone with speckle noise, and the pages are packed back into
a PDF of images with Pillow, JPEG-compressed at :data:`JPEG_QUALITY` (a grey image goes in
as DCTDecode): what a scanner makes (issue 35). There is no text layer left: only OCR can
read it. Everything
random comes from the seed, so the same seed writes the same bytes.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
from PIL import Image

DPI = 200
MAX_ANGLE = 1.2  # degrees, either way
PAPER = (205, 235)  # grey level of the paper, darkest to lightest
NOISE = 12.0  # standard deviation of the speckle, in grey levels
JPEG_QUALITY = 75  # a scanner's usual JPEG quality (Pillow's default too)


def scan_page(image: Image.Image, rng: random.Random, angle: float | None = None) -> Image.Image:
    """One page as a scanner might return it: rotated (by ``angle`` degrees, else a random
    small angle), on grey paper, with noise."""
    drawn = rng.uniform(0.3, MAX_ANGLE) * rng.choice((-1, 1))
    angle = drawn if angle is None else angle
    rotated = image.convert("L").rotate(angle, resample=Image.BICUBIC, fillcolor=255, expand=False)
    pixels = np.asarray(rotated, dtype="float64") / 255.0
    paper = rng.uniform(*PAPER)
    noise = np.random.default_rng(rng.getrandbits(32)).normal(0.0, NOISE, pixels.shape)
    scanned = np.clip(pixels * paper + noise, 0, 255).astype("uint8")
    return Image.fromarray(scanned, mode="L")


def scan_pdf(source: Path, target: Path, seed: int, angle: float | None = None) -> int:
    """Write ``target`` as a scan of ``source`` (every page turned by ``angle`` degrees if
    given); return its page count."""
    rng = random.Random(f"scan-{seed}")
    document = pdfium.PdfDocument(str(source))
    try:
        pages = [scan_page(page.render(scale=DPI / 72, grayscale=True).to_pil(), rng, angle)
                 for page in document]
    finally:
        document.close()
    fixed = time.gmtime(1_704_067_200)  # 2024-01-01, not the wall clock: the same seed, the same bytes
    pages[0].save(target, "PDF", resolution=float(DPI), save_all=True, append_images=pages[1:],
                  quality=JPEG_QUALITY, creationDate=fixed, modDate=fixed)
    return len(pages)
