"""A target's own environment (``[environment]`` of target.toml): real index, real image builds.

One environment for all three tests: PyPDF2 and pandas 2.2.3 resolved as of 2025-08-31, and
the Debian package qpdf (so the image build's apt step runs for real). The first test to
run builds it (about a minute, wheels cached under .cache/), the others reuse it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")

ENVIRONMENT = ('[environment]\npython = ["PyPDF2==3.0.1", "pandas==2.2.3"]\ndebian = ["qpdf"]\n'
               'as_of = "2025-08-31"\n')
PARSER = '''import shutil

import pandas as pd
from PyPDF2 import PdfReader


def parse(pdf_path):
    if shutil.which("qpdf") is None:
        raise RuntimeError("qpdf is not installed")
    if not pd.__version__.startswith("2.2."):
        raise RuntimeError(f"expected pandas 2.2, got {pd.__version__}")
    return pd.DataFrame({"pages": [len(PdfReader(pdf_path).pages)], "kind": pd.Series(["statement"], dtype=object)})
'''
ENV_LINE = re.compile(r"environment (sandloop/python-parser-env:[0-9a-f]{12}): (built in \d+ s|reused)")


def controller(tmp_path: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(tmp_path / "runs"),
           "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"), "SBX_LOG_FORMAT": "console"}
    return subprocess.run([sys.executable, "-m", "controller", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1500, check=False)


@pytest.fixture
def env_target(icici_copy: Path) -> Path:
    (icici_copy / "icici" / "target.toml").write_text(ENVIRONMENT, encoding="utf-8")
    return icici_copy


def test_check_of_a_parser_runs_in_the_targets_environment(tmp_path, env_target):
    """A plain parser importing PyPDF2 and needing qpdf passes, judged under the environment's pandas."""
    (env_target / "icici" / "result.csv").write_text("pages,kind\n2,statement\n")
    parser = tmp_path / "parsers" / "pypdf2_parser.py"
    parser.parent.mkdir()
    parser.write_text(PARSER, encoding="utf-8")
    proc = controller(tmp_path, env_target, "check", "--target", "icici", "--parser", str(parser))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "packages as of 2025-08-31" in proc.stderr + proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_run_uses_the_environment_image(tmp_path, env_target):
    """The run's image is the environment's (progress line, run.json); results are judged there (pandas 2.2.3)."""
    proc = controller(tmp_path, env_target, "run", "--target", "icici", "--max-attempts", "1")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    found = ENV_LINE.search(output)
    assert found, output
    assert "judged under pandas 2.2.3" in output
    (run_dir,) = (tmp_path / "runs").glob("*-icici-*")  # runs/ also keeps analysis/ (statement summaries)
    assert json.loads((run_dir / "run.json").read_text())["image"] == found.group(1)


def test_an_unresolvable_environment_is_one_line_and_exit_2(tmp_path, icici_copy):
    (icici_copy / "icici" / "target.toml").write_text(
        '[environment]\npython = ["pandas==2.2.3", "pandas==1.5.3"]\n', encoding="utf-8")
    proc = controller(tmp_path, icici_copy, "run", "--target", "icici", "--max-attempts", "1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "cannot be resolved" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_resume_judges_in_the_recorded_environment(tmp_path, env_target):
    """A resumed run of an environment target runs and judges its later attempts in that environment."""
    from tests.integration.controller.test_resume import cli, interrupt_after, spoil_one_cell

    spoil_one_cell(env_target)  # every attempt mismatches: the run goes on past attempt 1
    run_id, first, _ = interrupt_after(tmp_path, env_target, "[attempt 1] compare", signal.SIGKILL)
    assert "judged under pandas 2.2.3" in first, first
    resumed = cli(tmp_path, env_target, "run", "--resume", run_id)
    output = resumed.stdout + resumed.stderr
    assert resumed.returncode == 1, output
    assert re.search(r"\[attempt 2\] compare\s+mismatch .*judged under pandas 2\.2\.3", output), output
    record = json.loads((tmp_path / "runs" / run_id / "run.json").read_text())
    assert "/python-parser-env:" in record["image"]
