"""Run the parser agent on one target: build the context, stream the graph, summarise."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from agents.bank_parser.coders.base import Coder
from agents.bank_parser.graph import build_graph, recursion_backstop
from agents.bank_parser.lessons import run_record
from agents.bank_parser.nodes import AGENT
from agents.bank_parser.output_schema import OutputSchema
from agents.bank_parser.repairs import read_ocr_cost
from agents.bank_parser.report import ParserRunSummary
from agents.bank_parser.state import ParserContext, ParserState
from agents.bank_parser.target import Target
from agents.lessons import LessonBook, lessons_markdown
from agents.loop import stream_graph, summary_on_crash
from agents.ports.artefacts import SUMMARY_FILE, ArtefactStore
from agents.ports.config import AnalysisLimits
from agents.ports.events import OnEvent
from agents.ports.run import CheckpointHandle
from agents.ports.sandbox import Sandbox, SandboxLimits

LESSONS_MD = "lessons.md"


def run_parser_agent(
    *,
    run_id: str,
    target: Target,
    artefacts: ArtefactStore,
    limits: SandboxLimits,
    max_attempts: int,
    parsers_dir: Path,
    output: OutputSchema | None = None,
    sandbox: Sandbox,
    image: str,
    coder: Coder,
    on_event: OnEvent,
    history: LessonBook | None = None,
    checkpoint: CheckpointHandle | None = None,
    judge_image: str | None = None,
    analysis: AnalysisLimits | None = None,
    cache_dir: Path | None = None,
) -> ParserRunSummary:
    """Run the loop to its end and write ``summary.json``; return the summary.

    With a ``history``, the run writes ``lessons.md`` (what earlier runs on the target
    taught; an LLM coder was given the same lessons) and records its own failures there.
    """
    started = time.monotonic()
    context = ParserContext(
        run_id=run_id, target=target, sandbox=sandbox, image=image, coder=coder,
        limits=limits, max_attempts=max_attempts, artefacts=artefacts,
        parsers_dir=str(parsers_dir), output=output, judge_image=judge_image,
        analysis=analysis or AnalysisLimits(), cache_dir=cache_dir,
    )
    if history is not None and not (checkpoint and checkpoint.resume):
        lessons = history.lessons(AGENT, target.name)
        artefacts.write(LESSONS_MD, lessons_markdown(AGENT, target.name, lessons))
    on_crash = summary_on_crash(artefacts, lambda state: _summary(context, state, coder.name,
                                                                  time.monotonic() - started))
    graph = build_graph(max_attempts, checkpoint.saver if checkpoint else None)
    final: ParserState = stream_graph(  # type: ignore[assignment]
        graph, context, recursion_backstop(max_attempts), on_event, on_crash, checkpoint)
    if history is not None:
        history.record(run_record(run_id, target.name, coder.name, final))
    summary = _summary(context, final, coder.name, time.monotonic() - started)
    artefacts.write_json(SUMMARY_FILE, summary.to_json())
    return summary


def _summary(context: ParserContext, state: ParserState, coder: str, wall: float) -> ParserRunSummary:
    feedback = state.get("feedback", [])
    return ParserRunSummary(
        run_id=context.run_id,
        agent=AGENT,
        target=context.target.name,
        status=state.get("status", "failed"),
        attempts=state.get("attempt", 0),
        max_attempts=context.max_attempts,
        parser_path=state.get("published", ""),
        run_dir=str(Path(context.artefacts.run_dir)),
        wall_seconds=wall,
        sandbox_seconds=state.get("sandbox_seconds", 0.0),
        coder=coder,
        failures=[f.kind.value for f in feedback],
        last_problem=f"attempt {feedback[-1].attempt}: {feedback[-1].kind.value}: {feedback[-1].summary}"
        if feedback else "",
        ocr=ocr_cost(state),
        **verified(state),
    )


def verified(state: ParserState) -> dict[str, Any]:
    """How the run's parser was verified, the last self-consistency checks (issue 15) and the
    cells its parser repaired (issue 24)."""
    status, verification = state.get("status"), state.get("verification")
    checks = verification.summary() if verification is not None else ""
    consistent = verification is not None and verification.self_consistent
    how = {"passed": "both" if consistent else "compared", "self-consistent": "self-consistent"}
    repairs = [r.describe() for r in verification.repairs] if verification is not None else []
    return {"verified": how.get(status or "", ""), "checks": checks, "repairs": repairs}


def ocr_cost(state: ParserState) -> dict[str, float]:
    """The last attempt's OCR cost as its parser reported it (empty for a text PDF)."""
    execution = state.get("execution")
    cost = read_ocr_cost(execution.sandbox.stderr.data) if execution is not None else None
    return cost.record() if cost is not None else {}
