"""Test doubles for the Idris agent's unit tests.

``RecordedChecker`` stands in for the Docker sandbox in *unit* tests of the loop (routing,
attempts, artefacts): it runs nothing, and answers each check with the next recorded
Idris2 transcript (from tests/fixtures/idris2-diagnostics) or a scripted outcome. The real
sandbox, with a stand-in image, is exercised by tests/integration/agents/test_idris_loop.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec
from controller.platform.settings import PROJECT_ROOT

TRANSCRIPTS = PROJECT_ROOT / "tests" / "fixtures" / "idris2-diagnostics"


def transcript(name: str) -> str:
    """The recorded transcript ``name`` (e.g. ``error-error009``)."""
    return (TRANSCRIPTS / name / "expected").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Answer:
    """One scripted check: what idris2 printed, its exit code, or a timeout."""

    stdout: str = ""
    exit_code: int | None = 0
    timed_out: bool = False
    stderr: str = ""


PASS = Answer("1/1: Building Domains.ServiceContract (Domains/ServiceContract.idr)\n", 0)


def failing(name: str) -> Answer:
    """A check that prints the recorded transcript ``name`` and exits 1."""
    return Answer(transcript(name), 1)


class RecordedChecker:
    """Returns one scripted answer per run, in order; records the specs it was given."""

    def __init__(self, answers: Sequence[Answer]) -> None:
        self.answers = list(answers)
        self.specs: list[SandboxSpec] = []

    def run(self, spec: SandboxSpec) -> SandboxResult:
        answer = self.answers[len(self.specs)]
        self.specs.append(spec)
        out, err = answer.stdout.encode(), answer.stderr.encode()
        return SandboxResult(
            exit_code=None if answer.timed_out else answer.exit_code,
            stdout=CapturedStream(out, len(out)), stderr=CapturedStream(err, len(err)),
            timed_out=answer.timed_out, oom_killed=False, wall_seconds=0.25, files={},
        )
