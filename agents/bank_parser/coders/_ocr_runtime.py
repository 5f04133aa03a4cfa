"""OCR functions a parser for scanned statements carries, kept here as real code.

Like :mod:`._runtime`, the template copies these functions' source into each OCR parser,
and the host imports them for its analysis of image-only pages, so what the analysis reads
and what the parser reads are the same. Rules: standard library, numpy, Pillow, pdfplumber
(with pypdfium2, its renderer) and pytesseract only; no module-level state; every setting
comes in through arguments.

One page at a time is rendered (pypdfium2, grey, one byte a pixel), deskewed by the angle
that makes its rows of text sharpest (projection profile), optionally thresholded, and
read by Tesseract word by word; its image is dropped before the next page is drawn, and a
cell read again is drawn alone (issue 35: within the sandbox's 512 MiB). Words of one Tesseract line share the
line's top and bottom, so slightly wavy baselines still group into one line; positions are
returned in PDF points, like pdfplumber's ``extract_words``.
"""

from __future__ import annotations

import time
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from agents.bank_parser.coders._repair_runtime import repair_rows, report_repairs

# Copied parsers carry these functions too; the host imports them from their module.
from agents.bank_parser.coders._runtime import (
    clean_number,
    collect_rows,
    group_lines,
    is_transaction,
    page_word_rows,
    row_values,
    signed_amount,
    split_line,
)
from agents.bank_parser.coders._search_runtime import find_lost_rows, find_unread_rows, renumber
from agents.bank_parser.coders._words_runtime import repair_words

Word = dict[str, Any]
RawRow = tuple[list[str], float]


def render_gray(page: Any, dpi: float, crop: tuple[float, float, float, float] | None = None) -> Any:
    """The page (or only its part inside ``crop``: left, top, right, bottom in points) as a
    greyscale PIL image at ``dpi``.

    pdfium draws it grey, one byte a pixel, from the PDF itself: pdfplumber's ``to_image``
    draws four bytes a pixel and converts them to RGB before it could be made grey, 140 MB at
    400 dpi for an A4 page whose grey image is 15 MB (issue 35: a scan's parser must stay
    well under the sandbox's 512 MiB). Smoothing stays off, as ``to_image`` draws.
    """
    import pypdfium2  # lazy: copied alone into generated parsers (pdfplumber's own renderer)

    source = page.pdf.path
    if not source:
        source = page.pdf.stream
        source.seek(0)
    document = pypdfium2.PdfDocument(source)
    try:
        drawn = document[page.page_number - 1]
        margins = (0.0, 0.0, 0.0, 0.0)
        if crop is not None:
            width, height = drawn.get_size()
            margins = (crop[0], height - crop[3], width - crop[2], crop[1])
        bitmap = drawn.render(scale=dpi / 72, grayscale=True, crop=margins, no_smoothtext=True,
                              no_smoothpath=True, no_smoothimage=True)
        return bitmap.to_pil().convert("L")
    finally:
        document.close()


def skew_angle(image: Any, limit: float = 3.0) -> float:
    """The rotation (degrees, counter-clockwise) that makes text rows horizontal.

    Tries angles on a small, inverted copy, coarse steps first and then fine ones around
    the best, and keeps the one whose row sums change most sharply: straight rows of text
    give sharp peaks with empty gaps between them.
    """
    # lazy: each function is copied alone into generated parsers, so it imports what it uses
    import numpy as np
    from PIL import Image, ImageOps

    small = image.convert("L")  # a copy, made small before anything else is done to it
    small.thumbnail((700, 700))
    small = ImageOps.invert(small)

    def sharpness(angle: float) -> float:
        rotated = small.rotate(angle, resample=Image.Resampling.BILINEAR)
        rows = np.asarray(rotated, dtype="float64").sum(axis=1)
        return float(np.square(np.diff(rows)).sum())

    coarse = max((i * 0.5 for i in range(-int(limit * 2), int(limit * 2) + 1)), key=sharpness)
    fine = [round(coarse + i * 0.1, 2) for i in range(-4, 5)]
    return max(fine, key=sharpness)


def prepare(image: Any, threshold: int, info: dict[str, Any] | None = None) -> Any:
    """Deskew the page, erase ruling lines, then binarise at ``threshold`` (0: leave the grey
    to Tesseract). The angle turned is kept in ``info["angle"]`` when ``info`` is given."""
    from PIL import Image  # lazy: copied alone into generated parsers

    angle = skew_angle(image)
    if info is not None:
        info["angle"] = angle
    if angle:
        image = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    image = erase_rules(image)
    if threshold:
        image = image.point(lambda v: 255 if v > threshold else 0)
    return image


def erase_rules(image: Any) -> Any:
    """Paint a ruled table's lines in the paper's grey: pixel rows dark over half the page's
    width, and pixel columns dark over most of the band between the first and last such row.
    Tesseract would read them as "|" and "_" and lose the text beside them.

    The page's pixels are changed in place (one copy of the page, never a float one): what
    is inked is measured only on the rows and columns painted over."""
    # lazy: copied alone into generated parsers
    import numpy as np
    from PIL import Image

    pixels = np.array(image, dtype="uint8")
    paper = int(np.median(pixels))
    dark = pixels < paper - 60
    rules = np.flatnonzero(np.count_nonzero(dark, axis=1) > 0.5 * pixels.shape[1])
    if rules.size == 0:
        return image
    top, bottom = int(rules.min()), int(rules.max()) + 1
    columns = np.flatnonzero(np.count_nonzero(dark[top:bottom], axis=0) > 0.6 * (bottom - top))
    del dark
    for row in {r + d for r in rules for d in (-1, 0, 1)} & set(range(pixels.shape[0])):
        line = pixels[row]
        line[line < paper - 20] = paper
    for column in {c + d for c in columns for d in (-1, 0, 1)} & set(range(pixels.shape[1])):
        band = pixels[top:bottom, column]
        band[band < paper - 20] = paper
    return Image.fromarray(pixels, mode="L")


def ocr_words(image: Any, dpi: float, psm: int) -> list[Word]:
    """Tesseract's words with boxes in PDF points; words of a line share its top and bottom."""
    import pytesseract  # lazy: copied alone into generated parsers

    data = pytesseract.image_to_data(
        image, lang="eng", config=f"--psm {psm}", output_type=pytesseract.Output.DICT
    )
    scale = 72.0 / dpi
    lines: dict[tuple[int, int, int], list[int]] = {}
    for i, text in enumerate(data["text"]):
        data["text"][i] = text = (text or "").strip().strip("|")
        if text and text.strip("_—-") and float(data["conf"][i]) >= 0:
            key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
            lines.setdefault(key, []).append(i)
    words: list[Word] = []
    for members in lines.values():
        top = min(data["top"][i] for i in members) * scale
        bottom = max(data["top"][i] + data["height"][i] for i in members) * scale
        for i in members:
            left = data["left"][i] * scale
            words.append({"text": data["text"][i].strip(), "x0": left,
                          "x1": left + data["width"][i] * scale, "top": top, "bottom": bottom})
    return words


def page_dpi(page: Any, dpi: float, max_pixels: float = 16e6) -> float:
    """``dpi``, or less where the page drawn at ``dpi`` would exceed ``max_pixels`` (an A4
    page at 400 dpi has 15.5 million).

    A scanner may declare its page one point a pixel, a page of 23 by 32 inches: drawn at
    300 dpi it would be 67 million pixels, and it alone would overrun the sandbox's 512 MiB
    (issue 35). Its text is as large in pixels either way, so Tesseract reads it as well."""
    area = float(page.width) * float(page.height) / 72**2  # square inches
    return min(float(dpi), (max_pixels / area) ** 0.5) if area > 0 else float(dpi)


def page_ocr_words(page: Any, setting: dict[str, Any], info: dict[str, Any] | None = None) -> list[Word]:
    """One page's words read by OCR with one setting (dpi, psm, threshold); ``info`` receives
    the deskew angle. Only this page's image is held, and only until Tesseract has read it."""
    dpi = page_dpi(page, setting["dpi"])
    image = prepare(render_gray(page, dpi), setting["threshold"], info)
    return ocr_words(image, dpi, setting["psm"])


def unrotate(x: float, y: float, width: float, height: float, angle: float) -> tuple[float, float]:
    """Where a point of the deskewed page (turned ``angle`` degrees counter-clockwise about its
    centre, as ``prepare`` turns it) lies on the page as scanned."""
    import math  # lazy: copied alone into generated parsers

    turn = math.radians(angle)
    dx, dy = x - width / 2, y - height / 2
    return (width / 2 + dx * math.cos(turn) - dy * math.sin(turn),
            height / 2 + dx * math.sin(turn) + dy * math.cos(turn))


def reread_cell(
    page: Any, dpi: float, box: tuple[float, float, list[float]], position: int, angle: float, zoom: int = 2,
) -> str:
    """Read one cell again, alone, as a single line of text (Tesseract psm 7), enlarged
    ``zoom`` times.

    ``box`` is the line's top, bottom and column cuts on the deskewed page; the cell's centre
    is carried back onto the page as scanned and a crop of the cell's size is read there (a
    cell is too short for the skew to matter inside it). Only the crop is drawn, at ``dpi``
    (the pixels a whole page drawn at ``dpi`` has there), and only it is enlarged: a whole
    page rendered at twice 300 dpi took 280 MB in the sandbox and, at twice 400 dpi, overran
    its 512 MiB, and even one page held for its cells is memory the parser needs for
    Tesseract (issue 35); a scan holds no detail above its own resolution anyway.
    """
    import pytesseract  # lazy: copied alone into generated parsers
    from PIL import Image

    width, height = float(page.width), float(page.height)
    top, bottom, cuts = box
    left = cuts[position - 1] if position > 0 else 0.0
    right = cuts[position] if position < len(cuts) else width
    x, y = unrotate((left + right) / 2, (top + bottom) / 2, width, height, angle)
    scale = dpi / 72
    half_width, half_height = (right - left) / 2, (bottom - top) / 2 + 2.0
    crop = (int(max(0.0, x - half_width) * scale), int(max(0.0, y - half_height) * scale),
            int(min(width, x + half_width) * scale), int(min(height, y + half_height) * scale))
    if crop[2] - crop[0] < 4 or crop[3] - crop[1] < 4:
        return ""
    cell = render_gray(page, dpi, tuple(v / scale for v in crop))  # type: ignore[arg-type]
    cell = cell.resize((cell.width * zoom, cell.height * zoom), Image.Resampling.LANCZOS)
    return " ".join(pytesseract.image_to_string(cell, lang="eng", config="--psm 7").split())


def balance_breaks(raw_rows: list[RawRow], config: SimpleNamespace) -> int:
    """Signs of OCR misreads in the kept rows: a balance that is not the previous balance plus
    the row's amount, and an amount or balance printed without its decimals ("2.15" read as
    "215", which no balance before the first row can catch)."""
    model = config.amounts or {}
    positions = [model[k] for k in ("debit", "credit", "amount") if isinstance(model.get(k), int)]
    positions += [config.balance_index] if config.balance_index is not None else []
    breaks, previous = 0, None
    for cells, _ in raw_rows:
        values = row_values(cells, config)
        if not is_transaction(values, cells, config):
            continue
        breaks += sum(1 for i in positions if cells[i].strip() and config.decimal_separator not in cells[i])
        if config.balance_index is None:
            continue
        signed, _ok = signed_amount(cells, config)
        text = clean_number(cells[config.balance_index], config)
        balance = Decimal(text) if text else None
        if previous is not None and balance is not None and previous + (signed or 0) != balance:
            breaks += 1
        previous = balance if balance is not None else previous
    return breaks


def cell_reader(
    pdf: Any, places: list[tuple[int, float]], boxes: list[Any], dpi: int, deadline: float,
    stats: dict[str, float],
) -> Any:
    """``reread(row, position)``: raw row ``row``'s cell read again alone (None once the time
    budget is spent); ``places`` holds each raw row's page and deskew angle, ``boxes`` its line.
    Each cell is drawn alone at ``dpi`` and enlarged twice. Cells read and the seconds spent
    are added up in ``stats``."""
    done: dict[tuple[int, int], str] = {}

    def reread(index: int, position: int) -> str | None:
        if (index, position) not in done:
            if time.monotonic() > deadline:
                return None
            began = time.monotonic()
            number, angle = places[index]
            page = pdf.pages[number]
            done[(index, position)] = reread_cell(page, page_dpi(page, dpi), boxes[index], position, angle)
            stats["rereads"] += 1
            stats["reread_seconds"] += time.monotonic() - began
        return done[(index, position)]

    return reread


def read_band(page: Any, dpi: float, band: tuple[float, float], angle: float, cuts: list[float],
              tolerance: float, zoom: int = 2) -> list[list[str]]:
    """The lines of a band of the deskewed page (``band``: top and bottom, in points) read again
    alone, as cells split at ``cuts``: a row OCR did not read at all (printed faint).

    Only the strip of the page as scanned that holds the band is drawn (taller by the drift the
    deskew angle makes across the page), enlarged ``zoom`` times, its contrast stretched, and read
    as a block (Tesseract psm 6); each word's centre is carried onto the deskewed page and kept
    when it falls inside the band."""
    import math  # lazy: copied alone into generated parsers

    import pytesseract  # lazy: copied alone into generated parsers
    from PIL import Image, ImageOps  # lazy: as above

    width, height = float(page.width), float(page.height)
    drift = abs(math.sin(math.radians(angle))) * width / 2 + 2.0
    low, high = max(0.0, band[0] - drift), min(height, band[1] + drift)
    if high - low < 4:
        return []
    strip = render_gray(page, dpi, (0.0, low, width, high))
    strip = ImageOps.autocontrast(strip.resize((strip.width * zoom, strip.height * zoom), Image.Resampling.LANCZOS),
                                  cutoff=1)
    data = pytesseract.image_to_data(strip, lang="eng", config="--psm 6", output_type=pytesseract.Output.DICT)
    scale = 72.0 / (dpi * zoom)
    words: list[Word] = []
    for i, text in enumerate(data["text"]):
        text = (text or "").strip().strip("|")
        if not text or float(data["conf"][i]) < 0:
            continue
        x0, x1 = data["left"][i] * scale, (data["left"][i] + data["width"][i]) * scale
        top, bottom = low + data["top"][i] * scale, low + (data["top"][i] + data["height"][i]) * scale
        x, y = unrotate((x0 + x1) / 2, (top + bottom) / 2, width, height, -angle)
        if band[0] < y < band[1]:
            shift = x - (x0 + x1) / 2
            words.append({"text": text, "x0": x0 + shift, "x1": x1 + shift, "top": y - 1.0, "bottom": y + 1.0})
    return [split_line(line, cuts) for line in group_lines(words, tolerance)]


def band_reader(pdf: Any, places: list[tuple[int, float]], boxes: list[Any], dpi: int, deadline: float,
                stats: dict[str, float], config: SimpleNamespace) -> Any:
    """``band(upper, lower)``: the lines between two raw rows read again (:func:`read_band`),
    drawn at a higher resolution than the page was read at (``dpi`` + 100: a faint row the
    corpus's scan lost at 300 dpi read exactly at 400) and enlarged twice; none when the rows
    lie on different pages or the time budget is spent.
    Bands read and their seconds are added to ``stats`` as cells read again."""

    def band(upper: int, lower: int) -> list[list[str]]:
        if places[upper][0] != places[lower][0] or time.monotonic() > deadline:
            return []
        began = time.monotonic()
        page = pdf.pages[places[upper][0]]
        lines = read_band(page, page_dpi(page, dpi + 100), (boxes[upper][1], boxes[lower][0]), places[upper][1],
                          boxes[upper][2], config.line_tolerance)
        stats["rereads"] += 1
        stats["reread_seconds"] += time.monotonic() - began
        return lines

    return band


def peak_mib() -> dict[str, float]:
    """The most memory the parser has held so far, in MiB: ``peak_mib`` as the sandbox's
    limit counts it, ``rss_mib`` this process's own.

    The limit counts the container's memory cgroup: the parser, Tesseract and the page cache
    of the files they read (reclaimable, so an upper bound on what the parser needs); where
    no cgroup can be read, ``peak_mib`` is ``rss_mib``."""
    import resource  # lazy: copied alone into generated parsers

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for path in ("/sys/fs/cgroup/memory/memory.max_usage_in_bytes", "/sys/fs/cgroup/memory.peak"):
        try:
            with open(path, encoding="ascii") as handle:
                return {"peak_mib": int(handle.read().strip()) / 2**20, "rss_mib": own}
        except (OSError, ValueError):
            continue
    return {"peak_mib": own, "rss_mib": own}


def report_ocr(stats: dict[str, float]) -> None:
    """Tell the controller what the OCR cost, its peak memory included: one marked JSON line
    on stderr."""
    # lazy: copied alone into generated parsers
    import json
    import sys

    rounded = {name: round(value, 2) for name, value in {**stats, **peak_mib()}.items()}
    print("sandloop-ocr " + json.dumps(rounded), file=sys.stderr)


def ocr_collect(pdf: Any, config: SimpleNamespace) -> list[dict[str, str]]:
    """Read every page by OCR, retrying other settings while the balances do not add up.

    Each setting in ``config.ocr_settings`` is tried in order; its rows are first repaired
    where the running balance shows a misread (``repair_rows``: the cells around a break are
    read again alone, enlarged twice, and only then are candidate readings tried); where the
    balance still breaks, a line not taken as a row that alone closes the break is taken
    (``find_lost_rows``), or else a line read again from the band of the page between the two
    rows (``find_unread_rows``, ``band_reader``); then words OCR confused are replaced by the statement's own
    (``repair_words``).
    The first setting whose rows then agree on every balance wins, else the one with the
    fewest breaks (then the fewest repairs, then the most rows) once the time budget is spent.
    Its repairs, and the pages read, the seconds their OCR took and the cells read again, are
    reported on stderr.
    """
    started = time.monotonic()
    stats = {"pages": float(len(pdf.pages)), "page_reads": 0.0, "ocr_seconds": 0.0,
             "rereads": 0.0, "reread_seconds": 0.0}
    best: tuple[tuple[int, int, int], list[dict[str, str]], list[dict[str, Any]]] | None = None
    for setting in config.ocr_settings:
        state: dict[str, Any] = {}
        raw: list[RawRow] = []
        places: list[tuple[int, float]] = []
        for number, page in enumerate(pdf.pages):
            info: dict[str, Any] = {}
            began = time.monotonic()
            words = page_ocr_words(page, setting, info)
            stats["page_reads"] += 1
            stats["ocr_seconds"] += time.monotonic() - began
            page_rows = list(page_word_rows(words, state, config))
            raw.extend(page_rows)
            places.extend([(number, info.get("angle", 0.0))] * len(page_rows))
        deadline = started + config.ocr_budget_seconds
        reread = cell_reader(pdf, places, state.get("boxes", []), setting["dpi"], deadline, stats)
        raw, repairs = repair_rows(raw, config, reread)
        raw, found = find_lost_rows(raw, config, reread)
        repairs = renumber(repairs, found) + found
        band = band_reader(pdf, places, state.get("boxes", []), setting["dpi"], deadline, stats, config)
        raw, found = find_unread_rows(raw, config, band)
        repairs = renumber(repairs, found) + found
        raw, renamed = repair_words(raw, config)
        rows = collect_rows(raw, config)
        breaks = balance_breaks(raw, config) if rows else 10**9
        rank = (breaks, len(repairs), -len(rows))
        if best is None or rank < best[0]:
            best = (rank, rows, repairs + renamed)
        if breaks == 0 or time.monotonic() - started > config.ocr_budget_seconds:
            break
    report_ocr(stats)
    if best is None:
        return []
    report_repairs(best[2])
    return best[1]
