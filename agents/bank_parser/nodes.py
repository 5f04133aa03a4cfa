"""The nodes of the parser agent (seed 000): analyze, generate, save, execute, compare,
refine, finalize. Each is a small function of (state, runtime) that returns an update and
a one-word outcome; :func:`node` adds timing, the progress event and the node.started /
node.finished log events (with node and attempt bound as log context).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from langgraph.runtime import Runtime

from agents.bank_parser.analysis import analyze as analyze_target
from agents.bank_parser.coders.base import (
    CoderExhausted,
    CoderFailed,
    FailureKind,
    Feedback,
    GeneratedCode,
)
from agents.bank_parser.evaluate import (
    RESULT_FILE,
    Execution,
    execute_parser,
    judge,
    parser_spec,
)
from agents.bank_parser.repairs import read_ocr_cost
from agents.bank_parser.state import ParserContext, ParserState
from agents.bank_parser.statement_pdf import scanned_limits
from agents.bank_parser.target_env import judged_in_environment
from agents.bank_parser.verify import Verification, check_consistency
from agents.loop import Update, node
from agents.ports.artefacts import ANALYSIS_FILE, write_atomic

AGENT = "bank_parser"


@node("analyze")
def analyze(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Read the PDF's structure and the expected CSV's schema."""
    target = runtime.context.target
    analysis = analyze_target(target.pdf, target.expected_csv, runtime.context.statement_reader())
    if analysis.expected is None:  # issue 15: the frame to aim for comes from the settings
        analysis = replace(analysis, schema=runtime.context.output)
    runtime.context.artefacts.write(ANALYSIS_FILE, f"# Analysis of {target.name}\n\n{analysis.summary()}\n")
    return {"analysis": analysis}, "ok", analysis.summary().splitlines()[0]


@node("generate")
def generate(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Ask the coder for a first parser; no usable code is a failed attempt 1, not a crash."""
    try:
        code = runtime.context.coder.generate(state["analysis"])
    except CoderExhausted as exc:
        return {"exhausted": True}, "exhausted", str(exc) or "the coder has nothing to try"
    except CoderFailed as exc:
        return _coder_failed(runtime.context, 1, exc)
    return {"code": code, "attempt": 1, "coder_failed": False}, "ok", f"strategy {code.strategy}"


@node("save")
def save(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Keep the attempt's code with the run's artefacts."""
    artefacts, attempt = runtime.context.artefacts, state["attempt"]
    path = artefacts.write_attempt(attempt, "parser.py", state["code"].code)
    for name, data in state["code"].artefacts.items():
        artefacts.write_attempt(attempt, name, data)
    return {}, "ok", str(path)


@node("execute")
def execute(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Run the parser in a fresh sandbox with only the PDF and the parser inside."""
    ctx, attempt = runtime.context, state["attempt"]
    labels = ctx.labels(str(attempt))
    limits = scanned_limits(ctx.limits, state["analysis"])  # issue 15: OCR takes longer
    spec = parser_spec(ctx.image, state["code"].code, ctx.target.pdf.read_bytes(), limits, labels)
    execution = execute_parser(ctx.sandbox, spec)
    _keep_execution(ctx, attempt, execution)
    update: Update = {"execution": execution, "comparison": None,
                      "sandbox_seconds": execution.sandbox.wall_seconds}
    if execution.failure is not None:
        update["feedback"] = [_feedback(state, execution.failure, execution.message, execution.detail)]
        return update, execution.failure.value, execution.message
    cost = read_ocr_cost(execution.sandbox.stderr.data)  # issue 24: a scan's OCR time per page
    return update, "ok", execution.message + (f"; {cost.describe()}" if cost is not None else "")


@node("compare")
def compare(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Compare the parser's DataFrame with the expected CSV (on the host)."""
    ctx, attempt = runtime.context, state["attempt"]
    verification = check_consistency(state["execution"], state["analysis"])
    if verification is not None:
        ctx.artefacts.write_attempt(attempt, "verify.txt", verification.report() + "\n")
    comparison = judge(state["execution"], ctx.target.expected_csv)
    update: Update = {"comparison": comparison, "verification": verification}
    if comparison is None:
        return _self_consistency(state, update, verification)
    summary, report = comparison.summary(), comparison.report()
    if ctx.judge_image is not None and ctx.target.expected_csv is not None:  # issue 13: the environment's pandas
        labels = {"run_id": ctx.run_id, "agent": AGENT, "target": ctx.target.name, "attempt": str(attempt)}
        comparison, verdict = judged_in_environment(ctx.sandbox, ctx.judge_image, state["execution"],
                                                    ctx.target.expected_csv.read_bytes(), comparison, ctx.limits,
                                                    labels)
        summary = f"{verdict.summary} (judged under pandas {verdict.pandas})"
        report = verdict.report or f"{verdict.summary}\n{verdict.first_difference}"
        update["comparison"] = comparison
    ctx.artefacts.write_attempt(attempt, "diff.txt", report + "\n")
    beside = f"; {verification.summary()}" if verification is not None else ""
    if comparison.passed:
        return update, "passed", summary + beside
    feedback = _feedback(state, FailureKind.MISMATCH, summary, report)
    return {**update, "feedback": [feedback]}, "mismatch", summary + beside


def _self_consistency(
    state: ParserState, update: Update, verification: Verification | None
) -> tuple[Update, str, str]:
    """No result.csv: the frame passes only when it is self-consistent (issue 15)."""
    if verification is None:
        return update, "unverified", "no result.csv and no statement facts to check against"
    if verification.self_consistent:
        return update, "self-consistent", verification.summary()
    feedback = _feedback(state, FailureKind.MISMATCH, verification.summary(), verification.report())
    return {**update, "feedback": [feedback]}, "inconsistent", verification.summary()


@node("refine")
def refine(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Ask the coder for a different parser, given every failure so far."""
    try:
        code = runtime.context.coder.refine(state["analysis"], state["feedback"])
    except CoderExhausted as exc:
        return {"exhausted": True}, "exhausted", str(exc) or "the coder has nothing new to try"
    except CoderFailed as exc:
        return _coder_failed(runtime.context, state["attempt"] + 1, exc)
    return {"code": code, "attempt": state["attempt"] + 1, "coder_failed": False}, "ok", f"strategy {code.strategy}"


@node("finalize")
def finalize(state: ParserState, runtime: Runtime[ParserContext]) -> tuple[Update, str, str]:
    """Decide the run's status and publish the parser if it passed (or cannot be verified)."""
    ctx = runtime.context
    comparison, verification = state.get("comparison"), state.get("verification")
    ran = bool(state.get("execution")) and state["execution"].failure is None
    if comparison is not None and comparison.passed:
        status = "passed"
    elif comparison is None and ran and verification is not None:
        status = "self-consistent" if verification.self_consistent else "failed"
    elif comparison is None and ran:
        status = "unverified"
    else:
        status = "failed"
    published = ""
    if status != "failed":
        path = Path(ctx.parsers_dir) / f"{ctx.target.name}_parser.py"
        write_atomic(path, state["code"].code)
        published = str(path)
    return {"status": status, "published": published}, status, published or "parser not published"


def _coder_failed(ctx: ParserContext, attempt: int, exc: CoderFailed) -> tuple[Update, str, str]:
    """Attempt ``attempt`` ends before the sandbox: keep what the coder left, make it feedback."""
    for name, data in exc.artefacts.items():
        ctx.artefacts.write_attempt(attempt, name, data)
    feedback = Feedback(attempt, exc.kind, exc.summary, exc.detail, exc.code, exc.strategy)
    update: Update = {"attempt": attempt, "coder_failed": True, "feedback": [feedback],
                      "code": GeneratedCode(exc.code, exc.strategy), "execution": None, "comparison": None}
    return update, exc.kind.value, exc.summary


def _feedback(state: ParserState, kind: FailureKind, summary: str, detail: str) -> Feedback:
    code = state["code"]
    return Feedback(state["attempt"], kind, summary, detail, code.code, code.strategy)


def _keep_execution(ctx: ParserContext, attempt: int, execution: Execution) -> None:
    result = execution.sandbox
    record = {
        **result.record(),
        "failure": execution.failure.value if execution.failure else None,
        "message": execution.message,
        "limits": ctx.limits.model_dump(),
    }
    ctx.artefacts.write_attempt(attempt, "sandbox.json", json.dumps(record, indent=2) + "\n")
    ctx.artefacts.write_attempt(attempt, "stdout.txt", result.stdout.data)
    ctx.artefacts.write_attempt(attempt, "stderr.txt", result.stderr.data)
    if RESULT_FILE in result.files:
        ctx.artefacts.write_attempt(attempt, RESULT_FILE, result.files[RESULT_FILE])
