"""The blueprint agent's loop end to end without an engine: routers, the retry with QA's
feedback, partial output at the retry limit, the learned fix, and a killed run resumed.

Sandbox calls go to a test double (``ScriptedCallSandbox``: scripted results, no code runs);
the same loop with the real engine is in tests/integration/agents/test_blueprint_agent.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agents.blueprint.agent import BlueprintAgent
from agents.blueprint.graph import after_manager, after_qa, build_graph
from agents.lessons import LESSONS_FILE, ExecutionHistory
from agents.ports.config import AgentConfig
from agents.ports.run import RunContext
from controller.entry.cli import main
from controller.platform.artefacts import RunArtefacts
from controller.platform.checkpoints import close_checkpoint, open_checkpoint
from controller.platform.settings import PROJECT_ROOT
from controller.runner.agent_runner import resume_line, run_record
from tests.unit.agents.blueprint.fakes import (
    Killed,
    KilledSandbox,
    ScriptedCallSandbox,
    value,
    verdict,
)

AGENT = BlueprintAgent()
NAMES_ALL = verdict(True, "all named")
NAMES_SOME = verdict(False, "competitors not named: Nordlys", {"kind": "detail"})


class TestRouters:
    def test_the_manager_sends_to_research_first_then_to_the_writer(self):
        assert after_manager({}) == "researcher"
        assert after_manager({"findings": []}) == "writer"

    def test_a_no_go_stops(self):
        """The manager's no-go ends the run at stop, before or after research."""
        assert after_manager({"no_go": "why"}) == after_manager({"findings": [], "no_go": "why"}) == "stop"

    @pytest.mark.parametrize(("passed", "attempt", "route"), [
        (True, 3, "finish"), (False, 1, "writer"), (False, 2, "writer"), (False, 3, "partial")])
    def test_qa_passes_retries_at_most_twice_then_ends_partial(self, passed, attempt, route):
        """The seed's rule with its default of 3 attempts: at most 2 retries of the writer."""
        assert after_qa({"verdict": {"passed": passed}, "attempt": attempt}, 3) == route

    def test_the_graph_has_the_seeds_roles(self):
        assert set(build_graph(3).nodes) - {"__start__", "__end__"} == {
            "manager", "researcher", "writer", "qa", "finish", "partial", "stop"}


def copy_target(tmp_path: Path, name: str, edit: Any = None) -> Path:
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / name, data / name)
    if edit is not None:
        path = data / name / "blueprint.json"
        document = json.loads(path.read_text())
        edit(document)
        path.write_text(json.dumps(document))
    return data


def config(tmp_path: Path, data: Path, runs: str = "runs") -> AgentConfig:
    return AgentConfig(data_dir=data, runs_dir=tmp_path / runs)


def run(cfg: AgentConfig, target: str, sandbox: Any, max_attempts: int | None = None, run_id: str = "unit",
        checkpoint: Any = None) -> tuple[Any, list[Any], Path]:
    plan = AGENT.plan(target, cfg, max_attempts)
    events: list[Any] = []
    run_dir = cfg.runs_dir / run_id
    summary = AGENT.run(plan, RunContext(run_id=run_id, config=cfg, sandbox=sandbox, image="sandloop/python-parser:t",
                                         artefacts=RunArtefacts(run_dir), on_event=events.append,
                                         checkpoint=checkpoint))
    return summary, events, run_dir


def steps(events: list[Any]) -> list[str]:
    return [f"{e.node}:{e.outcome}" for e in events]


class TestRetryWithFeedback:
    def test_a_short_report_is_rewritten_in_full_and_passes(self, tmp_path):
        """acme-research: attempt 1 is too short; the retry gets QA's fix (detail) and passes."""
        data = copy_target(tmp_path, "acme-research")
        summary, events, run_dir = run(config(tmp_path, data), "acme-research", ScriptedCallSandbox({}))
        assert steps(events) == ["manager:plan", "researcher:ok", "manager:ok", "writer:ok", "qa:failed", "writer:ok",
                                 "qa:passed", "finish:passed"]
        assert summary.status == "passed" and summary.attempts == 2 and summary.failures == ["too_short"]
        first = json.loads((run_dir / "attempts" / "1" / "qa.json").read_text())
        assert first["issues"][0]["code"] == "too_short" and first["issues"][0]["fix"]["kind"] == "detail"
        assert (run_dir / "report.md").read_text() == (run_dir / "attempts" / "2" / "report.md").read_text()
        assert "Net income musd went from 51" in (run_dir / "report.md").read_text()

    def test_a_custom_validators_feedback_drives_the_retry(self, tmp_path):
        """market-scan: the (sandboxed) validator fails attempt 1 and asks for detail; attempt 2 passes."""
        data = copy_target(tmp_path, "market-scan")
        sandbox = ScriptedCallSandbox({"names_every_competitor": [NAMES_SOME, NAMES_ALL]})
        summary, events, _ = run(config(tmp_path, data), "market-scan", sandbox)
        assert summary.status == "passed" and summary.failures == ["validator"]
        assert sandbox.calls == {"names_every_competitor": 2}
        reports = [spec.inputs["report.md"].decode() for spec in sandbox.specs]
        assert "Cobalt Rock" not in reports[0] and "Cobalt Rock" in reports[1]

    def test_at_most_two_retries_then_partial_output(self, tmp_path):
        """A validator that never passes: three writer attempts, then the last report as partial output."""
        data = copy_target(tmp_path, "market-scan")
        summary, events, run_dir = run(config(tmp_path, data), "market-scan",
                                       ScriptedCallSandbox({"names_every_competitor": [NAMES_SOME]}))
        assert [e.node for e in events].count("writer") == 3 and events[-1].node == "partial"
        assert summary.status == "failed" and summary.exit_code == 1 and summary.attempts == 3
        partial = (run_dir / "report.partial.md").read_text()
        assert partial.startswith("<!-- PARTIAL: QA did not pass: validator names_every_competitor")
        assert not (run_dir / "report.md").exists()
        assert "FAILED: the market-scan report did not pass QA within 3 attempt(s)" in "\n".join(summary.lines())


class TestLearnedFix:
    def test_the_next_run_passes_because_of_the_lesson(self, tmp_path):
        """One attempt each: run 1 fails QA (too short) and records why; run 2's manager gives the
        writer the recorded fix and it passes. A third run with no history fails again: the lesson did it."""
        data = copy_target(tmp_path, "acme-research")
        cfg = config(tmp_path, data)
        first, _, first_dir = run(cfg, "acme-research", ScriptedCallSandbox({}), max_attempts=1, run_id="first")
        assert first.status == "failed" and first.failures == ["too_short"]
        assert (first_dir / "report.partial.md").is_file()
        (lesson,) = ExecutionHistory(cfg.runs_dir / LESSONS_FILE).lessons("blueprint", "acme-research")
        assert lesson.kind == "too_short" and lesson.text.startswith("detail: write every section in full")

        second, events, second_dir = run(cfg, "acme-research", ScriptedCallSandbox({}), max_attempts=1,
                                         run_id="second")
        assert second.status == "passed" and second.attempts == 1
        assert second.lessons_applied == [lesson.text]
        assert "from lessons of earlier runs: detail:" in events[0].detail
        assert "(too_short, seen once)" in (second_dir / "lessons.md").read_text()

        control, _, _ = run(config(tmp_path, data, runs="fresh"), "acme-research", ScriptedCallSandbox({}),
                            max_attempts=1, run_id="control")
        assert control.status == "failed"

    def test_lessons_are_keyed_by_the_target_as_the_run_history_is(self, tmp_path):
        """Issue 41: lessons were keyed by the blueprint's name and the history by the target, so a target
        whose blueprint shares its name with another's was given (and the targets page listed) the other's
        lesson "fixed by attempt 2" beside its own "no failed attempt". One key: the target."""
        data = copy_target(tmp_path, "acme-research")
        shutil.copytree(data / "acme-research", data / "acme-copy")  # the same blueprint name, another target
        cfg = config(tmp_path, data)
        first, _, _ = run(cfg, "acme-research", ScriptedCallSandbox({}), run_id="first")
        assert (first.status, first.attempts) == ("passed", 2)
        copy, _, copy_dir = run(cfg, "acme-copy", ScriptedCallSandbox({}), run_id="copy")
        assert copy.lessons_applied == [] and copy.attempts == 2  # none of acme-research's lessons
        lessons = ExecutionHistory(cfg.runs_dir / LESSONS_FILE)
        assert [lesson.fixed_by for lesson in lessons.lessons("blueprint", "acme-copy")] == ["attempt 2"]
        assert "acme-copy" in (copy_dir / "lessons.md").read_text()
        assert copy.target == "acme-copy"  # the summary's target: what the run history records the run under

    def test_failure_patterns_are_counted_per_workflow(self, tmp_path):
        """A validator that never passes: two runs record the same failure and fix, counted twice."""
        data = copy_target(tmp_path, "market-scan")
        cfg = config(tmp_path, data)
        for run_id in ("a", "b"):
            summary, _, _ = run(cfg, "market-scan", ScriptedCallSandbox({"names_every_competitor": [NAMES_SOME]}),
                                max_attempts=1, run_id=run_id)
            assert summary.status == "failed"
        (lesson,) = ExecutionHistory(cfg.runs_dir / LESSONS_FILE).lessons("blueprint", "market-scan")
        assert (lesson.kind, lesson.seen, lesson.fixed_by) == ("validator", 2, "")


def with_code_tool(document: dict[str, Any]) -> None:
    document["tools"].append({"name": "count", "files": ["competitors.csv"],
                              "code": "def run(data):\n    return {'competitors': len(data['competitors.csv'])}\n"})
    document["sections"][0]["tools"].append("count")


class TestResume:
    def test_a_run_killed_in_qa_resumes_without_researching_again(self, tmp_path):
        """Killed during attempt 1's validator; resumed, it skips the finished nodes (the sandboxed
        tool is not called again) and ends as an uninterrupted run does."""
        data = copy_target(tmp_path, "market-scan", with_code_tool)
        cfg = config(tmp_path, data)
        run_dir = cfg.runs_dir / "killed"
        checkpoint = open_checkpoint(run_dir, "killed", AGENT.info.state_types, resume=False)
        dying = KilledSandbox({"count": [value({"competitors": 7})]}, dies_at="names_every_competitor")
        try:
            with pytest.raises(Killed):
                run(cfg, "market-scan", dying, run_id="killed", checkpoint=checkpoint)
        finally:
            close_checkpoint(checkpoint)
        assert dying.calls == {"count": 1}

        checkpoint = open_checkpoint(run_dir, "killed", AGENT.info.state_types, resume=True)
        after = ScriptedCallSandbox({"count": [value({"competitors": 7})], "names_every_competitor": [NAMES_ALL]})
        try:
            plan = AGENT.plan("market-scan", cfg, None)
            line = resume_line(AGENT, plan, checkpoint)
            summary, events, _ = run(cfg, "market-scan", after, run_id="killed", checkpoint=checkpoint)
            state = AGENT.graph(3, checkpoint.saver).get_state(checkpoint.config).values
        finally:
            close_checkpoint(checkpoint)
        assert "skipped 4 completed node(s) (manager, researcher, manager, writer [1]); next: qa" in line
        assert after.calls == {"names_every_competitor": 1}
        assert steps(events) == ["qa:passed", "finish:passed"]
        assert summary.status == "passed"
        assert state["findings"][2]["value"] == {"competitors": 7} and state["events"][0].node == "manager"


def test_the_summary_is_plain_json(tmp_path):
    """summary.json is written and reads back; the agent's fields are in it."""
    data = copy_target(tmp_path, "acme-research")
    _, _, run_dir = run(config(tmp_path, data), "acme-research", ScriptedCallSandbox({}))
    document = json.loads((run_dir / "summary.json").read_text())
    assert document["workflow"] == "acme-research" and document["status"] == "passed"
    assert SimpleNamespace(**document).agent == "blueprint"


class TestReplayAndCheck:
    def test_replay_judges_the_attempts_report_again(self, tmp_path):
        """Attempt 1 failed the validator; replayed with a validator that now passes: DIFFERENT."""
        data = copy_target(tmp_path, "market-scan")
        cfg = config(tmp_path, data)
        _, _, run_dir = run(cfg, "market-scan",
                            ScriptedCallSandbox({"names_every_competitor": [NAMES_SOME, NAMES_ALL]}))
        record = run_record(AGENT, AGENT.plan("market-scan", cfg, None), "unit", "img", cfg)
        same = AGENT.replay(ScriptedCallSandbox({"names_every_competitor": [NAMES_SOME]}), "img", run_dir, record, 1)
        assert same.same and same.recorded["passed"] is False
        changed = AGENT.replay(ScriptedCallSandbox({"names_every_competitor": [NAMES_ALL]}), "img", run_dir, record, 1)
        assert not changed.same and changed.replayed == {"passed": True, "issues": []}

    def test_check_wants_reports_for_a_blueprint_target(self, capsys):
        """`check --target acme-research --parser x.py`: one line, exit 2, naming --report."""
        assert main(["check", "--target", "acme-research", "--parser", "x.py"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.splitlines() == [err] and "checks a report, not a parser (use --report PATH)" in err
