"""The Idris agent's graph: the decision router, and whole runs against recorded checks.

The sandbox here is a test double (``RecordedChecker``) answering with recorded Idris2
transcripts; the same loop through the real Docker engine is in
tests/integration/agents/test_idris_loop.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.idris.coder import OfflineIdrisCoder
from agents.idris.graph import build_graph, decide, route_after_fix
from agents.idris.run import IdrisRunRequest, run_idris_agent
from agents.ports.sandbox import SandboxLimits
from controller.platform.artefacts import RunArtefacts
from controller.platform.settings import PROJECT_ROOT
from tests.fakes import load_document_here
from tests.unit.agents.idris.fakes import PASS, Answer, RecordedChecker, failing

CONTRACT = PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf"


def state(outcome: str, attempt: int) -> dict:
    return {"check": SimpleNamespace(outcome=outcome), "attempt": attempt}


class TestDecision:
    def test_success_finishes(self):
        """A check that passed ends the loop, whatever the attempt."""
        assert decide(state("passed", 5), 5) == "finish"

    @pytest.mark.parametrize("outcome", ["errors", "timeout", "oom", "crashed"])
    def test_failure_below_the_limit_is_fixed(self, outcome):
        """Any failure with attempts left goes to fix."""
        assert decide(state(outcome, 4), 5) == "fix"

    def test_failure_at_the_limit_fails(self):
        """The seed's rule: attempts at the limit → fail."""
        assert decide(state("errors", 5), 5) == "fail"

    def test_an_exhausted_coder_fails(self):
        """After fix: save, unless the coder had nothing new."""
        assert route_after_fix({"exhausted": True}) == "fail"
        assert route_after_fix({}) == "save"

    def test_the_graph_has_the_seeds_nodes(self):
        """analyze, generate, typecheck, fix, finish, fail (and save)."""
        nodes = set(build_graph(5).nodes) - {"__start__", "__end__"}
        assert nodes == {"analyze", "generate", "save", "typecheck", "fix", "finish", "fail"}


def run(tmp_path: Path, answers: list[Answer], max_attempts: int = 5):  # noqa: ANN201
    checker = RecordedChecker(answers)
    request = IdrisRunRequest(
        run_id="unit", target="service-contract", project="ServiceContract", document_type="contract",
        document=load_document_here(CONTRACT), limits=SandboxLimits(), max_attempts=max_attempts,
        artefacts=RunArtefacts(tmp_path / "runs" / "unit"), output_dir=tmp_path / "idris",
    )
    events = []
    summary = run_idris_agent(request, sandbox=checker, image="sandloop/idris2:test", coder=OfflineIdrisCoder(),
                              on_event=events.append)
    return summary, events, checker, tmp_path / "runs" / "unit"


class TestRuns:
    def test_each_check_gets_only_the_module(self, tmp_path):
        """One input, the module, under its short name; the real entrypoint's command line."""
        _, _, checker, _ = run(tmp_path, [PASS])
        (spec,) = checker.specs
        assert list(spec.inputs) == ["ServiceContract.idr"]
        assert spec.command == ("/opt/sandloop/check-module", "Domains.ServiceContract", "/work/in/ServiceContract.idr")
        assert spec.limits.timeout_seconds == 30 and spec.labels["agent"] == "idris"

    def test_a_passing_run_publishes_and_summarises(self, tmp_path):
        """passed: module + analysis under the output folder, summary.json with schema 1."""
        summary, _, _, run_dir = run(tmp_path, [PASS])
        document = json.loads((run_dir / "summary.json").read_text())
        assert document["status"] == "passed" and document["schema_version"] == 1
        assert document["module"] == "Domains.ServiceContract" and document["styles"] == ["dependent"]
        assert (tmp_path / "idris" / "Domains" / "ServiceContract.idr").is_file()
        assert (run_dir / "analysis.md").read_text().startswith("# 분석 결과")

    def test_the_coder_running_out_ends_the_run_before_the_limit(self, tmp_path):
        """Three styles fail; the fourth check never happens: failed after 3 of 5, nothing published."""
        summary, events, checker, run_dir = run(tmp_path, [failing("error-error003")] * 5)
        assert summary.status == "failed" and summary.attempts == 3 and len(checker.specs) == 3
        assert [e.outcome for e in events if e.node == "fix"] == ["ok", "ok", "exhausted"]
        assert events[-1].node == "fail" and "nothing new" in events[-1].detail
        assert not (tmp_path / "idris").exists()
        record = json.loads((run_dir / "attempts" / "1" / "check.json").read_text())
        assert record["outcome"] == "errors" and record["errors"][0]["category"] == "unification"
        assert (run_dir / "attempts" / "3" / "fix.txt").read_text().startswith("no targeted repair applies")

    def test_the_attempt_limit_is_respected(self, tmp_path):
        """max_attempts 1: one check, then fail."""
        summary, _, checker, _ = run(tmp_path, [failing("error-error003")], max_attempts=1)
        assert summary.attempts == 1 and len(checker.specs) == 1 and summary.status == "failed"

    def test_the_summary_names_the_last_errors(self, tmp_path):
        """A failed run's closing lines carry the last problem and its errors."""
        summary, _, _, _ = run(tmp_path, [failing("error-error003")] * 2, max_attempts=2)
        text = "\n".join(summary.lines())
        assert "FAILED: Domains.ServiceContract did not type-check within 2 attempt(s)" in text
        assert "error[unification]" in text and summary.failures == ["unification", "unification"]

    def test_a_timeout_is_a_failed_attempt_with_its_own_reason(self, tmp_path):
        """A timed-out check: outcome timeout, then the runtime style passes."""
        summary, _, _, run_dir = run(tmp_path, [Answer(timed_out=True), PASS])
        assert summary.failures == ["timeout"] and summary.styles == ["dependent", "runtime"]
        assert json.loads((run_dir / "attempts" / "1" / "check.json").read_text())["timed_out"] is True

    def test_a_crash_without_errors_is_its_own_outcome(self, tmp_path):
        """Exit 1 with no error block: crashed, and the transcript is kept as it was."""
        summary, _, _, run_dir = run(tmp_path, [Answer("Segmentation fault\n", 139), PASS])
        assert summary.failures == ["crashed"]
        assert (run_dir / "attempts" / "1" / "transcript.txt").read_text() == "Segmentation fault\n"
