"""Executions the infrastructure lost are run again, bounded; nothing the program did is.

The backends here are test doubles that raise or return what a test scripts: the real
engine's faults are provoked in tests/integration/sandbox/test_infra_retry.py.
"""

from __future__ import annotations

import pytest
import structlog
from pydantic import ValidationError

from agents.ports.errors import InfraFault, SandboxError
from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec
from controller.platform.sandbox.instrumented import InstrumentedSandbox
from controller.platform.sandbox.retry import (
    InfraRetriesExhausted,
    InfraRetrySettings,
    RetryingSandbox,
    guarded,
)

SPEC = SandboxSpec(image="sandloop/python-parser:abc", command=("true",), labels={"attempt": "2"})


def result(**fields: object) -> SandboxResult:
    base: dict[str, object] = {"exit_code": 0, "stdout": CapturedStream(b"", 0), "stderr": CapturedStream(b"", 0),
                               "timed_out": False, "oom_killed": False, "wall_seconds": 0.1, "files": {}}
    return SandboxResult(**{**base, **fields})  # type: ignore[arg-type]


class Scripted:
    """A backend double: each run takes the next item (an exception is raised, a result returned)."""

    def __init__(self, *script: object) -> None:
        self.script, self.runs = list(script), 0

    def run(self, spec: SandboxSpec) -> SandboxResult:
        self.runs += 1
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        assert isinstance(item, SandboxResult)
        return item


def retrying(backend: Scripted, tries: int = 3, waits: list[float] | None = None) -> RetryingSandbox:
    settings = InfraRetrySettings(tries=tries, backoff_seconds=1.0, max_backoff_seconds=5.0)
    return RetryingSandbox(backend, settings, sleep=(waits if waits is not None else []).append)


def gone() -> InfraFault:
    return InfraFault("container_gone", "the sandbox container went away while it ran (No such container: x)")


class TestRetries:
    def test_a_lost_execution_is_run_again_and_its_reasons_kept(self):
        """Two lost tries then a result: the third try's result, with both reasons, oldest first."""
        backend = Scripted(gone(), InfraFault("engine_unreachable", "no answer"), result(exit_code=0))
        served = retrying(backend).run(SPEC)
        assert backend.runs == 3 and served.exit_code == 0
        assert served.infra_retries == ("container_gone", "engine_unreachable")
        assert served.record()["infra_retries"] == ["container_gone", "engine_unreachable"]

    def test_the_first_try_serving_records_no_retry(self):
        """No fault: one run, no reasons, no wait."""
        waits: list[float] = []
        served = retrying(Scripted(result()), waits=waits).run(SPEC)
        assert served.infra_retries == () and waits == []

    @pytest.mark.parametrize("outcome", [
        {"timed_out": True, "exit_code": None}, {"oom_killed": True, "exit_code": 137}, {"exit_code": 1},
        {"stdout": CapturedStream(b"x" * 10, 1 << 31)}, {"pids_limited": True, "exit_code": 1},
    ], ids=["timeout", "oom", "nonzero_exit", "output_cut", "process_limit"])
    def test_what_the_program_did_is_never_retried(self, outcome):
        """Time, memory, exit status and output limits are the program's result: returned at once."""
        backend = Scripted(result(**outcome), result())
        served = retrying(backend).run(SPEC)
        assert backend.runs == 1 and served.infra_retries == ()

    def test_other_engine_errors_are_not_retried(self):
        """A SandboxError that is no InfraFault (a malformed request, inputs too large) ends at once."""
        backend = Scripted(SandboxError("the Docker engine refused to run x: 400 Bad Request"), result())
        with pytest.raises(SandboxError, match="400") as raised:
            retrying(backend).run(SPEC)
        assert backend.runs == 1 and not isinstance(raised.value, InfraRetriesExhausted)

    def test_an_outage_ends_after_the_last_try_in_one_line(self):
        """Every try lost: InfraRetriesExhausted (exit 3) naming the count, every reason and the last error."""
        backend = Scripted(gone(), gone(), InfraFault("engine_unreachable", "the Docker engine did not answer"))
        with pytest.raises(InfraRetriesExhausted) as raised:
            retrying(backend).run(SPEC)
        line = raised.value.one_line()
        assert backend.runs == 3 and raised.value.exit_code == 3 and "\n" not in line
        assert "3 time(s)" in line and "container_gone, container_gone, engine_unreachable" in line
        assert "did not answer" in line and raised.value.reasons == ("container_gone",) * 2 + ("engine_unreachable",)

    def test_one_try_turns_retries_off(self):
        """tries=1: the first lost try ends the execution."""
        backend = Scripted(gone(), result())
        with pytest.raises(InfraRetriesExhausted):
            retrying(backend, tries=1).run(SPEC)
        assert backend.runs == 1


class TestBackoff:
    def test_waits_grow_exponentially_with_bounded_jitter_and_a_cap(self):
        """Waits: base*2**n plus at most base of jitter, never above the cap."""
        waits: list[float] = []
        settings = InfraRetrySettings(tries=6, backoff_seconds=1.0, max_backoff_seconds=5.0)
        with pytest.raises(InfraRetriesExhausted):
            RetryingSandbox(Scripted(*[gone() for _ in range(6)]), settings, sleep=waits.append).run(SPEC)
        assert len(waits) == 5
        for n, wait in enumerate(waits):
            assert min(2.0 ** n, 5.0) <= wait <= min(2.0 ** n + 1.0, 5.0)

    def test_a_cap_below_the_first_wait_is_refused(self):
        """max_backoff_seconds under backoff_seconds does not validate."""
        with pytest.raises(ValidationError, match="max_backoff_seconds"):
            InfraRetrySettings(backoff_seconds=5, max_backoff_seconds=1)


class TestLogged:
    def test_each_retry_is_a_warning_and_the_execution_one_record(self):
        """sandbox.infra_retry (warning, reason, try) per retry; one sandbox record carrying the reasons."""
        records = []
        sandbox = guarded(Scripted(gone(), result()),
                          InfraRetrySettings(backoff_seconds=0.01, max_backoff_seconds=0.01))
        sandbox.add_listener(records.append)
        with structlog.testing.capture_logs() as logs:
            sandbox.run(SPEC)
        retried = [e for e in logs if e["event"] == "sandbox.infra_retry"]
        assert len(retried) == 1 and retried[0]["log_level"] == "warning"
        assert (retried[0]["reason"], retried[0]["try_number"], retried[0]["tries"]) == ("container_gone", 1, 3)
        assert retried[0]["image_label"] == "sandloop/python-parser"
        executed = [e for e in logs if e["event"] == "sandbox.executed"]
        assert len(executed) == 1 and executed[0]["infra_retries"] == ["container_gone"]
        assert [r.infra_retries for r in records] == [("container_gone",)]

    def test_an_exhausted_execution_is_recorded_as_engine_error_with_its_reasons(self):
        """The instrumented layer sees one engine_error carrying every reason."""
        records = []
        sandbox = InstrumentedSandbox(retrying(Scripted(gone(), gone()), tries=2))
        sandbox.add_listener(records.append)
        with pytest.raises(InfraRetriesExhausted):
            sandbox.run(SPEC)
        assert [(r.outcome, r.infra_retries) for r in records] == [("engine_error", ("container_gone",) * 2)]
