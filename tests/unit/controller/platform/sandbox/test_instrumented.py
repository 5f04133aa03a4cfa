"""The instrumented sandbox: same results as the backend it wraps, plus one log event and one
record per execution, including engine failures."""

from __future__ import annotations

import io
import json

import pytest

from agents.ports.errors import SandboxError
from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec
from controller.platform.observability.logs import configure_logging, reset_logging
from controller.platform.sandbox.instrumented import InstrumentedSandbox


class FixedBackend:
    """A test double for a backend: returns one prepared result, or raises SandboxError."""

    def __init__(self, result: SandboxResult | None) -> None:
        self.result = result

    def run(self, spec: SandboxSpec) -> SandboxResult:
        if self.result is None:
            raise SandboxError("the Docker engine failed running img: boom")
        return self.result


SPEC = SandboxSpec(image="sandloop/python-parser:abc", command=("python3", "x.py"),
                   inputs={"parser.py": b"x" * 10}, labels={"attempt": "2"})


@pytest.fixture
def stream():
    out = io.StringIO()
    configure_logging("json", "info", stream=out, cache_loggers=False)
    yield out
    reset_logging()


def result(**changes) -> SandboxResult:
    base = dict(exit_code=137, stdout=CapturedStream(b"abc", 3), stderr=CapturedStream(b"e" * 5, 900),
                timed_out=False, oom_killed=True, wall_seconds=1.5, files={}, container_id="0123456789ab")
    return SandboxResult(**{**base, **changes})


class TestInstrumentedSandbox:
    def test_result_passes_through_and_is_logged(self, stream):
        """The wrapped result is returned unchanged; the event has image, container, limits, exit, flags, sizes."""
        inner = result()
        sandbox = InstrumentedSandbox(FixedBackend(inner))
        assert sandbox.run(SPEC) is inner
        (event,) = [json.loads(line) for line in stream.getvalue().splitlines()]
        assert event["event"] == "sandbox.executed" and event["image"] == SPEC.image
        assert event["container_id"] == "0123456789ab" and event["exit_code"] == 137
        assert (event["outcome"], event["oom_killed"], event["timed_out"]) == ("oom", True, False)
        assert event["limits"]["memory_mb"] == 512 and event["run_seconds"] == 1.5
        assert (event["stdout_bytes"], event["stderr_bytes"], event["stderr_truncated"]) == (3, 900, True)
        assert event["input_bytes"] == 10 and event["duration_seconds"] >= 0

    def test_listeners_get_a_bounded_record(self, stream):
        """Listeners get the image repository (no tag), the outcome and the attempt from the labels."""
        records = []
        sandbox = InstrumentedSandbox(FixedBackend(result(timed_out=True, oom_killed=False, exit_code=None)))
        sandbox.add_listener(records.append)
        sandbox.run(SPEC)
        sandbox.remove_listener(records.append)
        sandbox.run(SPEC)
        (record,) = records
        assert (record.image, record.image_ref, record.outcome, record.attempt) == (
            "sandloop/python-parser", SPEC.image, "timeout", 2)

    def test_engine_error_is_logged_recorded_and_reraised(self, stream):
        """A SandboxError is logged at error level as engine_error, recorded, and raised unchanged."""
        records = []
        sandbox = InstrumentedSandbox(FixedBackend(None))
        sandbox.add_listener(records.append)
        with pytest.raises(SandboxError, match="boom"):
            sandbox.run(SPEC)
        (event,) = [json.loads(line) for line in stream.getvalue().splitlines()]
        assert (event["event"], event["level"], event["outcome"]) == ("sandbox.engine_error", "error", "engine_error")
        assert records[0].outcome == "engine_error" and records[0].exit_code is None
