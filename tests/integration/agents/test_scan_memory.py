"""Issue 35: a scan's parser stays well under the sandbox's default memory limit.

A 3-page statement of a borderless bank is scanned as a scanner would (tests/corpus/scan.py:
200 dpi, grey, JPEG, every page turned 0.7°); the offline coder's parser for it runs in the
real python-parser image with the default sandbox limits (512 MiB), and reports its peak
memory, as the container's memory cgroup counts it, on its ``sandloop-ocr`` line. The scan is
read (and OCR'd) as production reads it: by the statement probe in a sandbox of the same image
(``StatementReader``), so the host needs no Tesseract.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest

from agents.bank_parser.analysis import analyze
from agents.bank_parser.coders.offline import OfflineCoder
from agents.bank_parser.evaluate import execute_parser, parser_spec
from agents.bank_parser.repairs import read_ocr_cost
from agents.bank_parser.statement_reader import StatementReader
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.settings import Settings
from tests.corpus.cases import SKEW, write_scanned
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")
#: "Well under" the default 512 MiB: the cgroup's figure, page cache included, measured 252.
PEAK_MIB = 320
ROWS = 100  # three pages of brightwater's table


def test_a_three_page_skewed_scan_parses_well_under_512_mib(
    tmp_path: Path, docker_client, parser_image: str, base_settings: Settings,  # noqa: ANN001
) -> None:
    """Every row comes back and the parser's peak memory is under PEAK_MIB at the default limit."""
    folder = write_scanned(tmp_path, "brightwater", ROWS, 7, angle=SKEW)
    pdf = folder / "statement.pdf"
    assert len(pdfium.PdfDocument(str(pdf))) == 3
    assert base_settings.sandbox.memory_mb == 512
    backend = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER)
    try:
        reader = StatementReader(backend, parser_image, base_settings.sandbox, base_settings.analysis,
                                 {"agent": "test", "attempt": "analysis"})
        code = OfflineCoder().candidates(analyze(pdf, folder / "result.csv", reader))[0].code
        spec = parser_spec(parser_image, code, pdf.read_bytes(), base_settings.sandbox, {"agent": "test"})
        execution = execute_parser(backend, spec)
    finally:
        backend.close()
    assert execution.failure is None, execution.message
    assert execution.frame is not None and len(execution.frame) == ROWS
    cost = read_ocr_cost(execution.sandbox.stderr.data)
    assert cost is not None and cost.pages == 3
    assert 0 < cost.peak_mib < PEAK_MIB, cost
    assert 0 < cost.rss_mib <= cost.peak_mib, cost
