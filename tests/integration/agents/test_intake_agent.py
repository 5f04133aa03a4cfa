"""The intake agent through the real CLI and the real engine's session: a run killed
mid-conversation (SIGKILL, as a crashed machine or a lost Pod) resumes with
`run --resume RUN_ID` and ends as an uninterrupted run does, each reply applied once.

The child is `python -m controller` with one TEST DOUBLE: its progress display kills the
process right after printing turn 4's `resolve` line (the run is too fast to kill from
outside at a chosen point). Everything else is the real runner: run.json, the strict
checkpoint, the session, resume_line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT

pytestmark = pytest.mark.usefixtures("parser_image")

TARGET = "intake-priority-shift"
#: The CLI with a progress display that SIGKILLs its own process after turn 4's resolve line.
KILLED_CHILD = """
import os, signal, sys
from controller.platform import progress
real = progress.Progress.step
def step(self, attempt, node, outcome, seconds, detail=""):
    real(self, attempt, node, outcome, seconds, detail)
    if node == "resolve" and attempt == 4:
        os.kill(os.getpid(), signal.SIGKILL)
progress.Progress.step = step
from controller.entry.cli import main
sys.exit(main(sys.argv[1:]))
"""


def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "SBX_DATA_DIR": str(tmp_path / "data"), "SBX_RUNS_DIR": str(tmp_path / "runs"),
            "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"), "PYTHONPATH": str(PROJECT_ROOT)}


def test_a_killed_conversation_resumes(tmp_path):
    shutil.copytree(PROJECT_ROOT / "data" / TARGET, tmp_path / "data" / TARGET)
    killed = subprocess.run([sys.executable, "-c", KILLED_CHILD, "run", "--target", TARGET], cwd=tmp_path,
                            env=env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    run_id = re.search(r"^==> run ([A-Za-z0-9_-]+): ", killed.stdout, re.M)
    assert run_id, killed.stdout
    run_dir = tmp_path / "runs" / run_id[1]
    assert not (run_dir / "summary.json").exists()

    resumed = subprocess.run([sys.executable, "-m", "controller", "run", "--resume", run_id[1]], cwd=tmp_path,
                             env=env(tmp_path), capture_output=True, text=True, timeout=300, check=False)

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    skipped = next(line for line in resumed.stdout.splitlines() if "resuming run" in line)
    assert "listen [4]" in skipped and "resolve [3]" in skipped
    steps = [line.strip() for line in resumed.stdout.splitlines() if line.startswith("  [")]
    assert not any(s.startswith(("[setup]", "[attempt 1]", "[attempt 2]", "[attempt 3]")) for s in steps), steps
    assert "PASSED: intake conversation" in resumed.stdout
    graph = json.loads((run_dir / "graph.json").read_text())
    assert [h["value"] for h in graph["history"]["Income.annual_amount"]] == [90000, 0]
    assert graph["traversal"] == ["Personal", "Goals", "Income", "Savings", "Expenses"]
    assert [h["turn"] for h in graph["history"]["Savings.emergency_fund"]] == [7]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "passed" and summary["agent"] == "intake" and summary["attempts"] == 10
