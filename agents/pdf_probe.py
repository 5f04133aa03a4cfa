"""The statement analysis that reads PDF bytes: it runs only inside a sandbox (issue 23).

A user's PDF is hostile: a page of a few hundred thousand text objects, a stream that
inflates to gigabytes or 30,000 pages would take the controller's memory and time with it.
So this file is sent into a throwaway container of the parser image as its program, beside
the PDF and ``probe.json`` (the caps), and the python-parser entrypoint calls
:func:`sandloop_document`, writing what it returns as a ``sandloop.document/1`` result. The
host decodes it with the bounded decoders (``statement_reader.py``) and never imports a PDF
library for a user's file.

Rules for this file: standard library, pdfplumber, pdfminer and pypdfium2 only (the image
has them); OCR comes from ``sandloop_ocr.py``, sent beside it (``coders/_ocr_runtime.py``);
no import of ``agents``. Refusals it can name (a password, too many pages) are returned as a
``refusal``; anything else it raises, and the entrypoint reports the exception's type.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

PROBE_CONFIG = "probe.json"
OCR_MODULE = "sandloop_ocr"


def sandloop_document(pdf_path: str) -> dict[str, Any]:
    """Analyse the statement at ``pdf_path`` as ``probe.json`` (beside this file) says."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, PROBE_CONFIG), encoding="utf-8") as handle:
        config = json.load(handle)
    sys.path.insert(0, here)  # the entrypoint runs with -I: the OCR module's folder is not on the path
    return analyse(pdf_path, config)


def analyse(pdf_path: str, config: dict[str, Any]) -> dict[str, Any]:
    """The summary of the statement at ``pdf_path``, or the refusal that stops it."""
    refusal = _refusal(pdf_path, int(config["max_pages"]))
    if refusal is not None:
        return {"refusal": refusal}
    if config.get("ocr"):
        return _scanned(pdf_path, config)
    return _text(pdf_path, int(config["analysed_pages"]))


def _refusal(pdf_path: str, max_pages: int) -> dict[str, Any] | None:
    """A password or too many pages, found before pdfplumber walks the page tree."""
    # lazy: the PDF libraries are the sandbox's; importing this file on the host loads none
    from pdfminer.pdfdocument import PDFDocument, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFParser

    try:
        with open(pdf_path, "rb") as stream:
            PDFDocument(PDFParser(stream))
    except PDFPasswordIncorrect:
        return {"kind": "encrypted"}
    except Exception:  # noqa: BLE001 - other faults are the page reader's to report
        pass
    count = _page_count(pdf_path)
    if count is not None and count > max_pages:
        return {"kind": "too_many_pages", "pages": count}
    return None


def _page_count(pdf_path: str) -> int | None:
    """The page count from PDFium (milliseconds even for 30,000 pages); None if it cannot tell."""
    try:
        import pypdfium2  # lazy: sandbox-side only, as above

        document = pypdfium2.PdfDocument(pdf_path)
        try:
            return len(document)
        finally:
            document.close()
    except Exception:  # noqa: BLE001 - pdfplumber reports an unreadable file in its own words
        return None


def _text(pdf_path: str, analysed: int) -> dict[str, Any]:
    """Words, ruled tables and text of the first ``analysed`` pages; every page's text."""
    import pdfplumber  # lazy: sandbox-side only, as above

    with pdfplumber.open(pdf_path) as pdf:
        pages = [_page(page) for page in pdf.pages[:analysed]]
        known = {p["number"]: p["text"] for p in pages}
        texts = [[page.page_number, known.get(page.page_number) or _reading_text(page)] for page in pdf.pages]
        count = len(pdf.pages)
    scanned = bool(pages) and all(not p["words"] for p in pages)
    return {"page_count": count, "pages": pages, "texts": texts, "scanned": scanned}


def _page(page: Any) -> dict[str, Any]:
    words = [[w["text"], float(w["x0"]), float(w["x1"]), float(w["top"]), float(w["bottom"])]
             for w in page.extract_words(keep_blank_chars=False, use_text_flow=False)]
    return {"number": page.page_number, "width": float(page.width), "height": float(page.height),
            "text": _reading_text(page), "tables": page.extract_tables() or [], "words": words}


def _reading_text(page: Any) -> str:
    """The page's text in reading order: two tables side by side (issue 35) each whole, the
    left one first, instead of their lines interleaved; else pdfplumber's own text."""
    cut = _panel_cut(page.extract_words())
    if cut is None:
        return page.extract_text() or ""
    x0, top, x1, bottom = page.bbox
    parts = (page.crop((x0, top, cut, bottom)), page.crop((cut, top, x1, bottom)))
    return "\n".join(part.extract_text() or "" for part in parts)


def _panel_cut(words: list[dict[str, Any]], tolerance: float = 3.0) -> float | None:
    """The x between two tables side by side: a line (words whose tops lie within
    ``tolerance``) whose words repeat themselves with no figure among them (the two
    headers), the second half wholly right of the first; None for one table."""
    ordered = sorted(words, key=lambda w: float(w["top"]))
    lines: list[list[dict[str, Any]]] = []
    for word in ordered:
        if lines and float(word["top"]) - float(lines[-1][0]["top"]) <= tolerance:
            lines[-1].append(word)
        else:
            lines.append([word])
    for line in lines:
        line.sort(key=lambda w: float(w["x0"]))
        texts, half = [w["text"].lower() for w in line], len(line) // 2
        if half >= 2 and len(line) % 2 == 0 and texts[:half] == texts[half:] \
                and not any(c.isdigit() for t in texts for c in t) and line[half - 1]["x1"] < line[half]["x0"]:
            return (float(line[half - 1]["x1"]) + float(line[half]["x0"])) / 2
    return None


def _scanned(pdf_path: str, config: dict[str, Any]) -> dict[str, Any]:
    """OCR of the first pages: words for the analysed ones, text of each for the facts."""
    import pdfplumber  # lazy: sandbox-side only, as above

    ocr = __import__(OCR_MODULE)
    analysed, fact_pages = int(config["analysed_pages"]), int(config["ocr_fact_pages"])
    pages: list[dict[str, Any]] = []
    texts: list[list[Any]] = []
    with pdfplumber.open(pdf_path) as pdf:
        count = len(pdf.pages)
        for page in pdf.pages[: max(fact_pages, analysed)]:
            info: dict[str, Any] = {}
            words = ocr.page_ocr_words(page, config["ocr_setting"], info)
            cut = _panel_cut(words)
            text = _lines_text(words) if cut is None else "\n".join(
                _lines_text([w for w in words if (w["x0"] < cut) == left]) for left in (True, False))
            texts.append([page.page_number, text])
            if page.page_number <= analysed:
                boxes = [[w["text"], w["x0"], w["x1"], w["top"], w["bottom"]] for w in words]
                pages.append({"number": page.page_number, "width": float(page.width),
                              "height": float(page.height), "text": text, "tables": [], "words": boxes,
                              "skew": float(info.get("angle", 0.0))})
    return {"page_count": count, "pages": pages, "texts": texts, "scanned": True}


def _lines_text(words: list[dict[str, Any]]) -> str:
    """OCR words as text lines (words sharing a top form one line, left to right)."""
    lines: dict[float, list[dict[str, Any]]] = {}
    for word in words:
        lines.setdefault(round(word["top"], 1), []).append(word)
    return "\n".join(" ".join(w["text"] for w in sorted(line, key=lambda w: w["x0"]))
                     for _, line in sorted(lines.items()))
