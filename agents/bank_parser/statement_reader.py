"""Read a statement PDF without parsing it on the host (issue 23).

The PDF goes into a throwaway sandbox of the run's image with :mod:`pdf_probe` as its
program and ``probe.json`` (the caps) beside it; what comes back is decoded with the bounded
JSON decoder and validated field by field. A text PDF takes one execution, which a warm
container serves when the analysis limits equal the run's (the defaults do); a scan takes a
second one, with the OCR time limit. Every bound a PDF breaks is one line naming the limit and
the setting that raises it (a :class:`TargetError`, exit 2).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents import pdf_probe
from agents.bank_parser.coders._template import ocr_module_source
from agents.bank_parser.pages import PageAnalysis, StatementScan, Word
from agents.bank_parser.scan_cache import ScanCache
from agents.bank_parser.target import HINT_PDF
from agents.bounded_json import JSONBounds
from agents.ports.config import AnalysisLimits
from agents.ports.errors import TargetError
from agents.ports.sandbox import CapturedStream, Sandbox, SandboxLimits, SandboxResult
from agents.python_program import (
    PARSER_FILE,
    PDF_FILE,
    RESULT_FILE,
    pdf_refusal,
    program_spec,
    read_capped_pdf,
    read_document,
)
from agents.untrusted_text import one_line

#: Depth: document > pages > page > tables > table > row > cell.
PROBE_BOUNDS = JSONBounds(max_bytes=24 * 1024 * 1024, max_depth=7, max_values=3_000_000)
#: Pages a scanned PDF's facts are read from (OCR is slow: ~2-5 s a page on one core).
OCR_FACT_PAGES = 4
#: The OCR setting the analysis uses; the parser's first setting is the same.
PROBE_OCR = {"dpi": 300, "psm": 6, "threshold": 0}
_PROBE_SOURCE = inspect.getsource(pdf_probe).encode("utf-8")
_TEXT = 1 << 20  # characters of one page's text


class _Page(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int = Field(ge=1)
    width: float
    height: float
    text: str = Field(max_length=_TEXT)
    tables: list[list[list[str | None]]] = Field(max_length=1000)
    words: list[tuple[str, float, float, float, float]] = Field(max_length=500_000)
    skew: float | None = Field(default=None, ge=-45.0, le=45.0)


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    page_count: int = Field(ge=0)
    pages: list[_Page] = Field(max_length=50)
    texts: list[tuple[int, str]] = Field(max_length=100_000)
    scanned: bool


@dataclass(frozen=True)
class StatementReader:
    """Reads statements in sandboxes of ``image`` with the analysis caps."""

    sandbox: Sandbox
    image: str
    limits: SandboxLimits
    caps: AnalysisLimits
    labels: Mapping[str, str]
    cache: ScanCache | None = None

    def read(self, pdf_path: Path) -> StatementScan:
        """Read ``pdf_path``'s pages in a sandbox; OCR them in a second one if it is a scan.

        Raises:
            TargetError: too big, too many pages, password-protected, unreadable, or over the
                analysis memory or time limit: one line each.
        """
        pdf = read_capped_pdf(pdf_path, self.caps.max_pdf_mb, HINT_PDF)
        scan = self._run(pdf_path, pdf, ocr=False)
        return self._run(pdf_path, pdf, ocr=True) if scan.scanned else scan

    def _run(self, pdf_path: Path, pdf: bytes, *, ocr: bool) -> StatementScan:
        timeout = self.caps.ocr_timeout_seconds if ocr else self.caps.timeout_seconds
        limits = self.limits.model_copy(update={"memory_mb": self.caps.memory_mb, "timeout_seconds": timeout})
        config = probe_config(self.caps, ocr=ocr)
        inputs = {PARSER_FILE: _PROBE_SOURCE, PDF_FILE: pdf, pdf_probe.PROBE_CONFIG: json.dumps(config).encode()}
        if ocr:
            inputs[f"{pdf_probe.OCR_MODULE}.py"] = ocr_module_source().encode("utf-8")
        key = ScanCache.key(*(inputs[name] for name in sorted(inputs)), self.image.encode())
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            try:
                return decode_scan(pdf_path, _kept(cached), limits, self.caps, ocr=ocr)
            except TargetError:
                pass  # a damaged entry: read the statement again, and keep the new summary
        result = self.sandbox.run(program_spec(self.image, inputs, limits, dict(self.labels)))
        scan = decode_scan(pdf_path, result, limits, self.caps, ocr=ocr)
        if self.cache is not None:
            self.cache.put(key, result.files[RESULT_FILE])
        return scan


def scan_cache(runs_dir: Path | None) -> ScanCache | None:
    """The summaries kept beside the runs (``runs/analysis/``, like the run history and the
    lessons: what earlier runs learned), or None without a runs folder."""
    return ScanCache(runs_dir / "analysis", PROBE_BOUNDS.max_bytes) if runs_dir is not None else None


def _kept(raw: bytes) -> SandboxResult:
    """A kept summary, as the sandbox that wrote it returned it."""
    empty = CapturedStream(b"", 0)
    return SandboxResult(exit_code=0, stdout=empty, stderr=empty, timed_out=False, oom_killed=False,
                         wall_seconds=0.0, files={RESULT_FILE: raw})


def probe_config(caps: AnalysisLimits, *, ocr: bool) -> dict[str, Any]:
    """What ``probe.json`` tells the probe: the caps, and whether to OCR."""
    return {"max_pages": caps.max_pages, "analysed_pages": caps.analysed_pages,
            "ocr": ocr, "ocr_fact_pages": OCR_FACT_PAGES, "ocr_setting": PROBE_OCR}


def decode_scan(pdf_path: Path, result: SandboxResult, limits: SandboxLimits, caps: AnalysisLimits,
                *, ocr: bool) -> StatementScan:
    """The scan the probe returned, or the one line saying why there is none."""
    setting = "SBX_ANALYSIS__OCR_TIMEOUT_SECONDS" if ocr else "SBX_ANALYSIS__TIMEOUT_SECONDS"
    body = read_document(pdf_path.name, result, limits, PROBE_BOUNDS, timeout_setting=setting, hint=HINT_PDF,
                         kind="PDF", claim="a bank statement export")
    if isinstance(body, dict) and "refusal" in body:
        raise pdf_refusal(pdf_path.name, body["refusal"], caps.max_pages, HINT_PDF)
    try:
        return _scan(_Document.model_validate(body))
    except ValidationError as exc:
        raise TargetError(f"{pdf_path.name}: the analysis returned a malformed summary ({one_line(str(exc), 160)})",
                          hint="report this: the statement probe and its decoder disagree") from exc


def _scan(document: _Document) -> StatementScan:
    pages = [PageAnalysis(number=p.number, width=p.width, height=p.height, text=p.text,
                          tables=[[list(row) for row in table] for table in p.tables],
                          words=[Word(*w) for w in p.words], skew=p.skew) for p in document.pages]
    return StatementScan(document.page_count, pages, [(n, t) for n, t in document.texts], document.scanned)
