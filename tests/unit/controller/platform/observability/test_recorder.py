"""A whole run observed: the agent's loop (scripted sandbox, no Docker) inside observe_run
records the run in the history, writes events.jsonl, and survives a push that fails."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from agents.bank_parser.coders.base import Feedback, GeneratedCode
from agents.bank_parser.nodes import AGENT
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.target import resolve_target
from agents.ports.errors import SandboxError
from controller.platform.observability.history import HistoryStore
from controller.platform.observability.logs import configure_logging
from controller.platform.observability.metrics import BUCKETS
from controller.platform.observability.recorder import EVENTS_FILE, history_path, observe_run
from controller.platform.sandbox.instrumented import InstrumentedSandbox
from controller.platform.settings import ObservabilitySettings, Settings
from tests.conftest import ICICI
from tests.fakes import ScriptedSandbox, error_document, frame_document, parser_run_args

EXPECTED = pd.read_csv(ICICI / "result.csv")


class NumberedCoder:
    """Returns numbered candidates, never giving up (the sandbox script decides the outcome)."""

    name = "numbered"

    def generate(self, analysis):  # noqa: ANN001, ANN201
        return GeneratedCode("def parse(p):\n    return 1\n", "candidate-1")

    def refine(self, analysis, history: Sequence[Feedback]):  # noqa: ANN001, ANN201
        return GeneratedCode(f"def parse(p):\n    return {len(history) + 1}\n", f"candidate-{len(history) + 1}")


class BrokenEngine:
    """A test double for an engine that fails mid-run: every run raises SandboxError."""

    def run(self, spec):  # noqa: ANN001, ANN201
        raise SandboxError("the Docker engine failed running img: connection reset")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, runs_dir=tmp_path / "runs", parsers_dir=tmp_path / "parsers",
                    max_attempts=3, observability=ObservabilitySettings(pushgateway_url="http://127.0.0.1:9",
                                                                        push_timeout_seconds=1))


def observed_run(settings: Settings, backend) -> io.StringIO:  # noqa: ANN001
    """Run the agent on icici inside observe_run, as commands.run does; return the log stream."""
    stream = io.StringIO()
    configure_logging("json", None, stream=stream, cache_loggers=False)
    sandbox = InstrumentedSandbox(backend)
    with observe_run(settings, run_id="r1", agent=AGENT, target="icici", coder="numbered",
                     sandbox=sandbox) as observer:
        summary = run_parser_agent(
            run_id="r1", target=resolve_target("icici", ICICI.parent), **parser_run_args(settings, "r1"),
            sandbox=sandbox,
            image="sandloop/python-parser:abc", coder=NumberedCoder(),
            on_event=lambda e: observer.node(e.node, e.attempt, e.outcome, e.seconds))
        observer.finish(summary)
    return stream


class TestObservedRun:
    def test_run_is_recorded_with_nodes_sandbox_and_retries(self, settings):
        """An error then a pass: history holds passed, 2 attempts, one execution_error retry, 3 executions
        (the statement probe's, then the two parsers')."""
        observed_run(settings, ScriptedSandbox([error_document("KeyError", "'Date'"), frame_document(EXPECTED)]))
        store = HistoryStore(history_path(settings))
        (row,) = store.read_runs()
        assert (row["run_id"], row["status"], row["attempts"], row["coder"]) == ("r1", "passed", 2, "numbered")
        snapshot = store.snapshot(BUCKETS)
        assert snapshot.retries == {(AGENT, "icici", "execution_error"): 1}
        assert snapshot.sandbox_runs == {(AGENT, "icici", "sandloop/python-parser", "ok"): 3}
        assert snapshot.node_seconds[(AGENT, "execute")].count == 2

    def test_events_file_and_failed_push_are_logged(self, settings):
        """events.jsonl has the run's events with its context; an unreachable Pushgateway is a warning only."""
        stream = observed_run(settings, ScriptedSandbox([frame_document(EXPECTED)]))
        lines = [json.loads(l) for l in (settings.runs_dir / "r1" / EVENTS_FILE).read_text().splitlines()]
        assert lines[0]["event"] == "run.started" and all(l["run_id"] == "r1" for l in lines)
        assert {"node.finished", "sandbox.executed", "run.finished", "history.recorded", "push.failed"} <= {
            l["event"] for l in lines}
        (push,) = [l for l in lines if l["event"] == "push.failed"]
        assert push["level"] == "warning" and push["job"] == "sbx_agent_run"
        assert "push.failed" in stream.getvalue()

    def test_engine_failure_is_recorded_as_error_and_reraised(self, settings):
        """A SandboxError mid-run ends the run as status error in the history, then propagates."""
        with pytest.raises(SandboxError):
            observed_run(settings, BrokenEngine())
        (row,) = HistoryStore(history_path(settings)).read_runs()
        assert row["status"] == "error" and "connection reset" in row["error"]
        snapshot = HistoryStore(history_path(settings)).snapshot(BUCKETS)
        assert snapshot.sandbox_runs == {(AGENT, "icici", "sandloop/python-parser", "engine_error"): 1}

    def test_history_write_failure_does_not_fail_the_run(self, settings, tmp_path):
        """If the history cannot be written the run still ends normally and the failure is logged."""
        blocker = tmp_path / "file"
        blocker.write_text("not a folder")
        settings = settings.model_copy(update={"observability": ObservabilitySettings(
            history_path=blocker / "history.sqlite")})
        stream = observed_run(settings, ScriptedSandbox([frame_document(EXPECTED)]))
        assert "history.write_failed" in stream.getvalue()

    def test_context_is_cleared_after_the_run(self, settings):
        """After the run, nothing stays bound: later log lines do not claim to belong to it."""
        import structlog

        observed_run(settings, ScriptedSandbox([frame_document(EXPECTED)]))
        assert structlog.contextvars.get_contextvars() == {}
