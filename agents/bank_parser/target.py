"""Targets: one folder under ``data/`` each, holding a statement PDF and, optionally, the
expected ``result.csv``. Everything here is checked before any container starts, so a
user's mistake costs one clear line and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.bank_parser.expected_csv import check_expected_csv
from agents.ports.config import AnalysisLimits
from agents.ports.errors import TargetError
from agents.python_program import check_pdf_size
from agents.targets import check_target_name, known_targets

EXPECTED_CSV = "result.csv"
_PDF_MAGIC = b"%PDF-"
DEFAULT_CAPS = AnalysisLimits()
HINT_PDF = "replace it with the statement PDF exported from the bank"


@dataclass(frozen=True)
class Target:
    """A validated target: its name, folder, statement PDF and expected CSV (if any)."""

    name: str
    folder: Path
    pdf: Path
    expected_csv: Path | None


def resolve_target(name: str, data_dir: Path, caps: AnalysisLimits = DEFAULT_CAPS) -> Target:
    """Find and validate the target ``name`` in ``data_dir``.

    Raises:
        TargetError: bad name, unknown target, no or several PDFs, an unreadable PDF, or a
            result.csv over the ``caps``.
    """
    folder = data_dir / check_target_name(name)
    if not folder.is_dir():
        known = ", ".join(known_targets(data_dir)) or "none"
        raise TargetError(
            f"unknown target {name!r}: there is no folder {folder}",
            hint=f"known targets: {known}; add data/{name}/ with a statement PDF to create it",
        )
    pdf = _single_pdf(folder)
    _check_pdf_header(pdf, caps.max_pdf_mb)
    csv = folder / EXPECTED_CSV
    if not csv.is_file():
        return Target(name=name, folder=folder, pdf=pdf, expected_csv=None)
    check_expected_csv(csv, caps)
    return Target(name=name, folder=folder, pdf=pdf, expected_csv=csv)


def _single_pdf(folder: Path) -> Path:
    pdfs = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".pdf")
    if not pdfs:
        raise TargetError(
            f"no statement PDF in {folder}", hint="put the bank statement (a .pdf file) there"
        )
    if len(pdfs) > 1:
        names = ", ".join(p.name for p in pdfs)
        raise TargetError(f"{folder} holds several PDFs ({names})", hint="keep exactly one")
    return pdfs[0]


def _check_pdf_header(pdf: Path, max_mb: int) -> None:
    try:
        size = pdf.stat().st_size
        with pdf.open("rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise TargetError(f"cannot read {pdf}: {exc.strerror}") from exc
    check_pdf_size(pdf, size, max_mb, HINT_PDF)
    if _PDF_MAGIC not in head:
        raise TargetError(
            f"{pdf} is not a PDF (no %PDF- header)",
            hint=HINT_PDF,
        )
