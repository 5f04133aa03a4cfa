"""`controller check` of submissions in their declared environments: real index, real builds.

A small class (tests/fixtures/env_submissions): a submission that needs PyPDF2 and pins
pandas 2.2.3, one with the same requirements and helper modules (its environment is
reused), one that cannot be resolved, one with no requirements, and a hostile one that
looks for the expected answer. Resolution is as of 2025-08-31, so the pins do not drift.
Wheels are cached under .cache/ (the first run downloads about 60 MB from the index).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")

CLASS = PROJECT_ROOT / "tests" / "fixtures" / "env_submissions"


@pytest.fixture
def page_target(tmp_path: Path, icici_copy: Path) -> Path:
    """The ICICI PDF with an expected CSV the tiny submissions can produce: pages and a word."""
    (icici_copy / "icici" / "result.csv").write_text("pages,kind\n2,statement\n")
    return icici_copy


def check(tmp_path: Path, data_dir: Path, *parsers: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SBX_DATA_DIR": str(data_dir), "SBX_RUNS_DIR": str(tmp_path / "runs"),
           "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"), "SBX_LOG_FORMAT": "console"}
    command = [sys.executable, "-m", "controller", "check", "--target", "icici", "--as-of", "2025-08-31",
               "--parser", *map(str, parsers)]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1500, check=False)


def table(stdout: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in stdout.splitlines()
            if line.split() and line.split()[0][:2] in {"a_", "b_", "c_", "d_", "e_"}}


class TestSubmissionsInTheirEnvironments:
    def test_a_class_runs_each_submission_in_its_own_environment(self, tmp_path, page_target):
        """Pinned pandas 2 and PyPDF2 pass, helpers import, equal sets share one image, a bad set fails alone."""
        proc = check(tmp_path, page_target, CLASS)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        rows = table(proc.stdout)
        assert len(rows) == 5, proc.stdout + proc.stderr
        assert rows["a_pypdf2_old_pandas"][1] == "pass", proc.stdout + proc.stderr
        assert rows["b_helper_module"][1] == "pass", proc.stdout + proc.stderr
        assert rows["a_pypdf2_old_pandas"][3] == rows["b_helper_module"][3]  # one image for equal sets
        assert rows["b_helper_module"][4] == "reused"
        assert rows["c_unresolvable"][1:5] == ["fail", "-", "-", "failed"]
        assert "cannot be resolved" in proc.stdout
        assert rows["d_no_requirements"][1] == "pass"
        assert rows["e_looks_for_the_answer"][1] == "fail"
        assert "RuntimeError: the expected answer" in proc.stdout
        assert proc.stdout.strip().splitlines()[-1] == "3 passed, 2 failed"

    def test_a_second_check_builds_nothing(self, tmp_path, page_target):
        """Environments are cached by content: a repeated check reuses every image."""
        check(tmp_path, page_target, CLASS / "a_pypdf2_old_pandas")
        proc = check(tmp_path, page_target, CLASS / "a_pypdf2_old_pandas")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert table(proc.stdout)["a_pypdf2_old_pandas"][4] == "reused"
        assert "environments: 0 built, 1 reused, 0 failed" in proc.stdout
