"""The parser agent's run summary: the common one, in the words of a parser and result.csv."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.bank_parser.repairs import OcrCost
from agents.ports.outcome import RunSummary

VERDICTS = {
    "passed": "PASSED: the parser's DataFrame equals result.csv",
    "unverified": "UNVERIFIED: the parser ran, but there is no result.csv to check it against",
    "self-consistent": "SELF-CONSISTENT: no result.csv; the parser's rows agree with the statement's own figures",
    "failed": "FAILED: no parser produced the expected DataFrame",
}


@dataclass(frozen=True)
class ParserRunSummary(RunSummary):
    """A bank-statement parser run's outcome."""

    repairs: list[str] = field(default_factory=list)
    """Cells the last attempt's parser repaired by the running balance (issue 24), one line each."""
    ocr: dict[str, float] = field(default_factory=dict)
    """A scan's OCR cost in the last attempt (pages, page_reads, ocr_seconds, seconds_per_page,
    rereads, reread_seconds; issue 24; peak_mib, rss_mib: issue 35); empty for a text PDF."""

    def lines(self) -> list[str]:
        """The closing block, with the repairs and the OCR cost after the checks."""
        lines = super().lines()
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith("  checks")), len(lines))
        extra = [f"  {'repaired' if i == 0 else '':<13} {r}" for i, r in enumerate(self.repairs)]
        if self.ocr:
            cost = OcrCost.from_record(self.ocr)
            extra.append(f"  {'ocr':<13} {cost.pages} page(s), {cost.reads()}")
        return lines[:at] + extra + lines[at:]

    def verdict(self) -> str:
        """PASSED / UNVERIFIED / SELF-CONSISTENT / FAILED with what it means for a parser."""
        return VERDICTS.get(self.status, self.status)

    @property
    def artefact_label(self) -> str:
        """The published parser."""
        return "parser"
