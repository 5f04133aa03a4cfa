"""resume, replay and check --module as a user meets them without Docker: bad input is one
line and exit 2; the replay report's diff names what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.base import ReplayOutcome
from agents.ports.errors import TargetError
from controller.entry.replay import facts_diff, output_diff, print_replay
from controller.runner.agent_runner import last_attempt
from tests.unit.controller.entry.test_cli import assert_one_line_error, cli


class TestUsageErrors:
    def test_resume_of_an_unknown_run(self, tmp_path):
        """--resume of a run that has no run.json is one line, exit 2."""
        assert_one_line_error(cli(tmp_path, "run", "--resume", "20260101-000000-icici-0000"), "no run")

    @pytest.mark.parametrize("command", ["replay", "resume"])
    def test_run_id_that_is_a_path(self, tmp_path, command):
        """A run id with a slash or dots is refused before any file is read."""
        args = ["replay", "../etc"] if command == "replay" else ["run", "--resume", "../etc"]
        assert_one_line_error(cli(tmp_path, *args), "not a run id")

    def test_replay_attempt_zero(self, tmp_path):
        """--attempt counts from 1."""
        assert_one_line_error(cli(tmp_path, "replay", "x", "--attempt", "0"), "--attempt 0")

    def test_check_module_on_a_parser_target(self, tmp_path):
        """A bank-statement target checks parsers, so --module is refused, naming --parser."""
        module = tmp_path / "Model.idr"
        module.write_text("module Model\n")
        assert_one_line_error(cli(tmp_path, "check", "--target", "icici", "--module", str(module)), "--parser")

    def test_graph_of_an_unknown_agent(self, tmp_path):
        """graph --agent accepts only registered agents: one line naming them, exit 2."""
        proc = cli(tmp_path, "graph", "--agent", "nope")
        assert proc.returncode == 2
        assert proc.stderr.strip() == "error: no agent called 'nope' (agents: bank_parser, idris, intake, blueprint)"


def outcome(**replayed: object) -> ReplayOutcome:
    recorded = {"outcome": "ok", "failure": None, "message": "returned 2 rows x 2 columns", "exit_code": 0}
    return ReplayOutcome(Path("parser.py"), recorded, {**recorded, **replayed}, (), "a\nb\nc", "a\nB\nc")


class TestReplayReport:
    def test_same_outcome(self, capsys):
        """Equal facts print SAME and the facts."""
        same = outcome()
        print_replay(same, 2)
        out = capsys.readouterr().out
        assert same.same and out.startswith("SAME: attempt 2's parser.py")
        assert "returned 2 rows x 2 columns" in out

    def test_different_outcome_is_a_diff(self, capsys):
        """Differing facts print DIFFERENT with -/+ lines for what changed only, then the output diff."""
        different = outcome(message="returned 3 rows x 2 columns")
        print_replay(different, 1)
        out = capsys.readouterr().out
        assert not different.same and out.startswith("DIFFERENT")
        assert '-message: "returned 2 rows x 2 columns"' in facts_diff(different)
        assert '+message: "returned 3 rows x 2 columns"' in facts_diff(different)
        assert not any(line.startswith(("-exit_code", "+exit_code")) for line in facts_diff(different))
        assert "-b" in output_diff(different) and "+B" in output_diff(different)

    def test_last_attempt_is_the_highest_number(self, tmp_path):
        """Attempt folders are compared as numbers (10 after 9)."""
        for n in (1, 9, 10):
            (tmp_path / "attempts" / str(n)).mkdir(parents=True)
        assert last_attempt(tmp_path) == 10

    def test_no_attempts(self, tmp_path):
        """A run that never got to an attempt cannot be replayed."""
        with pytest.raises(TargetError, match="no attempts"):
            last_attempt(tmp_path)
