"""TEST DOUBLE: the statement probe run in the test's own process instead of a sandbox.

Production reads every statement PDF in a throwaway container (``StatementReader``: issue
23), because a user's PDF is hostile. The unit tests analyse the project's own generated
PDFs thousands of times and must not need Docker, so this double calls the same probe code
(``pdf_probe.analyse``) in-process on those trusted files, wraps its answer in the same
``sandloop.document/1`` result a sandbox writes, and hands that to the real decoder
(``decode_scan``): only the container is left out. Never use it on a file you did not make.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agents import pdf_probe
from agents.bank_parser.analysis import Analysis, analyze
from agents.bank_parser.coders import _ocr_runtime
from agents.bank_parser.pages import StatementScan
from agents.bank_parser.statement_reader import decode_scan, probe_config
from agents.ports.config import AnalysisLimits
from agents.ports.sandbox import CapturedStream, SandboxLimits, SandboxResult
from agents.python_program import DOCUMENT_SCHEMA


class InProcessStatementReader:
    """A ``StatementSource`` that runs the probe here, on trusted test PDFs only."""

    def __init__(self, caps: AnalysisLimits | None = None) -> None:
        self.caps = caps or AnalysisLimits()

    def read(self, pdf_path: Path) -> StatementScan:
        scan = self._run(pdf_path, ocr=False)
        return self._run(pdf_path, ocr=True) if scan.scanned else scan

    def _run(self, pdf_path: Path, *, ocr: bool) -> StatementScan:
        sys.modules.setdefault(pdf_probe.OCR_MODULE, _ocr_runtime)  # the sandbox gets it as a sibling file
        try:
            document = {"schema": DOCUMENT_SCHEMA, "status": "ok",
                        "document": pdf_probe.analyse(str(pdf_path), probe_config(self.caps, ocr=ocr))}
        except Exception as exc:  # noqa: BLE001 - the entrypoint reports whatever the probe raises
            document = {"schema": "sandloop.frame/1", "status": "error", "error_type": type(exc).__name__}
        return decode_scan(pdf_path, _result(json.dumps(document).encode()), SandboxLimits(), self.caps, ocr=ocr)


def _result(raw: bytes) -> SandboxResult:
    empty = CapturedStream(b"", 0)
    return SandboxResult(exit_code=0, stdout=empty, stderr=empty, timed_out=False, oom_killed=False,
                         wall_seconds=0.0, files={"result.json": raw})


def analyze_here(pdf: Path, csv: Path | None) -> Analysis:
    """``analyze`` with the in-process probe: the tests' one-liner."""
    return analyze(pdf, csv, InProcessStatementReader())
