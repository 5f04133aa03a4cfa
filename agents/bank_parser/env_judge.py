"""Judge a parser's result under its environment's own pandas: a second, separate execution.

The first execution ran the parser (its inputs: the parser, its modules, the PDF; never the
expected CSV). This second one runs the judge in a fresh container of the same environment
image with the first execution's ``result.json`` and the expected CSV as inputs, and never
the parser. Its verdict is JSON, read with a size cap and checked field by field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agents.ports.environments import JUDGE_DIR
from agents.ports.sandbox import INPUT_DIR, OUTPUT_DIR, Sandbox, SandboxLimits, SandboxSpec

RESULT_FILE = "result.json"
EXPECTED_FILE = "expected.csv"
VERDICT_FILE = "verdict.json"
COMMAND = ("python3", "-I", f"{JUDGE_DIR}/judge.py", f"{INPUT_DIR}/{RESULT_FILE}",
           f"{INPUT_DIR}/{EXPECTED_FILE}", f"{OUTPUT_DIR}/{VERDICT_FILE}")


@dataclass(frozen=True)
class Verdict:
    """The judge's answer: passed or not, why, and under which pandas."""

    passed: bool
    summary: str
    first_difference: str
    report: str
    pandas: str
    seconds: float


def judge_spec(image: str, result_json: bytes, expected_csv: bytes, limits: SandboxLimits,
               labels: dict[str, str]) -> SandboxSpec:
    """The judge's execution: only the result and the expected CSV go in."""
    return SandboxSpec(image=image, command=COMMAND,
                       inputs={RESULT_FILE: result_json, EXPECTED_FILE: expected_csv},
                       collect=(VERDICT_FILE,), limits=limits, labels={**labels, "step": "judge"})


def judge_in_environment(sandbox: Sandbox, spec: SandboxSpec) -> Verdict:
    """Run the judge; a judge that fails to give a verdict is a failed comparison, said plainly."""
    result = sandbox.run(spec)
    raw = result.files.get(VERDICT_FILE)
    if raw is None:
        tail = result.stderr.text.strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
        return Verdict(False, "the judge gave no verdict", f"judge: {tail[0][:200]}", result.stderr.text[-2000:],
                       "?", result.wall_seconds)
    return parse_verdict(raw, result.wall_seconds)


def parse_verdict(raw: bytes, seconds: float) -> Verdict:
    """Read the verdict document (JSON only, fields typed and bounded)."""
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return Verdict(False, "the judge's verdict is not JSON", "judge: malformed verdict", "", "?", seconds)
    if not isinstance(document, dict) or document.get("status") != "ok":
        message = str(document.get("message", "no verdict") if isinstance(document, dict) else "no verdict")
        return Verdict(False, message[:300], f"judge: {message[:200]}", "", "?", seconds)
    return Verdict(
        passed=document.get("passed") is True,
        summary=str(document.get("summary", ""))[:500],
        first_difference=str(document.get("first_difference", ""))[:500],
        report=str(document.get("report", ""))[:8000],
        pandas=str(document.get("pandas", "?"))[:40],
        seconds=seconds,
    )
