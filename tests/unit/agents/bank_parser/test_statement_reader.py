"""The host's side of reading a statement (issue 23): what a sandbox's answer becomes, and
what goes into the sandbox. No Docker: results are built as the entrypoint writes them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from agents.bank_parser.coders._template import ocr_module_source
from agents.bank_parser.statement_reader import StatementReader, decode_scan, scan_cache
from agents.ports.config import AnalysisLimits
from agents.ports.errors import TargetError
from agents.ports.sandbox import CapturedStream, SandboxLimits, SandboxResult
from tests.fakes import probe_result

PDF = Path("statement.pdf")
LIMITS = SandboxLimits(memory_mb=256, timeout_seconds=20)


def result(document: object = None, *, oom: bool = False, timed_out: bool = False, raw: bytes | None = None,
           stderr: bytes = b"") -> SandboxResult:
    files = {"result.json": raw if raw is not None else json.dumps(document).encode()} if document or raw else {}
    return SandboxResult(exit_code=None if timed_out or oom else 0, stdout=CapturedStream(b"", 0),
                         stderr=CapturedStream(stderr, len(stderr)), timed_out=timed_out, oom_killed=oom,
                         wall_seconds=1.0, files=files)


def ok(document: dict) -> dict:
    return {"schema": "sandloop.document/1", "status": "ok", "document": document}


def refusal(scan: SandboxResult, *, ocr: bool = False) -> str:
    with pytest.raises(TargetError) as raised:
        decode_scan(PDF, scan, LIMITS, AnalysisLimits(), ocr=ocr)
    assert raised.value.exit_code == 2 and "\n" not in str(raised.value)
    return str(raised.value)


class TestRefusals:
    def test_memory(self):
        assert "analysis needed more than 256 MiB" in refusal(result(oom=True))
        assert "SBX_ANALYSIS__MEMORY_MB" in refusal(result(oom=True))

    def test_time_names_the_setting_of_the_phase(self):
        assert "took more than 20 s (raise SBX_ANALYSIS__TIMEOUT_SECONDS" in refusal(result(timed_out=True))
        assert "SBX_ANALYSIS__OCR_TIMEOUT_SECONDS" in refusal(result(timed_out=True), ocr=True)

    def test_password_and_pages(self):
        assert "is password-protected" in refusal(result(ok({"refusal": {"kind": "encrypted"}})))
        line = refusal(result(ok({"refusal": {"kind": "too_many_pages", "pages": 30000}})))
        assert "30000 pages, more than the 500" in line and "SBX_ANALYSIS__MAX_PAGES" in line

    def test_what_the_probe_raised_is_named_not_shown(self):
        error = {"schema": "sandloop.frame/1", "status": "error", "error_type": "RecursionError",
                 "message": "x\n" * 1000, "traceback": "Traceback ..."}
        assert refusal(result(error)) == "statement.pdf is not a readable PDF (RecursionError)"

    @pytest.mark.parametrize("raw", [b"[" * 100_000, b"not json", b'{"schema": "other"}',
                                     json.dumps(ok({"page_count": "2"})).encode(),
                                     json.dumps(ok({"page_count": 1, "pages": [], "texts": [], "scanned": 1,
                                                    "extra": True})).encode()])
    def test_a_malformed_summary_is_one_line(self, raw):
        assert "statement.pdf" in refusal(result(raw=raw))

    def test_no_summary_at_all(self):
        assert "the analysis returned no summary (exit 0)" in refusal(result())


def test_a_valid_summary_becomes_pages_and_texts():
    words = [["01-08-2024", 10.0, 60.0, 100.0, 110.0]]
    page = {"number": 1, "width": 595.0, "height": 842.0, "text": "01-08-2024 Salary 1,200.00",
            "tables": [[["Date", None]]], "words": words}
    scan = decode_scan(PDF, result(ok({"page_count": 4, "pages": [page], "texts": [[1, "a"], [2, "b"]],
                                       "scanned": False})), LIMITS, AnalysisLimits(), ocr=False)
    assert scan.page_count == 4 and scan.texts == [(1, "a"), (2, "b")] and not scan.scanned
    assert scan.pages[0].words[0].text == "01-08-2024" and scan.pages[0].tables == [[["Date", None]]]


class RecordingSandbox:
    """A test double: answers the probe in-process (``probe_result``) and keeps the specs."""

    def __init__(self) -> None:
        self.specs = []

    def run(self, spec):  # noqa: ANN001, ANN201
        self.specs.append(spec)
        return probe_result(spec)


def test_only_the_pdf_the_probe_and_its_caps_go_in(tmp_path):
    """No result.csv, no secret: the probe, the PDF and probe.json; the analysis limits apply."""
    from tests.conftest import ICICI

    sandbox = RecordingSandbox()
    caps = AnalysisLimits(memory_mb=300, timeout_seconds=12)
    scan = StatementReader(sandbox, "img", SandboxLimits(), caps, {"attempt": "analysis"}).read(
        ICICI / "icici sample.pdf")
    (spec,) = sandbox.specs
    assert sorted(spec.inputs) == ["parser.py", "probe.json", "statement.pdf"]
    assert (spec.limits.memory_mb, spec.limits.timeout_seconds) == (300, 12)
    assert json.loads(spec.inputs["probe.json"])["ocr"] is False
    assert scan.page_count == 2 and scan.pages and not scan.scanned


def test_the_ocr_module_the_sandbox_gets_stands_alone():
    """What the probe imports for a scan needs nothing of the project (the sandbox has none of it)."""
    tree = ast.parse(ocr_module_source())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert "agents" not in imported and "controller" not in imported
    assert {"page_ocr_words", "ocr_words", "row_values"} <= {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


class TestScanCache:
    """A statement already read is not read again; the cache grants no trust and keeps no refusal."""

    def reader(self, sandbox, tmp_path):  # noqa: ANN001, ANN201
        return StatementReader(sandbox, "img", SandboxLimits(), AnalysisLimits(), {}, scan_cache(tmp_path))

    def test_the_second_read_of_a_statement_runs_no_sandbox(self, tmp_path):
        from tests.conftest import ICICI

        sandbox = RecordingSandbox()
        first = self.reader(sandbox, tmp_path).read(ICICI / "icici sample.pdf")
        second = self.reader(sandbox, tmp_path).read(ICICI / "icici sample.pdf")
        assert len(sandbox.specs) == 1 and first == second

    def test_a_damaged_entry_is_read_again(self, tmp_path):
        from tests.conftest import ICICI

        sandbox = RecordingSandbox()
        self.reader(sandbox, tmp_path).read(ICICI / "icici sample.pdf")
        for entry in (tmp_path / "analysis").glob("*.json"):
            entry.write_bytes(b"[" * 100_000)
        assert self.reader(sandbox, tmp_path).read(ICICI / "icici sample.pdf").page_count == 2
        assert len(sandbox.specs) == 2

    def test_a_refusal_is_not_kept(self, tmp_path):
        from tests.conftest import ICICI

        class Oom:
            def run(self, spec):  # noqa: ANN001, ANN201
                return result(oom=True)

        with pytest.raises(TargetError):
            self.reader(Oom(), tmp_path).read(ICICI / "icici sample.pdf")
        assert not list((tmp_path / "analysis").glob("*.json"))


def test_a_scanned_pages_skew_reaches_the_analysis_line():
    """Issue 24: the angle each OCR'd page was turned by is kept, bounded, and stated."""
    from agents.bank_parser.analysis import Analysis  # lazy: only this test builds an Analysis

    page = {"number": 1, "width": 595.0, "height": 842.0, "text": "", "tables": [], "words": [], "skew": -0.7}
    scan = decode_scan(PDF, result(ok({"page_count": 1, "pages": [page], "texts": [[1, ""]], "scanned": True})),
                       LIMITS, AnalysisLimits(), ocr=True)
    assert scan.pages[0].skew == -0.7
    analysis = Analysis("statement.pdf", 1, scan.pages, None, None, None, True)
    assert analysis.summary().splitlines()[0].endswith("; scanned, deskewed by -0.7°")
    assert "statement.pdf" in refusal(result(ok({"page_count": 1, "pages": [{**page, "skew": 400.0}],
                                                 "texts": [], "scanned": True})), ocr=True)
