"""Issue 23: a user's hostile input is one clear line and exit 2, within bounded memory and
time, with no traceback and nothing left behind: the real CLI, engine and parser image.

Each statement is read only in a sandbox (``SBX_ANALYSIS__MEMORY_MB`` here 256,
``SBX_ANALYSIS__TIMEOUT_SECONDS`` 20); the controller's own peak RSS (its ``VmHWM``) must
stay under :data:`RSS_BOUND`, the bound the issue names, whatever the PDF holds.
"""

from __future__ import annotations

import os
import signal
import socket
import time

import pytest

from tests.integration.hostile.harness import MIB, controller_env, run_controller
from tests.integration.hostile.inputs import HOSTILE_PDFS, csv_lines, oversized, write_target

pytestmark = pytest.mark.docker

RSS_BOUND = 700 * MIB
ANALYSIS_ENV = {"SBX_ANALYSIS__MEMORY_MB": "256", "SBX_ANALYSIS__TIMEOUT_SECONDS": "20"}
#: What each hostile PDF's one line must say (any of the phrases).
EXPECTED = {
    "text_flood": ("analysis needed more than 256 MiB", "analysis took more than 20 s"),
    "inflate_bomb": ("analysis needed more than 256 MiB", "analysis took more than 20 s"),
    "many_pages": ("30000 pages, more than the 500 a statement may have",),
    "page_tree_loop": ("is not a readable PDF", "has no text"),
    "deep_nesting": ("is not a readable PDF", "has no text"),
    "broken_encryption": ("is not a readable PDF", "is password-protected", "does not look like a bank statement"),
    "malformed_font": ("analysis needed more than 256 MiB", "analysis took more than 20 s", "is not a readable PDF"),
}


def run_target(tmp_path, data, **env: str):  # noqa: ANN001, ANN201
    finished = run_controller(tmp_path, controller_env(tmp_path, data, **ANALYSIS_ENV, **env),
                              "run", "--target", "t")
    errors = [line for line in finished.stderr.splitlines() if line.startswith("error: ")]
    return finished, errors


def assert_one_line(finished, errors, phrases) -> None:  # noqa: ANN001
    assert finished.code == 2, finished.stderr[-3000:]
    assert len(errors) == 1, finished.stderr[-3000:]
    assert any(p in errors[0] for p in phrases), errors[0]
    assert "Traceback" not in finished.stderr + finished.stdout
    # A refusal is logged as one (issue 31): no error-level line, no exception frames, no crash event.
    assert '"level": "error"' not in finished.stderr and '"exception"' not in finished.stderr
    assert '"loop.refused"' in finished.stderr or '"loop.' not in finished.stderr
    # VmHWM: the controller's own peak (ru_maxrss would include the pytest image it was forked from)
    assert 0 < finished.peak_hwm < RSS_BOUND, f"controller peak RSS {finished.peak_hwm / MIB:.0f} MiB"


@pytest.mark.parametrize("name", sorted(HOSTILE_PDFS))
def test_a_hostile_pdf_is_one_line_and_exit_2(tmp_path, parser_image, no_leftovers, name):  # noqa: ANN001
    data = tmp_path / "data"
    write_target(data, "t", HOSTILE_PDFS[name]())
    finished, errors = run_target(tmp_path, data)
    assert_one_line(finished, errors, EXPECTED[name])
    assert not (tmp_path / "custom_parsers").exists()


def test_a_pdf_over_the_size_cap_is_refused_before_any_sandbox(tmp_path, parser_image, no_leftovers):  # noqa: ANN001
    data = tmp_path / "data"
    write_target(data, "t", oversized(3))
    finished, errors = run_target(tmp_path, data, SBX_ANALYSIS__MAX_PDF_MB="2")
    assert_one_line(finished, errors, ("larger than the 2 MiB a statement may be",))
    assert "SBX_ANALYSIS__MAX_PDF_MB" in errors[0]
    assert "sandbox.executed" not in finished.stderr


@pytest.mark.parametrize(("csv", "env", "phrase"), [
    (csv_lines([f"c{i}" for i in range(5000)], 1), {}, "5000 columns, more than the 200 allowed"),
    (csv_lines(["Date", "Description", "Balance"], 1500), {"SBX_ANALYSIS__MAX_CSV_ROWS": "1000"},
     "1500 rows, more than the 1000 allowed"),
    (csv_lines(["Date", "Description", "Balance"], 80_000), {"SBX_ANALYSIS__MAX_CSV_MB": "1"},
     "larger than the 1 MiB allowed"),
], ids=["wide", "long", "big"])
def test_a_hostile_result_csv_is_one_line_and_exit_2(tmp_path, parser_image, no_leftovers, csv, env, phrase):  # noqa: ANN001
    data = tmp_path / "data"
    write_target(data, "t", oversized(0), csv)
    finished, errors = run_target(tmp_path, data, **env)
    assert_one_line(finished, errors, (phrase,))
    assert "SBX_ANALYSIS__MAX_CSV" in errors[0]


def test_sigterm_during_analysis_removes_the_runs_containers(tmp_path, parser_image, docker_client):  # noqa: ANN001
    """SIGTERM while the statement is read in a sandbox: exit 143, one line, nothing of the run left."""
    data = tmp_path / "data"
    write_target(data, "t", HOSTILE_PDFS["text_flood"]())

    def terminate_once_analysing(pid: int) -> None:
        owner = f"{socket.gethostname()}:{pid}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _analysis_running(docker_client, owner):
            time.sleep(0.2)
        time.sleep(1.0)
        os.kill(pid, signal.SIGTERM)

    env = controller_env(tmp_path, data, SBX_ANALYSIS__TIMEOUT_SECONDS="120", SBX_ANALYSIS__MEMORY_MB="2048")
    finished = run_controller(tmp_path, env, "run", "--target", "t", on_start=terminate_once_analysing)
    assert finished.code == 143, finished.stderr[-3000:]
    assert "terminated: containers of this run were removed" in finished.stderr
    assert "Traceback" not in finished.stderr
    owner = {"label": f"org.sandloop.owner={finished.owner}"}
    assert docker_client.containers.list(all=True, sparse=True, filters=owner) == []
    assert docker_client.volumes.list(filters=owner) == []


def _analysis_running(client, owner: str) -> bool:  # noqa: ANN001
    labels = [f"org.sandloop.owner={owner}", "org.sandloop.attempt=analysis"]
    return bool(client.containers.list(sparse=True, filters={"label": labels}))


@pytest.mark.parametrize(("name", "phrases"), [
    ("text_flood", ("analysis needed more than 256 MiB", "analysis took more than 20 s")),
    ("many_pages", ("30000 pages, more than the 500 a document may have",)),
    ("deep_nesting", ("is not a readable PDF", "has no text")),
])
def test_an_idris_reference_pdf_is_read_in_a_sandbox_within_the_caps(
        tmp_path, docker_client, base_settings, parser_image, no_leftovers, name, phrases):  # noqa: ANN001
    """The Idris agent's document reader: the same probe and caps; one line, nothing left."""
    from agents.idris.document import load_document
    from agents.idris.document_reader import SandboxPdfText
    from agents.ports.config import AnalysisLimits
    from agents.ports.errors import TargetError
    from controller.platform.sandbox.docker import DockerSandbox
    from tests.owner import TEST_OWNER

    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                            runtime=base_settings.sandbox_runtime)
    caps = AnalysisLimits(memory_mb=256, timeout_seconds=20)
    reader = SandboxPdfText(sandbox, lambda image: parser_image, base_settings.sandbox, caps, {"agent": "pytest"})
    (tmp_path / "doc.pdf").write_bytes(HOSTILE_PDFS[name]())
    try:
        with pytest.raises(TargetError) as raised:
            load_document(tmp_path / "doc.pdf", reader)
    finally:
        sandbox.close()
    assert any(p in str(raised.value) for p in phrases) and "\n" not in str(raised.value)
