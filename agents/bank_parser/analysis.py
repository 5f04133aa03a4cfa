"""The analyze step: what the statement PDF looks like and what the expected CSV wants.

The PDF is read in a sandbox (:mod:`.statement_reader`, issue 23); the host decodes the
bounded summary and reads the capped CSV with pandas. The result is plain data that a coder
(offline or LLM) turns into a parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from agents.bank_parser.output_schema import OutputSchema
from agents.bank_parser.pages import PageAnalysis, StatementSource
from agents.bank_parser.statement_facts import StatementFacts
from agents.bank_parser.statement_pdf import inspect_statement
from agents.ports.errors import TargetError

SAMPLE_ROWS = 8


@dataclass(frozen=True)
class ExpectedSchema:
    """The DataFrame the parser must return, as ``pd.read_csv(result.csv)`` reads it.

    Only the schema and a few sample rows: coders never see the whole expected answer, so a
    parser cannot pass by embedding it.
    """

    columns: list[str]
    dtypes: dict[str, str]
    row_count: int
    sample_rows: list[dict[str, object]]
    head_lines: list[str]


@dataclass(frozen=True)
class Analysis:
    """Everything a coder may use: the PDF's structure and, if known, the expected schema."""

    pdf_name: str
    page_count: int
    pages: list[PageAnalysis]
    expected: ExpectedSchema | None
    facts: StatementFacts | None = None
    """What the statement prints about itself (issue 15: self-consistency checks)."""
    schema: OutputSchema | None = None
    """The frame to aim for when there is no expected CSV (set by the analyze node)."""
    scanned: bool = False
    """Whether the analysed pages had no text layer and were read by OCR."""

    def _skew(self) -> str:
        """``; scanned, deskewed by 0.7°`` (issue 24: the angle each analysed page was turned)."""
        angles = [p.skew for p in self.pages if p.skew is not None]
        if not angles:
            return ""
        shown = ", ".join(f"{a:+.1f}°" for a in angles[:4]) + (", …" if len(angles) > 4 else "")
        return f"; scanned, deskewed by {shown}"

    def summary(self) -> str:
        """A few human-readable lines for the progress display and the run's artefacts."""
        tables = sum(len(p.tables) for p in self.pages)
        words = sum(len(p.words) for p in self.pages)
        lines = [
            f"pdf: {self.pdf_name}, {self.page_count} page(s); first {len(self.pages)} analysed: "
            f"{tables} ruled table(s), {words} words" + self._skew(),
        ]
        if self.facts is not None:
            lines.append(("scanned (OCR); " if self.scanned else "") + self.facts.describe())
        if self.expected is None:
            lines.append("expected: none (no result.csv): the parser must be self-consistent")
        else:
            cols = ", ".join(f"{c}:{self.expected.dtypes[c]}" for c in self.expected.columns)
            lines.append(f"expected: {self.expected.row_count} rows; columns {cols}")
        return "\n".join(lines)


def analyze_expected(csv_path: Path) -> ExpectedSchema:
    """Read ``result.csv`` exactly as the comparison will; raise TargetError if unreadable."""
    try:
        frame = pd.read_csv(csv_path)
        head = csv_path.read_text(encoding="utf-8", errors="replace").splitlines()[: SAMPLE_ROWS + 1]
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise TargetError(
            f"{csv_path} cannot be read as CSV ({type(exc).__name__}: {exc})",
            hint="fix or remove result.csv",
        ) from exc
    samples = frame.head(SAMPLE_ROWS).astype(object).where(frame.head(SAMPLE_ROWS).notna(), None)
    return ExpectedSchema(
        columns=[str(c) for c in frame.columns],
        dtypes={str(c): str(t) for c, t in frame.dtypes.items()},
        row_count=len(frame),
        sample_rows=samples.to_dict(orient="records"),
        head_lines=head,
    )


def analyze(pdf_path: Path, csv_path: Path | None, source: StatementSource) -> Analysis:
    """Analyse a target's statement (read by ``source``: in a sandbox) and, when present, its
    expected CSV (already within the caps: :func:`~.target.resolve_target` checked it)."""
    scan = source.read(pdf_path)
    expected = analyze_expected(csv_path) if csv_path is not None and csv_path.exists() else None
    facts = inspect_statement(pdf_path, scan)
    return Analysis(pdf_path.name, scan.page_count, scan.pages, expected, facts, None, scan.scanned)
