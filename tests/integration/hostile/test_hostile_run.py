"""Hostile parsers inside the agent loop (``run``), through the real CLI and engine, with a
coder double that writes them (see hostile_run.py): the loop survives and every run ends
with a record."""

from __future__ import annotations

import json

import pytest

from controller.platform.observability.history import HistoryStore
from tests.integration.hostile import attacks
from tests.integration.hostile.conftest import SUITE_ENV, assert_nothing_written_outside_runs
from tests.integration.hostile.harness import controller_env, run_controller, tree
from tests.integration.hostile.test_hostile_results import assert_contained

pytestmark = pytest.mark.usefixtures("no_leftovers")


def hostile_run(tmp_path, data, parser_source: str, *options: str):  # noqa: ANN001, ANN201
    parser = tmp_path / "parsers" / "hostile.py"
    parser.write_text(parser_source)
    before = tree(tmp_path)
    env = controller_env(tmp_path, data, **SUITE_ENV, SBX_MAX_ATTEMPTS="2")
    finished = run_controller(tmp_path, env, str(parser), *options, "--", "run", "--target", "icici",
                              module="tests.integration.hostile.hostile_run")
    summaries = list((tmp_path / "runs").glob("*/summary.json"))
    assert len(summaries) == 1, finished.stdout[-2000:] + finished.stderr[-3000:]
    (summary_path,) = summaries
    (record,) = HistoryStore(tmp_path / "runs" / "history.sqlite").read_runs()
    assert_nothing_written_outside_runs(tmp_path, before)
    return finished, json.loads(summary_path.read_text()), record


class TestHostileRun:
    def test_attack_1_in_the_loop_is_a_failed_attempt_not_a_crash(self, workspace, baseline_rss):
        """The 4 MB nested result.json in `run`: two type_error attempts, status failed, exit 1, a record."""
        tmp_path, data = workspace
        finished, summary, record = hostile_run(tmp_path, data, attacks.NESTED_ATEXIT_FOR_RUN)
        assert_contained(finished, baseline_rss)
        assert summary["status"] == "failed" and summary["failures"] == ["type_error", "type_error"]
        assert "nested" in summary["last_problem"]
        assert record["status"] == "failed" and record["attempts"] == 2
        assert "FAILED" in finished.stdout

    def test_a_bug_inside_the_loop_ends_as_error_with_every_record(self, workspace):
        """A coder that raises after a sandbox ran: one line, exit 3, summary.json and history say error."""
        tmp_path, data = workspace
        finished, summary, record = hostile_run(tmp_path, data, attacks.NESTED_ATEXIT_FOR_RUN, "--crash")
        assert finished.code == 3, finished.stdout + finished.stderr
        errors = [line for line in finished.stderr.splitlines() if line.startswith("error: ")]
        assert errors == [errors[0]] and "RuntimeError" in errors[0] and "Traceback" not in finished.stderr
        assert summary["status"] == "error" and summary["attempts"] == 1
        assert record["status"] == "error" and "RuntimeError" in record["error"]
        events = (tmp_path / "runs" / summary["run_id"] / "events.jsonl").read_text()
        assert '"loop.crashed"' in events and "the coder double crashed on purpose" in events
