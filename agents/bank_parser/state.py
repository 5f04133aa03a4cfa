"""State and run context of the bank-statement parser agent (LangGraph).

State is what changes as the loop runs; the context is what a run is given and does not
change (target, sandbox, coder, limits, where artefacts go). Nodes get both.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, TypedDict

from agents.bank_parser.analysis import Analysis
from agents.bank_parser.coders.base import Coder, Feedback, GeneratedCode
from agents.bank_parser.compare import Comparison
from agents.bank_parser.evaluate import Execution
from agents.bank_parser.output_schema import OutputSchema
from agents.bank_parser.statement_reader import StatementReader, scan_cache
from agents.bank_parser.target import Target
from agents.bank_parser.verify import Verification
from agents.ports.artefacts import ArtefactStore
from agents.ports.config import AnalysisLimits
from agents.ports.events import NodeEvent
from agents.ports.sandbox import Sandbox, SandboxLimits

FinalStatus = Literal["passed", "failed", "unverified", "self-consistent"]


class ParserState(TypedDict, total=False):
    """The loop's state."""

    analysis: Analysis
    """What the PDF looks like and what the CSV wants (set by analyze)."""
    code: GeneratedCode
    """The current attempt's parser source and strategy."""
    attempt: int
    """1-based number of the current attempt."""
    execution: Execution
    """The current attempt's sandbox run."""
    comparison: Comparison | None
    """The current attempt's comparison, if it got that far and there is a result.csv."""
    verification: Verification | None
    """The current attempt's self-consistency checks (issue 15), if it returned a frame."""
    feedback: Annotated[list[Feedback], operator.add]
    """Every failed attempt so far, oldest first (what refine learns from)."""
    exhausted: bool
    """The coder had nothing new to try."""
    coder_failed: bool
    """The coder gave no usable code for the current attempt (no code, LLM error)."""
    status: FinalStatus
    """Set by finalize."""
    published: str
    """Where finalize published the parser ('' if it did not)."""
    events: Annotated[list[NodeEvent], operator.add]
    """One entry per node run (progress and logs)."""
    sandbox_seconds: Annotated[float, operator.add]
    """Wall time spent inside sandboxes."""


@dataclass(frozen=True)
class ParserContext:
    """What a run is given: fixed for its whole duration."""

    run_id: str
    target: Target
    sandbox: Sandbox
    image: str
    coder: Coder
    limits: SandboxLimits
    max_attempts: int
    artefacts: ArtefactStore
    parsers_dir: str
    output: OutputSchema | None = None
    """The frame to aim for without a result.csv (settings or target.toml; issue 15)."""
    judge_image: str | None = None
    """The target's environment image when its pandas is not the controller's: results are judged there (issue 13)."""
    analysis: AnalysisLimits = AnalysisLimits()
    """Bounds on reading the statement (issue 23): it is read in a sandbox with these."""

    def labels(self, attempt: str) -> dict[str, str]:
        """The bookkeeping labels of one of the run's sandboxes."""
        return {"run_id": self.run_id, "agent": "bank_parser", "target": self.target.name, "attempt": attempt}

    cache_dir: Path | None = None
    """The runs folder, beside which summaries of statements already read are kept (None: read
    every time)."""

    def statement_reader(self) -> StatementReader:
        """Reads the target's statement in this run's sandboxes (the analysis' caps)."""
        return StatementReader(self.sandbox, self.image, self.limits, self.analysis, self.labels("analysis"),
                               scan_cache(self.cache_dir))
