"""The nodes of the Idris agent (seed 004): analyze, generate, save, typecheck, fix,
finish, fail. Each is a small function of (state, runtime) that returns an update, a
one-word outcome and a detail; :func:`node` adds timing and the progress event.
"""

from __future__ import annotations

import json
from pathlib import Path

from langgraph.runtime import Runtime

from agents.idris.analysis import analyze_document
from agents.idris.coder import CheckFeedback, CoderExhausted
from agents.idris.report import analysis_markdown
from agents.idris.state import IdrisContext, IdrisState
from agents.idris.typecheck import CheckResult, check_spec, module_file, run_check
from agents.loop import Update, node
from agents.ports.artefacts import ANALYSIS_FILE, write_atomic

AGENT = "idris"
TRANSCRIPT_FILE = "transcript.txt"
CHECK_FILE = "check.json"
FIX_FILE = "fix.txt"


@node("analyze")
def analyze(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """Find fields, parties, amounts, dates and invariants in the document."""
    ctx = runtime.context
    analysis = analyze_document(ctx.document, ctx.document_type)
    ctx.artefacts.write(ANALYSIS_FILE, analysis_markdown(analysis, ctx.project))
    parties = len(analysis.parties)
    detail = (f"{ctx.document.kind}: {analysis.source}: {len(analysis.amounts)} amount(s), "
              f"{len(analysis.dates) + len(analysis.periods)} date(s)/period(s), {parties} "
              f"part{'y' if parties == 1 else 'ies'}, {len(analysis.invariants)} invariant(s)")
    if analysis.warnings:
        detail += f"; {len(analysis.warnings)} warning(s), see analysis.md"
    return {"analysis": analysis}, "ok", detail


@node("generate")
def generate(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """Ask the coder for a first module."""
    ctx = runtime.context
    code = ctx.coder.generate(state["analysis"], ctx.project)
    return {"code": code, "attempt": 1}, "ok", f"style {code.style}, {len(code.source.splitlines())} lines"


@node("save")
def save(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """Keep the attempt's module (and why it changed) with the run's artefacts."""
    ctx, attempt, code = runtime.context, state["attempt"], state["code"]
    path = ctx.artefacts.write_attempt(attempt, module_file(ctx.module), code.source)
    if attempt > 1 and code.notes:
        ctx.artefacts.write_attempt(attempt, FIX_FILE, "\n".join(code.notes) + "\n")
    return {}, "ok", str(path)


@node("typecheck")
def typecheck(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """``idris2 --check`` the module in a fresh sandbox with only the module inside."""
    ctx, attempt = runtime.context, state["attempt"]
    labels = {"run_id": ctx.run_id, "agent": AGENT, "target": ctx.target, "attempt": str(attempt)}
    check = run_check(ctx.sandbox, check_spec(ctx.image, ctx.module, state["code"].source, ctx.limits, labels))
    _keep_check(ctx, attempt, check)
    update: Update = {"check": check, "sandbox_seconds": check.sandbox.wall_seconds}
    if check.outcome != "passed":
        update["history"] = [CheckFeedback(attempt, check.outcome, check.message, check.errors, state["code"],
                                           check.transcript[-4000:])]
    return update, check.outcome, check.message


@node("fix")
def fix(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """Ask the coder to repair the module from the diagnostics of every failed check."""
    ctx = runtime.context
    try:
        code = ctx.coder.fix(state["analysis"], ctx.project, state["history"])
    except CoderExhausted as exc:
        return {"exhausted": True}, "exhausted", str(exc) or "the coder has nothing new to try"
    return {"code": code, "attempt": state["attempt"] + 1}, "ok", "; ".join(code.notes)[:300]


@node("finish")
def finish(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """Publish the module that type-checks, with its analysis, atomically."""
    ctx = runtime.context
    module_path = ctx.output_dir / Path(*ctx.module.split(".")).with_suffix(".idr")
    write_atomic(module_path, state["code"].source)
    write_atomic(ctx.output_dir / f"analysis_{ctx.project}.md", analysis_markdown(state["analysis"], ctx.project))
    return {"status": "passed", "published": str(module_path)}, "passed", str(module_path)


@node("fail")
def fail(state: IdrisState, runtime: Runtime[IdrisContext]) -> tuple[Update, str, str]:
    """End without publishing: the attempts stay in the run folder."""
    ctx = runtime.context
    why = ("the coder had nothing new to try" if state.get("exhausted")
           else f"{state['attempt']} of {ctx.max_attempts} attempt(s) used")
    return {"status": "failed", "published": ""}, "failed", f"{why}; module not published"


def _keep_check(ctx: IdrisContext, attempt: int, check: CheckResult) -> None:
    result = check.sandbox
    record = {
        **result.record(),
        "outcome": check.outcome,
        "message": check.message,
        "built": [list(pair) for pair in check.parsed.built],
        "errors": [d.to_json() for d in check.parsed.errors],
        "warnings": [d.to_json() for d in check.parsed.warnings],
        "limits": ctx.limits.model_dump(),
    }
    ctx.artefacts.write_attempt(attempt, CHECK_FILE, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    ctx.artefacts.write_attempt(attempt, TRANSCRIPT_FILE, check.transcript)
