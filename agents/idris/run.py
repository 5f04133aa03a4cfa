"""Run the Idris agent on one document: build the context, stream the graph, summarise."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from agents.idris.coder import IdrisCoder
from agents.idris.diagnostics import Category
from agents.idris.document import DocumentText
from agents.idris.graph import build_graph, recursion_backstop
from agents.idris.nodes import AGENT
from agents.idris.state import IdrisContext, IdrisState
from agents.loop import stream_graph, summary_on_crash
from agents.ports.artefacts import SUMMARY_FILE, ArtefactStore
from agents.ports.events import OnEvent
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckpointHandle
from agents.ports.sandbox import Sandbox, SandboxLimits

#: Why an attempt can fail, as run summaries and metrics label it: an error category, or the
#: outcome of a check that produced no error block.
IDRIS_REASONS = tuple(c.value for c in Category) + ("timeout", "oom", "crashed")


@dataclass(frozen=True)
class IdrisRunSummary(RunSummary):
    """A run's outcome with what the Idris agent adds: module, analysis, styles tried."""

    module: str = ""
    analysis_path: str = ""
    styles: list[str] = field(default_factory=list)
    last_errors: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The closing block a person reads."""
        verdict = {
            "passed": f"PASSED: {self.module} type-checks (idris2 --check)",
            "failed": f"FAILED: {self.module} did not type-check within {self.max_attempts} attempt(s)",
        }.get(self.status, self.status)
        lines = [
            "",
            verdict,
            f"  target        {self.target} ({self.agent}, coder {self.coder})",
            f"  attempts      {self.attempts} of {self.max_attempts} (styles: {', '.join(self.styles) or '-'})",
            f"  module        {self.parser_path or '(not published; see the attempts in the run folder)'}",
            f"  analysis      {self.analysis_path or self.run_dir + '/analysis.md'}",
            f"  artefacts     {self.run_dir}",
            f"  wall time     {self.wall_seconds:.1f} s",
            f"  in sandboxes  {self.sandbox_seconds:.1f} s",
        ]
        if self.status == "failed" and self.last_problem:
            lines.append(f"  last problem  {self.last_problem}")
            lines += [f"                {error}" for error in self.last_errors[:3]]
        return lines


@dataclass(frozen=True)
class IdrisRunRequest:
    """Everything one run needs, besides the sandbox and the coder."""

    run_id: str
    target: str
    project: str
    document_type: str
    document: DocumentText
    limits: SandboxLimits
    max_attempts: int
    artefacts: ArtefactStore
    output_dir: Path


def run_idris_agent(request: IdrisRunRequest, *, sandbox: Sandbox, image: str, coder: IdrisCoder,
                    on_event: OnEvent, checkpoint: CheckpointHandle | None = None) -> IdrisRunSummary:
    """Run the loop to its end and write ``summary.json``; return the summary.

    ``image`` is the tag of the image checks run in: the real idris2 image, or any image
    whose ``/opt/sandloop/check-module`` entrypoint behaves the same (the tests' stand-in).
    """
    started = time.monotonic()
    artefacts = request.artefacts
    context = IdrisContext(
        run_id=request.run_id, target=request.target, project=request.project,
        document_type=request.document_type, document=request.document, sandbox=sandbox, image=image,
        coder=coder, limits=request.limits, max_attempts=request.max_attempts, artefacts=artefacts,
        output_dir=request.output_dir,
    )
    on_crash = summary_on_crash(artefacts, lambda state: _summary(context, state, coder.name,
                                                                  time.monotonic() - started))
    graph = build_graph(request.max_attempts, checkpoint.saver if checkpoint else None)
    final: IdrisState = stream_graph(  # type: ignore[assignment]
        graph, context, recursion_backstop(request.max_attempts), on_event, on_crash, checkpoint)
    summary = _summary(context, final, coder.name, time.monotonic() - started)
    artefacts.write_json(SUMMARY_FILE, summary.to_json())
    return summary


def _summary(context: IdrisContext, state: IdrisState, coder: str, wall: float) -> IdrisRunSummary:
    history = state.get("history", [])
    styles = list(dict.fromkeys([h.code.style for h in history] + ([state["code"].style] if "code" in state else [])))
    published = state.get("published", "")
    last = history[-1] if history else None
    return IdrisRunSummary(
        run_id=context.run_id, agent=AGENT, target=context.target, status=state.get("status", "failed"),
        attempts=state.get("attempt", 0), max_attempts=context.max_attempts, parser_path=published,
        run_dir=str(context.artefacts.run_dir), wall_seconds=wall,
        sandbox_seconds=state.get("sandbox_seconds", 0.0), coder=coder,
        failures=[h.reason for h in history],
        last_problem=f"attempt {last.attempt}: {last.outcome}: {last.summary}" if last else "",
        module=context.module,
        analysis_path=str(context.output_dir / f"analysis_{context.project}.md") if published else "",
        styles=styles, last_errors=[d.one_line() for d in last.diagnostics] if last else [],
    )
