"""The agent on every bank of the synthetic corpus, through the real CLI and the real sandbox.

The corpus (seed 7, as ``make eval``) is generated into a temporary data folder and run
with ``run --all`` (two targets at a time, at most three attempts each), which also pins
the batch runner: its progress, closing table, exit status and that parallel runs share no
run folder or parser file. A layout outside the offline coder ends as failed with a diff
report, never a crash; two runs of the same target at once do not collide.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.corpus.generate import generate
from tests.corpus.specs import BANKS

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")
SEED = 7


def cli(root: Path, data: Path, *args: str, parallel: int = 2) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "SBX_DATA_DIR": str(data),
        "SBX_RUNS_DIR": str(root / "runs"),
        "SBX_PARSERS_DIR": str(root / "custom_parsers"),
        "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
        "SBX_PARALLEL_RUNS": str(parallel),
    }
    return subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def summaries(root: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((root / "runs").glob("*/summary.json"))]


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str, str]:
    """``run --all --max-attempts 3`` over the whole corpus, once for the tests below."""
    root = tmp_path_factory.mktemp("corpus-run")
    generate(root / "data", SEED)
    code, out, err = finish(cli(root, root / "data", "run", "--all", "--max-attempts", "3"))
    return root, code, out, err


class TestCorpus:
    """Every bank of the corpus through the agent loop and the real sandbox."""

    def test_every_bank_passes(self, corpus_run: tuple[Path, int, str, str]) -> None:
        """Exit 0 and 'N passed, 0 failed' as the last line, one passed summary per bank."""
        root, code, out, err = corpus_run
        assert code == 0, out + err[-3000:]
        assert out.strip().splitlines()[-1] == f"{len(BANKS)} passed, 0 failed"
        found = {s["target"]: s for s in summaries(root)}
        assert sorted(found) == sorted(spec.name for spec in BANKS)
        assert all(s["status"] == "passed" and s["attempts"] <= 3 for s in found.values())

    def test_table_and_progress_cover_every_bank(self, corpus_run: tuple[Path, int, str, str]) -> None:
        """Progress lines are prefixed by target, each target is counted done, the table lists all."""
        _, _, out, _ = corpus_run
        lines = out.splitlines()
        header = next(i for i, line in enumerate(lines)
                      if line.split() == ["target", "status", "attempts", "time", "verified"])
        rows = {line.split()[0]: line.split() for line in lines[header + 1 : header + 1 + len(BANKS)]}
        assert sorted(rows) == sorted(spec.name for spec in BANKS)
        assert all(row[1] == "passed" and row[2].endswith("/3") for row in rows.values())
        assert all(row[-1] == "both" for row in rows.values())  # compared, and self-consistent
        for spec in BANKS:
            assert any(line.strip().startswith(f"{spec.name} ") and "[attempt 1] execute" in line for line in lines)
            assert any(line.startswith("==> [") and f"] {spec.name}: passed" in line for line in lines)

    def test_runs_share_no_folder_or_parser(self, corpus_run: tuple[Path, int, str, str]) -> None:
        """Each bank has its own run folder and its own published parser."""
        root, _, _, _ = corpus_run
        runs = [s["run_dir"] for s in summaries(root)]
        assert len(set(runs)) == len(runs) == len(BANKS)
        parsers = sorted(p.name for p in (root / "custom_parsers").glob("*_parser.py"))
        assert parsers == sorted(f"{spec.name}_parser.py" for spec in BANKS)


class TestOutsideTheCoder:
    """A layout the offline coder cannot express, next to one it can."""

    def test_fails_with_a_diff_and_exit_1(self, tmp_path: Path) -> None:
        """kestrel (no table) fails with a diff report; aldermoor passes; the batch exits 1."""
        generate(tmp_path / "data", SEED, ["aldermoor", "kestrel"])
        code, out, err = finish(cli(tmp_path, tmp_path / "data", "run", "--all", "--max-attempts", "2"))
        assert code == 1, out + err[-3000:]
        assert out.strip().splitlines()[-1] == "1 passed, 1 failed"
        assert "Traceback" not in out + err
        (kestrel,) = [s for s in summaries(tmp_path) if s["target"] == "kestrel"]
        assert kestrel["status"] == "failed" and "mismatch" in str(kestrel["last_problem"])
        diff = Path(str(kestrel["run_dir"])) / "attempts" / "1" / "diff.txt"
        assert "shape: expected (30, 4)" in diff.read_text()
        assert not (tmp_path / "custom_parsers" / "kestrel_parser.py").exists()


class TestInterrupt:
    """Ctrl-C during run --all."""

    def test_ctrl_c_stops_the_children_and_prints_the_table(self, tmp_path: Path) -> None:
        """SIGINT mid-batch: exit 130, the table of what finished, no container left behind."""
        generate(tmp_path / "data", SEED, ["aldermoor", "corvid", "dunmore", "glenrock"])
        proc = cli(tmp_path, tmp_path / "data", "run", "--all")
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:  # wait until a child is analysing its statement
            seen.append(line)
            if "[setup]" in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, "".join(seen) + out + err[-2000:]
        lines = out.strip().splitlines()
        assert "interrupted or not run" in lines[-2] and lines[-1].endswith("failed")
        assert "Traceback" not in out + err


class TestSameTargetTwice:
    """Two runs of one target at the same time."""

    def test_do_not_collide(self, tmp_path: Path) -> None:
        """Both pass, each in its own run folder; the published parser is one of theirs, whole."""
        generate(tmp_path / "data", SEED, ["corvid"])
        procs = [cli(tmp_path, tmp_path / "data", "run", "--target", "corvid") for _ in range(2)]
        results = [finish(p) for p in procs]
        assert [code for code, _, _ in results] == [0, 0], results
        runs = summaries(tmp_path)
        assert len({s["run_dir"] for s in runs}) == 2
        published = (tmp_path / "custom_parsers" / "corvid_parser.py").read_text()
        attempts = {(Path(str(s["run_dir"])) / "attempts" / str(s["attempts"]) / "parser.py").read_text() for s in runs}
        assert published in attempts
