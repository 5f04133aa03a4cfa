"""TEST DOUBLES for the blueprint agent's unit tests: a sandbox that never runs any code.

``ScriptedCallSandbox`` stands in for the Docker backend: it answers each tool or validator
call (found by the spec's ``tool`` / ``validator`` label) with a scripted result, in order,
and records every spec it was given. The real backend runs the same calls in
tests/integration/agents/test_blueprint_agent.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.ports.sandbox import CapturedStream, SandboxResult, SandboxSpec


@dataclass(frozen=True)
class Answer:
    """One scripted sandbox result: a result document (or raw bytes), or a limit hit."""

    document: dict[str, Any] | None = None
    raw: bytes | None = None
    timed_out: bool = False
    oom: bool = False
    exit_code: int = 0
    stderr: bytes = b""
    refused: dict[str, str] = field(default_factory=dict)

    def result(self) -> SandboxResult:
        files: dict[str, bytes] = {}
        if self.raw is not None:
            files["result.json"] = self.raw
        elif self.document is not None:
            files["result.json"] = json.dumps(self.document).encode()
        return SandboxResult(
            exit_code=None if self.timed_out else self.exit_code, stdout=CapturedStream(b"", 0),
            stderr=CapturedStream(self.stderr, len(self.stderr)), timed_out=self.timed_out, oom_killed=self.oom,
            wall_seconds=0.25, files=files, refused_files=self.refused)


def value(data: Any) -> Answer:
    """The harness's document for a call that returned ``data``."""
    return Answer({"ok": True, "value": data})


def verdict(passed: bool, message: str = "", fix: dict[str, str] | None = None) -> Answer:
    """A validator's verdict as the harness writes it."""
    result: dict[str, Any] = {"passed": passed, "message": message}
    if fix is not None:
        result["fix"] = fix
    return value(result)


class ScriptedCallSandbox:
    """Answers calls by name from ``script`` (name → answers, in order; the last repeats)."""

    def __init__(self, script: dict[str, Sequence[Answer]]) -> None:
        self.script = {name: list(answers) for name, answers in script.items()}
        self.specs: list[SandboxSpec] = []
        self.calls: dict[str, int] = {}

    def run(self, spec: SandboxSpec) -> SandboxResult:
        self.specs.append(spec)
        name = spec.labels.get("tool") or spec.labels.get("validator") or ""
        count = self.calls.get(name, 0)
        self.calls[name] = count + 1
        answers = self.script[name]
        return answers[min(count, len(answers) - 1)].result()


class KilledSandbox(ScriptedCallSandbox):
    """Like ScriptedCallSandbox, but the process 'dies' (a BaseException) at call ``name``."""

    def __init__(self, script: dict[str, Sequence[Answer]], dies_at: str) -> None:
        super().__init__(script)
        self.dies_at = dies_at

    def run(self, spec: SandboxSpec) -> SandboxResult:
        if spec.labels.get("validator") == self.dies_at or spec.labels.get("tool") == self.dies_at:
            raise Killed
        return super().run(spec)


class Killed(BaseException):
    """The process dying mid-call: not an Exception, so neither LangGraph nor the loop handles it."""
