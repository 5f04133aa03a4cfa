"""``run --all`` without Docker: the command line, how a target's result is read, the table.

Running targets for real (children, sandboxes) is tests/integration/agents/test_corpus.py.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.ports.errors import ConfigError
from agents.ports.memory import check_subject
from agents.target_chains import Chain
from controller.entry.batch import (
    TargetResult,
    batch_scope,
    child_env,
    child_options,
    outcome,
    prepare,
    print_table,
    run_all,
    scoped,
)
from controller.entry.cli import build_parser
from controller.platform.settings import PROJECT_ROOT, Settings


def cli(tmp_path: Path, *args: str, data: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SBX_DATA_DIR": str(data or tmp_path / "data"), "SBX_RUNS_DIR": str(tmp_path / "runs"),
           "SBX_PARSERS_DIR": str(tmp_path / "parsers")}
    return subprocess.run([sys.executable, "-m", "controller", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


class TestCommandLine:
    """--target and --all: exactly one of them."""

    def test_all_and_target_are_exclusive(self, tmp_path: Path) -> None:
        """Both at once is a usage error (exit 2), nothing written."""
        proc = cli(tmp_path, "run", "--all", "--target", "icici")
        assert proc.returncode == 2 and "not allowed with" in proc.stderr
        assert not (tmp_path / "runs").exists()

    def test_one_of_them_is_required(self, tmp_path: Path) -> None:
        """Neither is a usage error naming both options."""
        proc = cli(tmp_path, "run")
        assert proc.returncode == 2 and "--target" in proc.stderr and "--all" in proc.stderr

    def test_no_targets_is_one_line(self, tmp_path: Path) -> None:
        """An empty data folder: one clear line, exit 2, before any engine is needed."""
        (tmp_path / "data").mkdir()
        proc = cli(tmp_path, "run", "--all")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: no targets in")
        assert "Traceback" not in proc.stderr

    def test_options_reach_every_child(self) -> None:
        """--max-attempts, --coder and --model given to run --all are passed on."""
        args = build_parser().parse_args(["run", "--all", "--max-attempts", "3", "--coder", "offline"])
        assert args.all and args.target is None
        assert child_options(args) == ["--max-attempts", "3", "--coder", "offline"]
        assert child_options(argparse.Namespace(all=True)) == []

    def test_children_use_the_batch_folders(self, tmp_path: Path) -> None:
        """Children get the data, runs, parsers and cache folders this batch resolved."""
        settings = Settings(_env_file=None, data_dir=tmp_path / "d", runs_dir=tmp_path / "r",  # type: ignore[call-arg]
                            parsers_dir=tmp_path / "p", max_attempts=4)
        env = child_env(settings)
        assert (env["SBX_DATA_DIR"], env["SBX_RUNS_DIR"], env["SBX_PARSERS_DIR"], env["SBX_MAX_ATTEMPTS"]) == (
            str(tmp_path / "d"), str(tmp_path / "r"), str(tmp_path / "p"), "4")

    def test_parallelism_setting_defaults_to_two(self) -> None:
        """SBX_PARALLEL_RUNS: 2 by default (two cores), and validated."""
        assert Settings(_env_file=None).parallel_runs == 2  # type: ignore[call-arg]


class TestChains:
    """Targets that follow one another run as a chain, under a subject of this batch's own."""

    def test_each_conversation_gets_a_subject_of_its_own(self) -> None:
        """The chain's subject (else its first target), then a scope per chain: a valid subject name,
        within 80 characters, never shared by two chains; a chain of one bank target gets none."""
        units = [Chain(("icici",)), Chain(("d1", "d2"), "Maria Silva", True), Chain(("e1", "e2"), "Maria Silva", True),
                 Chain(("x1",), "A" * 80, True), Chain(("f1", "f2"), None, True)]
        out = scoped(units, batch_scope)
        assert out[0] == units[0]
        subjects = [unit.subject or "" for unit in out[1:]]
        assert subjects[0].startswith("Maria Silva @run-all-") and subjects[3].startswith("f1 @run-all-")
        assert len(set(subjects)) == 4 and all(check_subject(s) == s and len(s) <= 80 for s in subjects)
        assert [unit.targets for unit in out] == [unit.targets for unit in units]

    def test_subject_does_not_go_with_all(self, tmp_path: Path) -> None:
        """run --all --subject: one line, before anything runs (a batch scopes its own subjects)."""
        settings = Settings(_env_file=None, data_dir=PROJECT_ROOT / "data", runs_dir=tmp_path,  # type: ignore[call-arg]
                            subject="Maria Silva")
        with pytest.raises(ConfigError, match=r"--subject \(SBX_SUBJECT\) does not go with --all"):
            run_all(build_parser().parse_args(["run", "--all", "--subject", "Maria Silva"]), settings, io.StringIO())
        assert not any(tmp_path.iterdir())

    def test_conversations_need_no_image(self, tmp_path: Path) -> None:
        """A folder of intake targets only: nothing to build (prepare indexed the agent's first image,
        and an intake agent has none: IndexError, and run --all ended with 'a bug in sandloop')."""
        data = tmp_path / "data"
        for name in ("intake-day1", "intake-day2"):
            (data / name).mkdir(parents=True)
            (data / name / "target.toml").write_bytes((PROJECT_ROOT / "data" / name / "target.toml").read_bytes())
        said: list[str] = []
        prepare(Settings(_env_file=None, data_dir=data, runs_dir=tmp_path / "runs"), said.append)  # type: ignore[call-arg]
        assert said == []


class TestOutcome:
    """A target's result from its child's exit code and summary.json."""

    def test_summary_wins(self) -> None:
        """With a summary, status, attempts and the last problem come from it."""
        summary = {"status": "failed", "attempts": 3, "max_attempts": 3, "run_dir": "runs/x",
                   "last_problem": "attempt 3: mismatch: shape (0, 4) != expected (30, 4)"}
        result = outcome("kestrel", 1, summary, 12.5)
        assert (result.status, result.attempts, result.max_attempts, result.ok) == ("failed", 3, 3, False)
        assert result.note.startswith("attempt 3: mismatch")

    def test_unverified_is_ok(self) -> None:
        """A run without result.csv that ran is not a failure."""
        assert outcome("t", 0, {"status": "unverified", "attempts": 1, "max_attempts": 3}, 1.0).ok

    def test_usage_error_without_summary(self) -> None:
        """Exit 2 without a summary is an error, with the child's one-line message."""
        result = outcome("bad", 2, None, 0.5, "{\"event\": \"x\"}\nerror: no statement PDF in data/bad\n")
        assert (result.status, result.note, result.ok) == ("error", "error: no statement PDF in data/bad", False)

    def test_killed_by_sigint(self) -> None:
        """A child stopped by SIGINT before it could exit 130 counts as interrupted."""
        assert outcome("t", -2, None, 1.0).status == "interrupted"

    def test_unknown_exit(self) -> None:
        """An unexpected exit status is an error that says the status."""
        assert outcome("t", -9, None, 1.0).note == "exit status -9"


class TestTable:
    """The closing table."""

    def results(self) -> list[TargetResult]:
        return [TargetResult("aldermoor", "passed", 1, 3, 6.25, verified="both"),
                TargetResult("kestrel", "failed", 3, 3, 20.0, "runs/k", "attempt 3: mismatch"),
                TargetResult("docs", "unverified", 1, 3, 4.0)]

    def test_columns_and_last_line(self) -> None:
        """target, status, attempts, time per row; problems; unverified; 'N passed, M failed' last."""
        out = io.StringIO()
        print_table(self.results(), out)
        lines = out.getvalue().splitlines()
        assert lines[1].split() == ["target", "status", "attempts", "time", "verified"]
        assert lines[2].split() == ["aldermoor", "passed", "1/3", "6.2", "s", "both"]
        assert "  kestrel: attempt 3: mismatch (runs/k)" in lines
        assert "1 unverified (no result.csv to check against)" in lines
        assert lines[-1] == "1 passed, 1 failed"

    def test_self_consistent_counts_as_passed(self) -> None:
        """A run without result.csv that is self-consistent passes, and the table says how."""
        out = io.StringIO()
        print_table([TargetResult("nocsv", "self-consistent", 1, 3, 2.0, verified="self-consistent")], out)
        lines = out.getvalue().splitlines()
        assert lines[2].split()[-1] == "self-consistent" and lines[-1] == "1 passed, 0 failed"

    def test_all_passed(self) -> None:
        """Nothing failed: the last line says so."""
        out = io.StringIO()
        print_table(self.results()[:1], out)
        assert out.getvalue().splitlines()[-1] == "1 passed, 0 failed"

    def test_interrupted_batch(self) -> None:
        """Interrupted and never started targets are counted apart from failures."""
        out = io.StringIO()
        print_table([TargetResult("a", "passed", 1, 3, 5.0), TargetResult("b", "interrupted", None, None, 1.0),
                     TargetResult("c", "not run", None, None, 0.0)], out)
        lines = out.getvalue().splitlines()
        assert lines[-2:] == ["2 interrupted or not run", "1 passed, 0 failed"]
