"""No crash leaves a run without a record: a node that raises ends the run as ``error`` with
summary.json, a history record and the traceback in events.jsonl (scripted sandboxes, no Docker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.bank_parser.nodes import AGENT
from agents.bank_parser.run import run_parser_agent
from agents.bank_parser.target import resolve_target
from agents.idris.coder import OfflineIdrisCoder
from agents.idris.run import IdrisRunRequest, run_idris_agent
from agents.loop import LoopCrashed
from agents.pdf_probe import PROBE_CONFIG
from agents.ports.errors import InfraFault, SandboxError, TargetError
from agents.ports.sandbox import SandboxLimits
from controller.platform.artefacts import RunArtefacts
from controller.platform.observability.history import HistoryStore
from controller.platform.observability.logs import configure_logging
from controller.platform.observability.recorder import EVENTS_FILE, history_path, observe_run
from controller.platform.progress import OutputClosed, Progress
from controller.platform.sandbox.instrumented import InstrumentedSandbox
from controller.platform.sandbox.retry import InfraRetriesExhausted, InfraRetrySettings, guarded
from controller.platform.settings import PROJECT_ROOT, Settings
from tests.conftest import ICICI
from tests.fakes import load_document_here, parser_run_args, probe_result
from tests.unit.agents.bank_parser.test_graph import CountingCoder
from tests.unit.controller.platform.test_progress import reader_gone


class BuggySandbox:
    """A test double whose run raises ``error``: stands in for a bug anywhere under a node.
    The statement probe the parser agent starts with is answered as a sandbox would
    (``probe_result``), so the bug hits the parser's execution."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def run(self, spec):  # noqa: ANN001, ANN201
        if PROBE_CONFIG in spec.inputs:
            return probe_result(spec)
        raise self.error


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, runs_dir=tmp_path / "runs", parsers_dir=tmp_path / "parsers", max_attempts=2)


def observed_parser_run(settings: Settings, error: Exception, retry: InfraRetrySettings | None = None) -> None:
    """Run the parser agent inside observe_run, as commands.run does, with a sandbox that raises
    (behind the retry layer the services put under every sandbox, when ``retry`` is given)."""
    import io

    configure_logging("json", None, stream=io.StringIO(), cache_loggers=False)
    backend = BuggySandbox(error)
    sandbox = InstrumentedSandbox(backend) if retry is None else guarded(backend, retry)
    with observe_run(settings, run_id="r1", agent=AGENT, target="icici", coder="counting", sandbox=sandbox) as obs:
        summary = run_parser_agent(
            run_id="r1", target=resolve_target("icici", ICICI.parent), **parser_run_args(settings, "r1"),
            sandbox=sandbox,
            image="img", coder=CountingCoder(), on_event=lambda e: obs.node(e.node, e.attempt, e.outcome, e.seconds))
        obs.finish(summary)


class TestParserLoopCrash:
    def test_unexpected_exception_becomes_a_recorded_error(self, settings):
        """A RecursionError inside execute: LoopCrashed (exit 3), summary.json and history say error."""
        with pytest.raises(LoopCrashed) as raised:
            observed_parser_run(settings, RecursionError("maximum recursion depth exceeded"))
        assert raised.value.exit_code == 3 and "RecursionError" in raised.value.one_line()
        summary = json.loads((settings.runs_dir / "r1" / "summary.json").read_text())
        assert summary["status"] == "error" and "RecursionError" in summary["last_problem"]
        assert summary["attempts"] == 1
        (row,) = HistoryStore(history_path(settings)).read_runs()
        assert row["status"] == "error" and "RecursionError" in row["error"]

    def test_traceback_goes_to_the_events_file(self, settings):
        """events.jsonl holds loop.crashed with the exception, for whoever debugs it."""
        with pytest.raises(LoopCrashed):
            observed_parser_run(settings, KeyError("boom"))
        events = [json.loads(line) for line in (settings.runs_dir / "r1" / EVENTS_FILE).read_text().splitlines()]
        (crash,) = [e for e in events if e["event"] == "loop.crashed"]
        assert crash["error_type"] == "KeyError" and "exception" in crash
        assert any(e["event"] == "node.failed" and e["node"] == "execute" for e in events)

    def test_platform_error_keeps_its_type_and_still_writes_the_summary(self, settings):
        """A SandboxError is re-raised as itself (its own message and exit code), with summary.json status error."""
        with pytest.raises(SandboxError):
            observed_parser_run(settings, SandboxError("engine went away"))
        summary = json.loads((settings.runs_dir / "r1" / "summary.json").read_text())
        assert summary["status"] == "error" and "engine went away" in summary["last_problem"]


class TestRefusalsAreNotCrashes:
    def events(self, settings: Settings) -> list[dict]:
        return [json.loads(line) for line in (settings.runs_dir / "r1" / EVENTS_FILE).read_text().splitlines()]

    def test_a_refused_input_is_one_warning_line_without_frames(self, settings):
        """A TargetError (exit 2) inside the loop: loop.refused at warning, no traceback, nothing at error level."""
        with pytest.raises(TargetError):
            observed_parser_run(settings, TargetError("statement.pdf is not a readable PDF (PdfminerException)"))
        events = self.events(settings)
        (refusal,) = [e for e in events if e["event"] == "loop.refused"]
        assert refusal["level"] == "warning" and "not a readable PDF" in refusal["error"]
        assert not any("exception" in e for e in events)
        assert not [e["event"] for e in events if e["level"] == "error"]
        assert [e["level"] for e in events if e["event"] in ("node.refused", "run.refused")] == ["info", "info"]
        summary = json.loads((settings.runs_dir / "r1" / "summary.json").read_text())
        assert summary["status"] == "error"  # still recorded: the run has no other outcome

    def test_a_crash_keeps_its_frames_and_error_level(self, settings):
        """A bug (KeyError): loop.crashed at error with the exception's frames, node.failed, run.errored."""
        with pytest.raises(LoopCrashed):
            observed_parser_run(settings, KeyError("boom"))
        by_event = {e["event"]: e for e in self.events(settings)}
        assert by_event["loop.crashed"]["level"] == "error" and by_event["loop.crashed"]["exception"]
        assert by_event["node.failed"]["level"] == "error" and by_event["run.errored"]["level"] == "error"
        assert "loop.refused" not in by_event


class TestInfrastructureLost:
    def test_an_execution_the_infrastructure_keeps_losing_ends_the_run_as_error_not_failed(self, settings):
        """Every try lost: exit 3, status error (not a failed parser), no attempt blamed, retries recorded."""
        retry = InfraRetrySettings(tries=3, backoff_seconds=0.01, max_backoff_seconds=0.01)
        with pytest.raises(InfraRetriesExhausted) as raised:
            observed_parser_run(settings, InfraFault("container_gone", "No such container: 1a2b"), retry)
        assert raised.value.exit_code == 3 and "container_gone" in raised.value.one_line()
        summary = json.loads((settings.runs_dir / "r1" / "summary.json").read_text())
        assert summary["status"] == "error" and "lost the execution" in summary["last_problem"]
        assert not list((settings.runs_dir / "r1").glob("attempts/*/sandbox.json"))  # no attempt judged
        (row,) = HistoryStore(history_path(settings)).read_runs()
        assert row["status"] == "error"
        events = [json.loads(line) for line in (settings.runs_dir / "r1" / EVENTS_FILE).read_text().splitlines()]
        assert [e["reason"] for e in events if e["event"] == "sandbox.infra_retry"] == ["container_gone"] * 2
        assert [e["level"] for e in events if e["event"] == "sandbox.infra_retry"] == ["warning"] * 2


class TestIdrisLoopCrash:
    def test_unexpected_exception_writes_an_error_summary(self, tmp_path):
        """The Idris agent's loop: a bug under typecheck ends in LoopCrashed and summary.json status error."""
        request = IdrisRunRequest(
            run_id="unit", target="service-contract", project="ServiceContract", document_type="contract",
            document=load_document_here(PROJECT_ROOT / "data" / "service-contract" / "service_contract.pdf"),
            limits=SandboxLimits(), max_attempts=2, artefacts=RunArtefacts(tmp_path / "runs" / "unit"),
            output_dir=tmp_path / "idris")
        with pytest.raises(LoopCrashed):
            run_idris_agent(request, sandbox=BuggySandbox(ValueError("bad")), image="img",
                            coder=OfflineIdrisCoder(), on_event=lambda e: None)
        summary = json.loads((tmp_path / "runs" / "unit" / "summary.json").read_text())
        assert summary["status"] == "error" and summary["attempts"] == 1 and "ValueError" in summary["last_problem"]
        assert not (tmp_path / "idris").exists()


class TestOutputClosed:
    def test_a_progress_line_nobody_reads_stops_the_run_without_a_verdict(self, settings):
        """The service died (its end of the run's stdout closed) just before a progress line: the
        run stops as on Ctrl-C (no summary.json, no history record) so that the worker taking it
        over resumes it. Before, the BrokenPipeError was recorded as the loop crashing, and the
        takeover ended a healthy run as an error (the PostgreSQL chaos test caught it once)."""
        import io

        configure_logging("json", None, stream=io.StringIO(), cache_loggers=False)
        with reader_gone() as stream:
            progress = Progress(stream)
            sandbox = InstrumentedSandbox(BuggySandbox(KeyError("never reached")))
            with pytest.raises(OutputClosed), \
                    observe_run(settings, run_id="r1", agent=AGENT, target="icici", coder="counting",
                                sandbox=sandbox):
                run_parser_agent(
                    run_id="r1", target=resolve_target("icici", ICICI.parent), **parser_run_args(settings, "r1"),
                    sandbox=sandbox, image="img", coder=CountingCoder(),
                    on_event=lambda e: progress.step(e.attempt, e.node, e.outcome, e.seconds))
        run_dir = settings.runs_dir / "r1"
        assert not (run_dir / "summary.json").exists()
        assert not history_path(settings).exists() or HistoryStore(history_path(settings)).read_runs() == []
        events = [json.loads(line) for line in (run_dir / EVENTS_FILE).read_text().splitlines()]
        assert [e["event"] for e in events if e["event"].startswith(("run.output", "loop."))] == ["run.output_closed"]
