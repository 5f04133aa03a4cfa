"""Run a blueprint's tool or validator once, in a throwaway sandbox, and decode what it said.

A blueprint's code is hostile text: it is never imported, evaluated or executed on the
host. Each call is one :class:`~agents.ports.sandbox.SandboxSpec` in the python-parser image
(Python 3.11): the inputs are the harness (:mod:`agents.blueprint.harness`, sent as text),
the blueprint's source as ``code.py``, ``call.json`` and the data files; the one output is
``result.json``, decoded with :func:`agents.bounded_json.loads_bounded` (size, depth and
value count checked before parsing). A timeout, the memory limit, a crash, a missing or
oversized result: each becomes a :class:`CallResult` with ``ok`` false and one line saying
why; only the engine failing raises (``SandboxError``, from the port).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.bounded_json import BoundedJSONError, JSONBounds, loads_bounded
from agents.ports.sandbox import (
    INPUT_DIR,
    OUTPUT_DIR,
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    naming_limits,
)
from agents.untrusted_text import one_line

IMAGE_NAME = "python-parser"
HARNESS = Path(__file__).resolve().parent / "harness.py"
RESULT_FILE = "result.json"
#: What a result may be: enough for findings and verdicts, far below the sandbox's collect cap.
RESULT_BOUNDS = JSONBounds(max_bytes=256 * 1024, max_depth=12, max_values=20_000)
#: Names the harness owns; a data file may not take one.
RESERVED_INPUTS = frozenset({"harness.py", "code.py", "call.json", "report.md"})


@dataclass(frozen=True)
class CallResult:
    """What one call returned: its value, or why there is none; and the sandbox's facts."""

    ok: bool
    value: Any
    error: str
    seconds: float
    record: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """Plain data for the graph's state and the run folder."""
        return {"ok": self.ok, "value": self.value, "error": self.error, "seconds": round(self.seconds, 3),
                "sandbox": self.record}


@dataclass(frozen=True)
class Call:
    """One call to make: which role, its source, its data files (name → bytes), the report."""

    role: str  # tool | validator
    name: str
    code: str
    files: dict[str, bytes]
    report: str = ""


def call_spec(image: str, call: Call, limits: SandboxLimits, labels: dict[str, str]) -> SandboxSpec:
    """The sandbox spec of ``call``: harness, code, call.json and the data files as inputs."""
    inputs = {name: data for name, data in call.files.items() if name not in RESERVED_INPUTS}
    inputs["harness.py"] = HARNESS.read_bytes()
    inputs["code.py"] = call.code.encode("utf-8")
    inputs["call.json"] = json.dumps({"role": call.role, "files": sorted(call.files)}).encode("utf-8")
    if call.role == "validator":
        inputs["report.md"] = call.report.encode("utf-8")
    return SandboxSpec(
        image=image,
        command=("python3", "-I", f"{INPUT_DIR}/harness.py", INPUT_DIR, f"{OUTPUT_DIR}/{RESULT_FILE}"),
        inputs=inputs, collect=(RESULT_FILE,), limits=limits,
        labels={**labels, "attempt": labels.get("attempt", "0")},
    )


def run_call(sandbox: Sandbox, spec: SandboxSpec) -> CallResult:
    """Run ``spec`` and decode its result (see the module doc)."""
    result = sandbox.run(spec)
    failure = _failure(result, spec.limits)
    if failure:
        named = "time" if result.timed_out else "memory" if result.oom_killed else None
        failure = naming_limits(failure, result, spec.limits, named=named)
        return CallResult(False, None, failure, result.wall_seconds, result.record())
    try:
        document = loads_bounded(result.files[RESULT_FILE], RESULT_BOUNDS)
    except BoundedJSONError as exc:
        return CallResult(False, None, f"its result was refused: {exc}", result.wall_seconds, result.record())
    return _decoded(document, result)


def _failure(result: SandboxResult, limits: SandboxLimits) -> str:
    """Why the sandbox gave no usable result ('' when it gave one to decode)."""
    if result.timed_out:
        return f"killed at the {limits.timeout_seconds:g} s timeout"
    if result.oom_killed:
        return f"killed at the {limits.memory_mb} MiB memory limit"
    if RESULT_FILE in result.refused_files:
        return f"its result was refused: {one_line(result.refused_files[RESULT_FILE], 200)}"
    if RESULT_FILE in result.truncated_files:
        return "its result was larger than the sandbox returns"
    if RESULT_FILE not in result.files:
        tail = one_line(result.stderr.text.strip().splitlines()[-1] if result.stderr.text.strip() else "", 200)
        return f"no result (exit {result.exit_code}){': ' + tail if tail else ''}"
    return ""


def _decoded(document: Any, result: SandboxResult) -> CallResult:
    if not isinstance(document, dict) or not isinstance(document.get("ok"), bool):
        return CallResult(False, None, "its result is not {\"ok\": ..., ...}", result.wall_seconds, result.record())
    if not document["ok"]:
        error = one_line(str(document.get("error", "it failed without saying why")), 300)
        return CallResult(False, None, error, result.wall_seconds, result.record())
    return CallResult(True, document.get("value"), "", result.wall_seconds, result.record())
