"""``run --all`` over a data folder holding seed 002's Day 1 → Day 2 pair and a bank statement, through the
real CLI (children, the real sandbox for the statement): the pair runs in order under a subject of the
batch's own, so the batch passes, and passes again on the same runs folder (a second batch starts the
chain from an empty memory: Day 1 is asked its questions again)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")
PAIR = ("intake-day1", "intake-day2")


def run_all(root: Path, data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(root / "runs"),
           "SBX_PARSERS_DIR": str(root / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
           "SBX_PARALLEL_RUNS": "2"}
    return subprocess.run([sys.executable, "-m", "controller", "run", "--all"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


def copy(data: Path, *names: str) -> Path:
    for name in names:
        shutil.copytree(PROJECT_ROOT / "data" / name, data / name)
    return data


class TestChainInABatch:
    def test_twice_on_one_runs_folder(self, tmp_path: Path) -> None:
        """Each batch ends '3 passed, 0 failed'; Day 2 ran after Day 1 with the batch's subject, a new
        one each batch; each Day 1 asked its questions (its memory was empty), each Day 2 asked none of them."""
        data = copy(tmp_path / "data", *PAIR, "icici")
        subjects = []
        for _ in range(2):
            proc = run_all(tmp_path, data)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
            assert proc.stdout.strip().splitlines()[-1] == "3 passed, 0 failed"
            (chain,) = [line for line in proc.stdout.splitlines() if line.startswith("==> intake-day1 → intake-day2")]
            subjects.append(chain.split("subject ")[1].split("'")[1])
            out = proc.stdout.splitlines()
            day1 = [line for line in out if line.split()[:1] == ["intake-day1"]]
            day2 = [i for i, line in enumerate(out) if line.split()[:1] == ["intake-day2"]]
            day1_done = next(i for i, line in enumerate(out)
                             if line.startswith("==> [") and "] intake-day1: passed" in line)
            assert day2 and min(day2) > day1_done
            assert any("How old are you?" in line for line in day1)
            assert not any("How old are you?" in out[i] for i in day2)
        assert subjects[0] != subjects[1] and all(s.startswith("Maria Silva @run-all-") for s in subjects)
        summaries = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*-intake-day*/summary.json")]
        assert sorted((s["target"], s["status"], s["attempts"]) for s in summaries) == [
            ("intake-day1", "passed", 6), ("intake-day1", "passed", 6),
            ("intake-day2", "passed", 2), ("intake-day2", "passed", 2)]
        assert len(list((tmp_path / "runs" / "memory").glob("*.sqlite"))) == 2

    def test_after_a_target_that_did_not_run(self, tmp_path: Path) -> None:
        """Day 1 without its replies ends in an error: Day 2 is skipped, saying why, and counted."""
        data = copy(tmp_path / "data", *PAIR)
        (data / "intake-day1" / "replies.txt").unlink()
        proc = run_all(tmp_path, data)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "  intake-day2: not run: it follows intake-day1, which ended error" in proc.stdout.splitlines()
        assert proc.stdout.strip().splitlines()[-1] == "0 passed, 2 failed"
        assert not list((tmp_path / "runs").glob("*-intake-day2-*"))
