"""Run the blueprint agent once: build the context, stream the graph, learn, summarise.

Meta-learning (the seed's execution_history and failure_patterns) uses the platform's
lessons store (:mod:`agents.lessons`, ``runs/lessons.sqlite``), keyed by the run's target, as the
run history's statistics are (issue 41: keyed by the blueprint's ``name`` they disagreed on the
targets page when a target's blueprint shared its name with another's): every run records each QA
failure with its reason (``too_short``, ``missing_section``, ...) and its recommended fix (the
directive's text); the store counts
how often each was seen and whether a later attempt fixed it. The next run's manager turns
those fixes back into directives for the writer's first attempt (``lessons.md`` in the run
folder lists them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agents.blueprint.graph import build_graph, recursion_backstop
from agents.blueprint.nodes import AGENT
from agents.blueprint.state import BlueprintContext, BlueprintState
from agents.lessons import FailedAttempt, LessonBook, RunOutcome, lessons_markdown
from agents.loop import stream_graph, summary_on_crash
from agents.ports.artefacts import SUMMARY_FILE
from agents.ports.events import OnEvent
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckpointHandle

LESSONS_MD = "lessons.md"


@dataclass(frozen=True)
class BlueprintRunSummary(RunSummary):
    """A run's outcome with what the blueprint agent adds: workflow, lessons applied, last issues."""

    workflow: str = ""
    lessons_applied: list[str] = field(default_factory=list)
    last_issues: list[str] = field(default_factory=list)

    def verdict(self) -> str:
        """PASSED / FAILED in the agent's words."""
        if self.status == "passed":
            return f"PASSED: the {self.workflow} report passed QA"
        if self.status == "failed":
            return f"FAILED: the {self.workflow} report did not pass QA within {self.max_attempts} attempt(s)"
        if self.status == "no-go":
            return f"NO-GO: the {self.workflow} workflow stopped before writing: {self.last_problem}"
        return super().verdict()

    def lines(self) -> list[str]:
        """The closing block, with the lessons applied and QA's last issues (a no-go: its one line)."""
        if self.status == "no-go":
            return ["", self.verdict()]
        lines = super().lines()
        if self.lessons_applied:
            lines.append(f"  lessons       {len(self.lessons_applied)} applied: "
                         f"{'; '.join(self.lessons_applied)[:200]}")
        lines += [f"  issue         {issue}" for issue in self.last_issues[:5]]
        return lines

    @property
    def artefact_label(self) -> str:
        """The published artefact is the report (partial when QA failed)."""
        return "report"


def run_blueprint_agent(context: BlueprintContext, *, on_event: OnEvent, history: LessonBook | None = None,
                        checkpoint: CheckpointHandle | None = None) -> BlueprintRunSummary:
    """Run the loop to its end, record it in the lessons store, write ``summary.json``."""
    started = time.monotonic()
    if not (checkpoint and checkpoint.resume):
        context.artefacts.write(LESSONS_MD, lessons_markdown(AGENT, context.target, context.lessons))
    graph = build_graph(context.max_attempts, checkpoint.saver if checkpoint else None)
    on_crash = summary_on_crash(context.artefacts, lambda state: _summary(context, state, time.monotonic() - started))
    final: BlueprintState = stream_graph(  # type: ignore[assignment]
        graph, context, recursion_backstop(context.max_attempts), on_event, on_crash, checkpoint)
    if history is not None:
        history.record(run_record(context, final))
    summary = _summary(context, final, time.monotonic() - started)
    context.artefacts.write_json(SUMMARY_FILE, summary.to_json())
    return summary


def run_record(context: BlueprintContext, state: BlueprintState) -> RunOutcome:
    """The lessons store's record: each QA issue of each failed attempt, with its recommended fix."""
    failures = tuple(FailedAttempt(feedback["attempt"], issue["code"], issue["message"], (issue["fix"]["text"],))
                     for feedback in state.get("feedback", []) for issue in feedback["issues"])
    status = state.get("status", "failed")
    fixed_by = f"attempt {state.get('attempt', 0)}" if status == "passed" and failures else ""
    return RunOutcome(AGENT, context.target, context.run_id, context.coder, status, state.get("attempt", 0),
                     failures, fixed_by)


def _summary(context: BlueprintContext, state: BlueprintState, wall: float) -> BlueprintRunSummary:
    feedback = state.get("feedback", [])
    last = feedback[-1] if feedback else None
    issues = [issue["message"] for issue in last["issues"]] if last and state.get("status") != "passed" else []
    return BlueprintRunSummary(
        run_id=context.run_id, agent=AGENT, target=context.target, status=state.get("status", "failed"),
        attempts=state.get("attempt", 0), max_attempts=context.max_attempts, parser_path=state.get("published", ""),
        run_dir=str(context.artefacts.run_dir), wall_seconds=wall, sandbox_seconds=state.get("sandbox_seconds", 0.0),
        coder=context.coder, failures=["no_go"] if state.get("no_go") else
        [f["issues"][0]["code"] for f in feedback if f["issues"]],
        last_problem=state.get("no_go") or (f"attempt {last['attempt']}: {issues[0]}" if last and issues else ""),
        workflow=context.blueprint.name, lessons_applied=state.get("lessons", []), last_issues=issues,
    )
