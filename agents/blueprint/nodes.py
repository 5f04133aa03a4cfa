"""The nodes of the blueprint agent (seed 003): manager, researcher, writer, qa, finish,
partial, stop (the manager's no-go). Each is a small function of (state, runtime) returning an update, a one-word
outcome and a detail; :func:`agents.loop.node` adds timing and the progress event.

The manager runs twice, as the seed draws it: first it decides go/no-go on the inputs and plans
(the blueprint's instructions plus the fixes that earlier runs of the workflow recommend), then,
with the findings in, it decides go/no-go on them and adjusts the writer's instructions (a tool
that failed leaves a section to fill). A no-go ends the run at ``stop``: no report from nothing.
"""

from __future__ import annotations

import json

from langgraph.runtime import Runtime

from agents.blueprint import directives
from agents.blueprint.checks import Verdict, judge, word_count
from agents.blueprint.directives import Directive
from agents.blueprint.go_no_go import failed_research, missing_inputs
from agents.blueprint.research import research
from agents.blueprint.state import BlueprintContext, BlueprintState, Feedback
from agents.blueprint.writer import read_instructions, write_report
from agents.loop import Update, node

AGENT = "blueprint"
REPORT_FILE = "report.md"
PARTIAL_FILE = "report.partial.md"
VERDICT_FILE = "qa.json"
FINDINGS_FILE = "findings.json"
INSTRUCTIONS_FILE = "instructions.md"
NO_GO_FILE = "no-go.txt"


@node("manager")
def manager(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """Plan (first pass) or adjust the writer's instructions to the findings (second pass)."""
    ctx = runtime.context
    if "findings" not in state:
        return plan(ctx)
    return adjust(state, ctx)


def plan(ctx: BlueprintContext) -> tuple[Update, str, str]:
    """Go/no-go on the inputs, then the blueprint's instructions and the lessons' fixes, for the writer."""
    missing = missing_inputs(ctx.blueprint, ctx.data)
    if missing:
        return {"no_go": missing}, "no-go", missing
    own = [directives.note(text) for text in ctx.blueprint.instructions]
    learned = [d for d in (directives.from_lesson(lesson.text) for lesson in ctx.lessons) if d is not None]
    instructions = directives.merged(own + learned)
    detail = f"{len(ctx.blueprint.tools)} tool(s) to call, {len(instructions)} instruction(s)"
    if learned:
        detail += f", {len(learned)} from lessons of earlier runs: " + "; ".join(d["text"] for d in learned[:3])
    offline = read_instructions(list(ctx.blueprint.instructions)).not_applied if ctx.roles is None else ()
    if offline:
        detail += f"; not acted on offline (an LLM writer reads them): {'; '.join(offline)[:200]}"
    return {"instructions": instructions, "lessons": [d["text"] for d in learned]}, "plan", detail


def adjust(state: BlueprintState, ctx: BlueprintContext) -> tuple[Update, str, str]:
    """With the findings in: go/no-go on them; a failed tool leaves a section to fill; record the plan."""
    findings = state["findings"]
    stop = failed_research(ctx.blueprint, findings)
    if stop:
        return {"no_go": stop}, "no-go", stop
    failed = [f["tool"] for f in findings if not f["ok"]]
    extra = [directives.make("fill", source="manager", why=f"tool(s) {', '.join(failed)} failed")] if failed else []
    instructions = directives.merged(state.get("instructions", []) + extra)
    ctx.artefacts.write(INSTRUCTIONS_FILE, "".join(f"- {d['text']} ({d['source']})\n" for d in instructions)
                        or "(none)\n")
    detail = f"{len(findings) - len(failed)} of {len(findings)} tool(s) found something; " \
             f"{len(instructions)} instruction(s) for the writer"
    return {"instructions": instructions}, "ok", detail


@node("researcher")
def researcher(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """Call every tool: files as data on the host, code in a sandbox each."""
    ctx = runtime.context
    findings = research(list(ctx.blueprint.tools), ctx.data, ctx.sandbox, ctx.image, ctx.limits, ctx.labels(0))
    ctx.artefacts.write(FINDINGS_FILE, json.dumps(findings, indent=2, ensure_ascii=False) + "\n")
    failed = [f"{f['tool']}: {f['error']}" for f in findings if not f["ok"]]
    detail = f"{len(findings) - len(failed)} of {len(findings)} tool(s) ok"
    if failed:
        detail += "; " + "; ".join(failed)[:300]
    seconds = sum(f["seconds"] for f in findings if f["sandboxed"])
    return {"findings": findings, "sandbox_seconds": seconds}, "failed" if failed else "ok", detail


def writer_directives(state: BlueprintState) -> list[Directive]:
    """The manager's instructions, then every fix QA asked for so far."""
    fixes = [issue["fix"] for feedback in state.get("feedback", []) for issue in feedback["issues"]]
    return directives.merged(state.get("instructions", []) + fixes)


@node("writer")
def writer(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """Write the report from the findings and the directives (QA's fixes on a retry)."""
    ctx, attempt = runtime.context, state.get("attempt", 0) + 1
    given = writer_directives(state)
    if ctx.roles is not None:
        written = ctx.roles.write(ctx.blueprint, state.get("findings", []), given)
        report, how = written.report, f" by {written.how}"
    else:
        report, how = write_report(ctx.blueprint, state.get("findings", []), given), ""
    path = ctx.artefacts.write_attempt(attempt, REPORT_FILE, report)
    feedback = state.get("feedback", [])
    retry = f", retry with {len(feedback[-1]['issues'])} QA fix(es)" if feedback else ""
    return {"attempt": attempt, "report": report}, "ok", f"{word_count(report)} words{how}{retry}; {path}"


@node("qa")
def qa(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """Judge the report: built-in checks in-process, the blueprint's validators in sandboxes."""
    ctx, attempt = runtime.context, state["attempt"]
    verdict, seconds = judge(state["report"], ctx.blueprint, ctx.data, ctx.sandbox, ctx.image, ctx.limits,
                             ctx.labels(attempt), state.get("findings", []))
    reviewed = ""
    if verdict["passed"] and ctx.roles is not None:  # the seed's LLM quality check, once the rules hold
        issue, reviewed = ctx.roles.review(state["report"], ctx.blueprint)
        if issue is not None:
            verdict = Verdict(passed=False, issues=[issue], validators=verdict["validators"])
    ctx.artefacts.write_attempt(attempt, VERDICT_FILE, json.dumps(verdict, indent=2, ensure_ascii=False) + "\n")
    update: Update = {"verdict": verdict, "sandbox_seconds": seconds}
    if verdict["passed"]:
        checks = "built-in checks" + (f" and {verdict['validators']} validator(s)" if verdict["validators"] else "")
        return update, "passed", f"{checks} passed" + (f"; {reviewed}" if reviewed else "")
    update["feedback"] = [Feedback(attempt=attempt, issues=verdict["issues"])]
    return update, "failed", "; ".join(issue["message"] for issue in verdict["issues"])[:400]


@node("finish")
def finish(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """QA passed: the report is the run's output."""
    path = runtime.context.artefacts.write(REPORT_FILE, state["report"])
    return {"status": "passed", "published": str(path)}, "passed", str(path)


@node("stop")
def stop(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """The manager said no-go: no report is written; the reason is the run's one line."""
    reason = state.get("no_go", "")
    runtime.context.artefacts.write(NO_GO_FILE, reason + "\n")
    return {"status": "no-go", "published": ""}, "no-go", reason


@node("partial")
def partial(state: BlueprintState, runtime: Runtime[BlueprintContext]) -> tuple[Update, str, str]:
    """QA failed at the retry limit: keep the last report as partial output, marked as such."""
    ctx = runtime.context
    issues = state["verdict"]["issues"]
    head = ("<!-- PARTIAL: QA did not pass: " + "; ".join(i["message"] for i in issues)[:500].replace("--", "-")
            + " -->\n")
    path = ctx.artefacts.write(PARTIAL_FILE, head + state["report"])
    why = f"{state['attempt']} of {ctx.max_attempts} attempt(s) used"
    return {"status": "failed", "published": str(path)}, "failed", f"{why}; partial output {path}"
