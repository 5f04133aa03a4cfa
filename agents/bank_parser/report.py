"""The parser agent's run summary: the common one, in the words of a parser and result.csv."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    rereads, reread_seconds; issue 24); empty for a text PDF."""

    def lines(self) -> list[str]:
        """The closing block, with the repairs and the OCR cost after the checks."""
        lines = super().lines()
        at = next((i + 1 for i, line in enumerate(lines) if line.startswith("  checks")), len(lines))
        extra = [f"  {'repaired' if i == 0 else '':<13} {r}" for i, r in enumerate(self.repairs)]
        if self.ocr:
            extra.append(f"  {'ocr':<13} {ocr_line(self.ocr)}")
        return lines[:at] + extra + lines[at:]

    def verdict(self) -> str:
        """PASSED / UNVERIFIED / SELF-CONSISTENT / FAILED with what it means for a parser."""
        return VERDICTS.get(self.status, self.status)

    @property
    def artefact_label(self) -> str:
        """The published parser."""
        return "parser"


def ocr_line(ocr: dict[str, float]) -> str:
    """``2 page(s), 2 page read(s) in 7.9 s (4.0 s a page)``: a summary's OCR cost in a line."""
    line = (f"{int(ocr.get('pages', 0))} page(s), {int(ocr.get('page_reads', 0))} page read(s) in "
            f"{ocr.get('ocr_seconds', 0.0):.1f} s ({ocr.get('seconds_per_page', 0.0):.1f} s a page)")
    if ocr.get("rereads"):
        line += f", {int(ocr['rereads'])} cell(s) read again in {ocr.get('reread_seconds', 0.0):.1f} s"
    return line
