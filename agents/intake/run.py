"""Run the intake agent on one target: open the graph memory, stream the graph, summarise."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agents.intake.graph import build_graph, recursion_backstop
from agents.intake.memory import Clock, GraphMemory, utc_now
from agents.intake.nodes import AGENT, GRAPH_FILE
from agents.intake.replies import Replies
from agents.intake.roles import OfflineRoles, Roles
from agents.intake.state import IntakeContext, IntakeState
from agents.intake.target import IntakeTarget
from agents.loop import OnCrash, stream_graph
from agents.ports.artefacts import SUMMARY_FILE, ArtefactStore
from agents.ports.errors import PlatformError
from agents.ports.events import OnEvent
from agents.ports.memory import GraphStore, MemoryStores
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckpointHandle

#: Why a conversation can fail, as summaries and metrics label it.
INTAKE_REASONS = ("mismatch", "incomplete", "conflict", "out_of_replies")


@dataclass(frozen=True)
class IntakeRunSummary(RunSummary):
    """A conversation's outcome: what was judged, the traversal, what was wrong."""

    judged: str = ""
    traversal: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unparsed: int = 0

    subject: str = ""
    """The person talked to (``--subject``), whose memory persists; '' for a run's own memory."""

    not_understood: list[str] = field(default_factory=list)
    """``Node.field`` the person could not answer in three tries (status ``incomplete``)."""

    def to_json(self) -> dict[str, Any]:
        """summary.json: the published artefact is the graph (``graph_path``), not a parser."""
        document = super().to_json()
        document["graph_path"] = document.pop("parser_path")
        return document

    @property
    def artefact_label(self) -> str:
        """The conversation's artefact is its graph."""
        return "graph"

    def lines(self) -> list[str]:
        """The closing block a person reads."""
        lines = [
            "",
            f"{self.status.upper()}: intake conversation on {self.target} ({self.judged})",
            f"  target        {self.target} ({self.agent}, roles {self.coder})",
            f"  subject       {self.subject or '- (this run only)'}",
            f"  turns         {self.attempts} of {self.max_attempts} repl(ies); {self.unparsed} not understood",
            f"  traversal     {' → '.join(self.traversal) or '-'}",
            f"  graph         {self.parser_path or '-'}",
            f"  artefacts     {self.run_dir}",
            f"  wall time     {self.wall_seconds:.1f} s",
        ]
        lines += [f"  problem       {problem}" for problem in self.problems[:5]]
        if self.not_understood:
            lines.append(f"  not understood {', '.join(self.not_understood[:10])}")
        return lines


def run_intake_agent(target: IntakeTarget, *, run_id: str, artefacts: ArtefactStore, max_turns: int,
                     on_event: OnEvent, memory: MemoryStores, subject: str | None = None,
                     checkpoint: CheckpointHandle | None = None, roles: Roles | None = None,
                     replies: Replies | None = None, now: Clock = utc_now) -> IntakeRunSummary:
    """Run the conversation to its end and write ``summary.json``; return the summary.

    The facts go to ``subject``'s memory (it persists: a later conversation starts from them),
    else to the run's own; the conversation itself goes to the run's log (``memory.conversation``).
    """
    started = time.monotonic()
    facts: GraphStore = memory.for_subject(subject) if subject else memory.for_run(run_id)
    graph = GraphMemory(facts, memory.conversation(run_id), run_id, now, target.name)
    try:
        context = IntakeContext(run_id, target, graph, artefacts, max_turns, roles or OfflineRoles(), replies,
                                subject or "")
        final = converse(context, on_event, _on_crash(context, started), checkpoint)
        summary = _summary(context, final, time.monotonic() - started)
    finally:
        graph.close()
    artefacts.write_json(SUMMARY_FILE, summary.to_json())
    return summary


def converse(context: IntakeContext, on_event: OnEvent, on_crash: OnCrash | None = None,
             checkpoint: CheckpointHandle | None = None) -> IntakeState:
    """Stream the graph to its end (from its last checkpoint when resuming); the final state."""
    graph = build_graph(checkpoint.saver if checkpoint else None)
    limit = recursion_backstop(context.max_turns, len(context.target.nodes))
    final = stream_graph(graph, context, limit, on_event, on_crash, checkpoint)
    return final  # type: ignore[return-value]


def _on_crash(context: IntakeContext, started: float) -> OnCrash:
    """Write ``summary.json`` with status ``error`` for a loop that stopped on an exception."""

    def write(state: dict[str, Any], error: PlatformError) -> None:
        summary = _summary(context, state, time.monotonic() - started)  # type: ignore[arg-type]
        assert context.artefacts is not None  # a run, not a check
        context.artefacts.write_json(SUMMARY_FILE, replace(summary, status="error",
                                                           last_problem=error.one_line()).to_json())

    return write


def _summary(context: IntakeContext, state: IntakeState, wall: float) -> IntakeRunSummary:
    problems = state.get("problems", [])
    status = state.get("status", "failed")
    run_dir = Path(context.artefacts.run_dir) if context.artefacts is not None else Path()
    graph = run_dir / GRAPH_FILE
    return IntakeRunSummary(
        run_id=context.run_id, agent=AGENT, target=context.target.name, status=status,
        attempts=state.get("attempt", 0), max_attempts=context.max_turns,
        parser_path=str(graph) if "status" in state else "", run_dir=str(run_dir),
        wall_seconds=wall, sandbox_seconds=0.0, coder=context.roles.name, failures=_reasons(state),
        last_problem=problems[0] if problems else "", verified="compared" if context.target.expected else "",
        judged="" if "status" not in state else ("compared with expected.json" if context.target.expected
                                                 else "complete, no open conflict"),
        traversal=context.memory.traversal(), problems=problems, unparsed=state.get("unparsed", 0),
        subject=context.subject, not_understood=list(state.get("not_understood", [])),
    )


def _reasons(state: IntakeState) -> list[str]:
    """Failure labels for the metrics: why the conversation did not pass."""
    if state.get("status") != "failed":
        return []
    reasons = ["out_of_replies"] if state.get("out_of_replies") else []
    for problem in state.get("problems", []):
        label = ("conflict" if problem.startswith("unresolved conflict") else
                 "incomplete" if "neither answered" in problem else "mismatch")
        if label not in reasons:
            reasons.append(label)
    return reasons
