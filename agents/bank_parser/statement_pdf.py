"""The statement-level part of the analysis (issue 15), on what the sandbox read (issue 23):
the statement's own figures, and clear refusals of PDFs that cannot be parsed.

Called from :func:`agents.bank_parser.analysis.analyze` with the
:class:`~.statement_reader.StatementScan` a sandbox returned (the host parses no PDF):

* a PDF that is not a statement (no line with a date or an amount) and a statement without
  transactions each end with one clear line (exit 2);
* :class:`~.statement_facts.StatementFacts` are read from every page's text (a scan: the
  first pages the sandbox OCRed), for the self-consistency checks.

Scans are OCRed in the parser image, which carries Tesseract: the host needs none.
"""

from __future__ import annotations

from pathlib import Path

from agents.bank_parser.pages import PageAnalysis, StatementScan
from agents.bank_parser.statement_facts import AMOUNT_PATTERN, StatementFacts, has_date, read_facts
from agents.bank_parser.target import HINT_PDF
from agents.ports.errors import TargetError
from agents.ports.sandbox import SandboxLimits

#: A scanned statement's parser OCRs every page, several times if its balances do not add
#: up: its sandbox gets this many seconds per page on top of the configured timeout.
SCANNED_SECONDS_PER_PAGE = 90.0
SCANNED_TIMEOUT_CAP = 900.0


def scanned_limits(limits: SandboxLimits, analysis: object) -> SandboxLimits:
    """The sandbox limits for a parser of ``analysis``: more time for a scanned statement."""
    if not getattr(analysis, "scanned", False):
        return limits
    pages = getattr(analysis, "page_count", 1)
    timeout = min(limits.timeout_seconds + SCANNED_SECONDS_PER_PAGE * pages, SCANNED_TIMEOUT_CAP)
    return limits.model_copy(update={"timeout_seconds": max(limits.timeout_seconds, timeout)})


def inspect_statement(pdf_path: Path, scan: StatementScan) -> StatementFacts:
    """Read the statement's figures from the scan's texts; refuse non-statements."""
    facts = read_facts(scan.texts, complete=not scan.scanned or scan.page_count <= len(scan.texts))
    _refuse_non_statements(pdf_path, scan.pages, facts, scan.scanned)
    return facts


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
