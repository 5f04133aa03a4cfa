"""The loop's routing and bookkeeping, with a scripted sandbox (no Docker, no code runs).

Pins: pure routers follow seed 000; attempts are counted in state and capped; every failure
becomes feedback for refine; only the expected CSV's *analysis* reaches the coder, and
neither the CSV nor anything but the parser and the PDF reaches the sandbox.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from agents.bank_parser.coders.base import (
    CoderExhausted,
    CoderFailed,
    FailureKind,
    Feedback,
    GeneratedCode,
)
from agents.bank_parser.graph import route_after_coder, route_after_compare, route_after_execute
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.target import resolve_target
from agents.pdf_probe import PROBE_CONFIG
from agents.ports.sandbox import CapturedStream
from controller.platform.settings import Settings
from tests.conftest import ICICI
from tests.fakes import ScriptedSandbox, error_document, frame_document, parser_run_args


class CountingCoder:
    """Returns numbered candidates; gives up after ``limit``."""

    name = "counting"

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.histories: list[list[Feedback]] = []

    def generate(self, analysis):  # noqa: ANN001, ANN201
        return GeneratedCode("def parse(p):\n    return 1\n", "candidate-1")

    def refine(self, analysis, history: Sequence[Feedback]):  # noqa: ANN001, ANN201
        self.histories.append(list(history))
        if len(history) >= self.limit:
            raise CoderExhausted("no more candidates")
        n = len(history) + 1
        return GeneratedCode(f"def parse(p):\n    return {n}\n", f"candidate-{n}")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, runs_dir=tmp_path / "runs", parsers_dir=tmp_path / "parsers",
                    max_attempts=3)


def run(settings: Settings, sandbox: ScriptedSandbox, coder: CountingCoder | None = None):  # noqa: ANN201
    events = []
    summary = run_parser_agent(
            run_id="r1", target=resolve_target("icici", ICICI.parent), **parser_run_args(settings, "r1"),
        sandbox=sandbox, image="img", coder=coder or CountingCoder(), on_event=events.append)
    return summary, events


EXPECTED = pd.read_csv(ICICI / "result.csv")


class TestLoop:
    def test_pass_on_first_attempt(self, settings):
        """A matching frame ends the loop at once, publishes the parser, and is 'passed'."""
        summary, events = run(settings, ScriptedSandbox([frame_document(EXPECTED)]))
        assert summary.status == "passed" and summary.attempts == 1
        assert Path(summary.parser_path).read_text().startswith("def parse")
        assert [e.node for e in events] == ["analyze", "generate", "save", "execute", "compare", "finalize"]

    def test_error_then_mismatch_then_pass(self, settings):
        """Failures feed refine, in order, until a candidate passes on attempt 3."""
        coder = CountingCoder()
        sandbox = ScriptedSandbox([error_document("KeyError", "'Date'"),
                                   frame_document(EXPECTED.head(3)), frame_document(EXPECTED)])
        summary, _ = run(settings, sandbox, coder)
        assert summary.status == "passed" and summary.attempts == 3
        assert [f.kind for f in coder.histories[-1]] == [FailureKind.EXECUTION_ERROR, FailureKind.MISMATCH]
        assert "shape" in coder.histories[-1][1].detail

    def test_gives_up_at_max_attempts(self, settings):
        """Three mismatches with max_attempts=3 end as failed, unpublished, exit 1."""
        summary, _ = run(settings, ScriptedSandbox([frame_document(EXPECTED.head(1))] * 3))
        assert summary.status == "failed" and summary.attempts == 3 and summary.exit_code == 1
        assert summary.parser_path == ""
        assert not (settings.parsers_dir / "icici_parser.py").exists()
        assert summary.failures == ["mismatch"] * 3

    def test_exhausted_coder_ends_the_loop(self, settings):
        """When the coder has nothing new, the loop stops early as failed."""
        summary, events = run(settings, ScriptedSandbox([None] * 3), CountingCoder(limit=1))
        assert summary.status == "failed" and summary.attempts == 1
        assert events[-2].outcome == "exhausted"

    def test_timeout_is_a_failure_kind(self, settings):
        """A timed-out attempt becomes 'timeout' feedback."""
        coder = CountingCoder()
        run(settings, ScriptedSandbox([None, frame_document(EXPECTED)], timed_out=[True]), coder)
        assert coder.histories[0][0].kind == FailureKind.TIMEOUT

    def test_the_execute_line_names_every_limit_the_execution_hit(self, settings):
        """A frame returned while the output was cut and a fork refused: the run's execute line and
        sandbox.json both say so (issue 31), and the attempt is still judged on its frame."""
        class Noisy(ScriptedSandbox):
            def run(self, spec):  # noqa: ANN001, ANN202
                result = super().run(spec)
                if PROBE_CONFIG in spec.inputs:  # the statement probe: not the attempt's execution
                    return result
                return dataclasses.replace(result, stdout=CapturedStream(b"x", 2 << 30), pids_limited=True)

        summary, events = run(settings, Noisy([frame_document(EXPECTED)]))
        (execute,) = [e for e in events if e.node == "execute"]
        assert execute.detail.startswith("returned 100 rows x 5 columns; limits hit: ")
        assert "process limit (128 processes)" in execute.detail
        assert "output cut at 1 MiB (stdout 2 GiB written)" in execute.detail
        record = json.loads((settings.runs_dir / "r1" / "attempts" / "1" / "sandbox.json").read_text())
        assert record["pids_limited"] is True and record["stdout_truncated"] is True
        assert summary.status == "passed"

    def test_only_parser_and_pdf_enter_the_sandbox(self, settings):
        """The sandbox receives exactly parser.py and statement.pdf; the CSV never goes in."""
        sandbox = ScriptedSandbox([frame_document(EXPECTED)])
        run(settings, sandbox)
        (spec,) = sandbox.specs
        assert set(spec.inputs) == {"parser.py", "statement.pdf"}
        csv = (ICICI / "result.csv").read_bytes()
        assert all(csv[:60] not in data for data in spec.inputs.values())
        assert spec.labels["attempt"] == "1" and spec.labels["run_id"] == "r1"

    def test_artefacts_of_every_attempt(self, settings):
        """Each attempt keeps its code, sandbox record and diff; the run keeps summary.json."""
        run(settings, ScriptedSandbox([frame_document(EXPECTED.head(2)), frame_document(EXPECTED)]))
        run_dir = settings.runs_dir / "r1"
        for name in ("parser.py", "sandbox.json", "diff.txt", "result.json"):
            assert (run_dir / "attempts" / "1" / name).is_file(), name
        assert (run_dir / "summary.json").is_file() and (run_dir / "analysis.md").is_file()


class TestRouters:
    def test_routers_are_pure_and_follow_the_seed(self):
        """execute → compare/refine/finalize; compare → refine/finalize; refine → save/finalize."""

        class Exec:
            def __init__(self, failure):  # noqa: ANN001
                self.failure = failure

        class Cmp:
            def __init__(self, passed):  # noqa: ANN001
                self.passed = passed

        assert route_after_execute({"execution": Exec(None), "attempt": 3}, 3) == "compare"
        assert route_after_execute({"execution": Exec("x"), "attempt": 2}, 3) == "refine"
        assert route_after_execute({"execution": Exec("x"), "attempt": 3}, 3) == "finalize"
        assert route_after_compare({"comparison": Cmp(True), "attempt": 1}, 3) == "finalize"
        assert route_after_compare({"comparison": Cmp(False), "attempt": 1}, 3) == "refine"
        assert route_after_compare({"comparison": Cmp(False), "attempt": 3}, 3) == "finalize"
        assert route_after_compare({"comparison": None, "attempt": 1}, 3) == "finalize"
        assert route_after_coder({"exhausted": True, "attempt": 1}, 3) == "finalize"
        assert route_after_coder({"attempt": 2}, 3) == "save"


class FailingCoder(CountingCoder):
    """Raises CoderFailed (no code / model error) for the attempts listed, else behaves like CountingCoder."""

    name = "failing"

    def __init__(self, failing: dict[int, FailureKind]) -> None:
        super().__init__()
        self.failing = failing
        self.calls = 0

    def _maybe_fail(self) -> None:
        self.calls += 1
        kind = self.failing.get(self.calls)
        if kind is not None:
            raise CoderFailed(kind, f"{kind.value} on call {self.calls}", detail="the reply",
                              artefacts={"reply.md": "no code here\n"})

    def generate(self, analysis):  # noqa: ANN001, ANN201
        self._maybe_fail()
        return super().generate(analysis)

    def refine(self, analysis, history):  # noqa: ANN001, ANN201
        self._maybe_fail()
        return super().refine(analysis, history)


class TestCoderFailures:
    def test_router_after_a_coder(self):
        """generate/refine → save normally; → refine after no usable code while attempts remain; else finalize."""
        assert route_after_coder({"attempt": 1}, 3) == "save"
        assert route_after_coder({"attempt": 1, "coder_failed": False}, 3) == "save"
        assert route_after_coder({"attempt": 1, "coder_failed": True}, 3) == "refine"
        assert route_after_coder({"attempt": 3, "coder_failed": True}, 3) == "finalize"
        assert route_after_coder({"attempt": 2, "coder_failed": True, "exhausted": True}, 3) == "finalize"

    def test_no_code_on_generate_then_pass(self, settings):
        """Attempt 1 has no code (no sandbox run); attempt 2 runs and passes; the failure is feedback."""
        coder = FailingCoder({1: FailureKind.NO_CODE})
        sandbox = ScriptedSandbox([frame_document(EXPECTED)])
        summary, events = run(settings, sandbox, coder)
        assert summary.status == "passed" and summary.attempts == 2 and summary.failures == ["no_code"]
        assert len(sandbox.specs) == 1 and coder.histories[0][0].kind == FailureKind.NO_CODE
        assert [(e.node, e.attempt, e.outcome) for e in events[1:3]] == [("generate", 1, "no_code"),
                                                                          ("refine", 2, "ok")]
        assert (settings.runs_dir / "r1" / "attempts" / "1" / "reply.md").read_text() == "no code here\n"

    def test_llm_error_on_refine_then_pass(self, settings):
        """A model error while refining is one failed attempt; the loop refines again and passes."""
        coder = FailingCoder({2: FailureKind.LLM_ERROR})
        sandbox = ScriptedSandbox([frame_document(EXPECTED.head(1)), frame_document(EXPECTED)])
        summary, events = run(settings, sandbox, coder)
        assert summary.status == "passed" and summary.attempts == 3
        assert summary.failures == ["mismatch", "llm_error"]
        assert ("refine", 2, "llm_error") in [(e.node, e.attempt, e.outcome) for e in events]

    def test_coder_failures_until_the_limit(self, settings):
        """Every attempt without code: failed at max_attempts, nothing run, nothing published."""
        coder = FailingCoder({1: FailureKind.NO_CODE, 2: FailureKind.LLM_ERROR, 3: FailureKind.NO_CODE})
        sandbox = ScriptedSandbox([])
        summary, events = run(settings, sandbox, coder)
        assert summary.status == "failed" and summary.attempts == 3 and sandbox.specs == []
        assert summary.failures == ["no_code", "llm_error", "no_code"] and summary.parser_path == ""
        assert events[-1].node == "finalize" and events[-1].outcome == "failed"

    def test_exhausted_on_generate_ends_the_run(self, settings):
        """A coder with nothing to try at all ends the run as failed instead of crashing."""

        class Empty(CountingCoder):
            def generate(self, analysis):  # noqa: ANN001, ANN201
                raise CoderExhausted("no table header found")

        summary, events = run(settings, ScriptedSandbox([]), Empty())
        assert summary.status == "failed" and events[1].outcome == "exhausted"
