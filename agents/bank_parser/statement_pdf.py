"""The statement-level part of the analysis (issue 15): OCR of scanned pages, the statement's
own figures, and clear refusals of PDFs that cannot be parsed.

Called from :func:`agents.bank_parser.analysis.analyze` after the per-page analysis:

* a password-protected PDF, a PDF that is not a statement (no line with a date or an
  amount) and a statement without transactions each end with one clear line (exit 2);
* analysed pages without a text layer are read by OCR (:mod:`.coders._ocr_runtime`, the
  same functions the generated parser runs), so the coder sees words as on a text PDF;
* :class:`~.statement_facts.StatementFacts` are read from every page's text (OCR: the first
  :data:`OCR_FACT_PAGES` pages), for the self-consistency checks.

Tesseract on the host: the analysis needs the ``tesseract`` binary only for scanned PDFs.
Without it, a scanned PDF is one clear line naming the package to install (exit 2); text
PDFs never touch it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pdfplumber
from pdfminer.pdfdocument import PDFDocument, PDFPasswordIncorrect
from pdfminer.pdfparser import PDFParser

from agents.bank_parser.pages import PageAnalysis, Word
from agents.bank_parser.statement_facts import AMOUNT_PATTERN, StatementFacts, has_date, read_facts
from agents.ports.errors import TargetError
from agents.ports.sandbox import SandboxLimits

#: Pages a scanned PDF's facts are read from (OCR is slow: ~2-5 s a page on one core).
OCR_FACT_PAGES = 4
#: The OCR setting the analysis uses; the parser's first setting is the same.
HOST_OCR = {"dpi": 300, "psm": 6, "threshold": 0}
#: A scanned statement's parser OCRs every page, several times if its balances do not add
#: up: its sandbox gets this many seconds per page on top of the configured timeout.
SCANNED_SECONDS_PER_PAGE = 90.0
SCANNED_TIMEOUT_CAP = 900.0
HINT_PDF = "replace it with the statement PDF exported from the bank"


def scanned_limits(limits: SandboxLimits, analysis: object) -> SandboxLimits:
    """The sandbox limits for a parser of ``analysis``: more time for a scanned statement."""
    if not getattr(analysis, "scanned", False):
        return limits
    pages = getattr(analysis, "page_count", 1)
    timeout = min(limits.timeout_seconds + SCANNED_SECONDS_PER_PAGE * pages, SCANNED_TIMEOUT_CAP)
    return limits.model_copy(update={"timeout_seconds": max(limits.timeout_seconds, timeout)})


def check_not_encrypted(pdf_path: Path) -> None:
    """Raise TargetError when the PDF needs a password to open (pdfminer says so directly)."""
    try:
        with pdf_path.open("rb") as stream:
            PDFDocument(PDFParser(stream))
    except PDFPasswordIncorrect as exc:
        raise TargetError(
            f"{pdf_path} is password-protected",
            hint="save an unprotected copy (e.g. qpdf --decrypt --password=... in.pdf out.pdf) and use that",
        ) from exc
    except Exception:  # noqa: BLE001 - other faults are analyze_pdf's to report
        return


def inspect_statement(
    pdf_path: Path, page_count: int, pages: list[PageAnalysis]
) -> tuple[list[PageAnalysis], StatementFacts, bool]:
    """OCR the analysed pages without text, read the facts, refuse non-statements."""
    scanned = bool(pages) and all(not p.words for p in pages)
    if scanned:
        pages, facts = _scanned(pdf_path, page_count, pages)
    else:
        facts = _text_facts(pdf_path, pages)
    _refuse_non_statements(pdf_path, pages, facts, scanned)
    return pages, facts, scanned


def _text_facts(pdf_path: Path, pages: list[PageAnalysis]) -> StatementFacts:
    """Facts from every page's text layer (the analysed pages' text is reused)."""
    known = {p.number: p.text for p in pages}
    with pdfplumber.open(pdf_path) as pdf:
        texts = [(page.page_number, known.get(page.page_number) or page.extract_text() or "")
                 for page in pdf.pages]
    return read_facts(texts, complete=True)


def _scanned(
    pdf_path: Path, page_count: int, pages: list[PageAnalysis]
) -> tuple[list[PageAnalysis], StatementFacts]:
    """Read the first pages by OCR: words for the analysed ones, text for the facts."""
    ocr = _ocr_module(pdf_path)
    read: list[PageAnalysis] = []
    texts: list[tuple[int, str]] = []
    with pdfplumber.open(pdf_path) as pdf:
        for page in pdf.pages[: max(OCR_FACT_PAGES, len(pages))]:
            words = ocr.page_ocr_words(page, HOST_OCR)
            text = _lines_text(words)
            texts.append((page.page_number, text))
            if page.page_number <= len(pages):
                boxes = [Word(w["text"], w["x0"], w["x1"], w["top"], w["bottom"]) for w in words]
                read.append(replace(pages[page.page_number - 1], text=text, words=boxes))
    facts = read_facts(texts, complete=page_count <= len(texts))
    return read, facts


def _ocr_module(pdf_path: Path) -> ModuleType:
    """The OCR functions, once Tesseract is known to be installed."""
    # lazy: OCR (numpy, PIL, pytesseract) only for scanned statements
    from agents.bank_parser.coders import _ocr_runtime
    import pytesseract

    try:
        pytesseract.get_tesseract_version()
    except (pytesseract.TesseractNotFoundError, OSError) as exc:
        raise TargetError(
            f"{pdf_path} is a scanned PDF (no text layer) and this machine has no Tesseract OCR",
            hint="install it: apt-get install tesseract-ocr tesseract-ocr-eng",
        ) from exc
    return _ocr_runtime


def _lines_text(words: list[dict[str, Any]]) -> str:
    """OCR words as text lines (words sharing a top form one line, left to right)."""
    lines: dict[float, list[dict[str, Any]]] = {}
    for word in words:
        lines.setdefault(round(word["top"], 1), []).append(word)
    return "\n".join(
        " ".join(w["text"] for w in sorted(line, key=lambda w: w["x0"]))
        for _, line in sorted(lines.items())
    )


def _refuse_non_statements(
    pdf_path: Path, pages: list[PageAnalysis], facts: StatementFacts, scanned: bool
) -> None:
    """A PDF with neither dates nor amounts is no statement; one without transaction lines
    has nothing to parse. Both are one clear line (exit 2)."""
    text = "\n".join(p.text for p in pages)
    dated = any(has_date(line) for line in text.splitlines())
    amounts = AMOUNT_PATTERN.search(text) is not None
    how = " (read by OCR)" if scanned else ""
    if not text.strip():
        raise TargetError(f"{pdf_path} has no text{how}: it does not look like a bank statement",
                          hint=HINT_PDF)
    if not dated and not amounts:
        raise TargetError(
            f"{pdf_path} does not look like a bank statement: no dates and no amounts in its "
            f"first {len(pages)} page(s){how}",
            hint=HINT_PDF,
        )
    if not facts.lines and facts.complete and not _has_blocks(text):
        raise TargetError(
            f"{pdf_path} lists no transactions: no line with a date and an amount{how}",
            hint="a statement for a period with transactions is needed to write a parser",
        )


def _has_blocks(text: str) -> bool:
    """Dates and amounts on separate lines (labelled blocks): a layout, not an empty statement."""
    lines = text.splitlines()
    dated = sum(1 for line in lines if has_date(line))
    with_amounts = sum(1 for line in lines if AMOUNT_PATTERN.search(line))
    return dated >= 3 and with_amounts >= 3
