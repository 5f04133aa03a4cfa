"""State and run context of the Idris domain-model agent (LangGraph), seed 004.

The seed's ``AgentState`` maps onto this state as: ``analysis`` → ``analysis``,
``idris_code`` → ``code``, ``compile_attempts`` → ``attempt``, ``last_error`` →
``check`` (structured, with the raw transcript), ``compile_success`` → ``status``,
``final_module_path`` → ``published``; the inputs (``project_name``, ``document_type``,
``reference_docs``) are fixed for a run and live in :class:`IdrisContext`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, TypedDict

from agents.idris.coder import CheckFeedback, IdrisCode, IdrisCoder
from agents.idris.document import DocumentText
from agents.idris.model import DocumentAnalysis
from agents.idris.typecheck import CheckResult
from agents.ports.artefacts import ArtefactStore
from agents.ports.events import NodeEvent
from agents.ports.sandbox import Sandbox, SandboxLimits

FinalStatus = Literal["passed", "failed"]


class IdrisState(TypedDict, total=False):
    """The loop's state."""

    analysis: DocumentAnalysis
    """What the document holds (set by analyze)."""
    code: IdrisCode
    """The current module."""
    attempt: int
    """1-based number of the current check (the seed's compile_attempts)."""
    check: CheckResult
    """The current attempt's check."""
    history: Annotated[list[CheckFeedback], operator.add]
    """Every failed check so far, oldest first (what fix learns from)."""
    exhausted: bool
    """The coder had nothing new to try."""
    status: FinalStatus
    """Set by finish / fail."""
    published: str
    """Where finish published the module ('' if it did not)."""
    events: Annotated[list[NodeEvent], operator.add]
    """One entry per node run."""
    sandbox_seconds: Annotated[float, operator.add]
    """Wall time spent inside sandboxes."""


@dataclass(frozen=True)
class IdrisContext:
    """What a run is given: fixed for its whole duration.

    Attributes:
        run_id: The run's id (labels, artefacts).
        target: The target's name.
        project: The project name: the module is ``Domains.<project>``.
        document_type: What the target says the document is (contract, invoice, ...).
        document: The document's text, read before the run started.
        sandbox: Where checks run.
        image: The idris2 image (or a stand-in with the same entrypoint) to check with.
        coder: Writes and repairs the module.
        limits: Sandbox limits of each check (timeout 30 s by default).
        max_attempts: Checks before the loop gives up (5 by default).
        artefacts: The run folder.
        output_dir: Where a module that type-checks is published.
    """

    run_id: str
    target: str
    project: str
    document_type: str
    document: DocumentText
    sandbox: Sandbox
    image: str
    coder: IdrisCoder
    limits: SandboxLimits
    max_attempts: int
    artefacts: ArtefactStore
    output_dir: Path

    @property
    def module(self) -> str:
        """``Domains.<project>``."""
        return f"Domains.{self.project}"
