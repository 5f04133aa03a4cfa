"""The parser agent's run summary: the common one, in the words of a parser and result.csv."""

from __future__ import annotations

from dataclasses import dataclass

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

    def verdict(self) -> str:
        """PASSED / UNVERIFIED / SELF-CONSISTENT / FAILED with what it means for a parser."""
        return VERDICTS.get(self.status, self.status)

    @property
    def artefact_label(self) -> str:
        """The published parser."""
        return "parser"
