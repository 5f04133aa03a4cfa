"""State and run context of the blueprint agent (LangGraph), seed 003.

The seed's ``AgentState`` maps onto this state as: ``agent_outputs`` → ``instructions``
(the manager's), ``findings`` (the researcher's), ``report`` (the writer's) and ``verdict``
(QA's); ``retry_count`` → ``attempt`` - 1; ``validation_passed`` → ``verdict["passed"]``;
``final_output`` → ``published``; ``status`` → ``status``. The workflow itself (the
blueprint) is fixed for a run and lives in :class:`BlueprintContext`. State holds plain
data only (dicts, lists, strings, numbers), so a checkpoint reconstructs nothing but
:class:`~agents.ports.events.NodeEvent`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypedDict

from agents.blueprint.checks import Issue, Verdict
from agents.blueprint.directives import Directive
from agents.blueprint.model import Blueprint
from agents.blueprint.research import Finding
from agents.lessons import Lesson
from agents.ports.artefacts import ArtefactStore
from agents.ports.events import NodeEvent
from agents.ports.sandbox import Sandbox, SandboxLimits

if TYPE_CHECKING:  # the LLM roles import the LLM client libraries; offline runs never load them
    from agents.blueprint.llm_roles import LLMRoles


class Feedback(TypedDict):
    """QA's failed verdict on one attempt: what the writer's retry is told."""

    attempt: int
    issues: list[Issue]


class BlueprintState(TypedDict, total=False):
    """The loop's state."""

    instructions: list[Directive]
    """The manager's directives to the writer: the blueprint's, the lessons', the strategy's."""
    lessons: list[str]
    """The lessons of earlier runs the manager applied (their texts)."""
    findings: list[Finding]
    """What the researcher's tools found (set once)."""
    attempt: int
    """1-based number of the writer's current attempt (retries + 1)."""
    report: str
    """The writer's current report."""
    verdict: Verdict
    """QA's verdict on the current report."""
    feedback: Annotated[list[Feedback], operator.add]
    """Every failed verdict so far, oldest first (what a retry is told)."""
    status: str
    """passed | failed | no-go, set by finish / partial / stop."""
    no_go: str
    """Why the manager stopped the run ('' or absent: it goes)."""
    published: str
    """Where the report was written ('' before the end)."""
    events: Annotated[list[NodeEvent], operator.add]
    """One entry per node run."""
    sandbox_seconds: Annotated[float, operator.add]
    """Wall time spent inside sandboxes (tools and validators)."""


@dataclass(frozen=True)
class BlueprintContext:
    """What a run is given: fixed for its whole duration.

    Attributes:
        run_id: The run's id (labels, artefacts).
        target: The target's name.
        blueprint: The validated blueprint (the workflow).
        data: The fixture files its tools and validators read (name → bytes).
        sandbox: Where tools and validators run.
        image: The image they run in (python-parser).
        limits: Sandbox limits of each call.
        max_attempts: Writer attempts: 1 + the retries QA may ask for (3: the seed's 2 retries).
        artefacts: The run folder.
        lessons: What earlier runs of the workflow taught (most recent first).
        roles: The LLM writer and reviewer, or None: the offline roles.
    """

    run_id: str
    target: str
    blueprint: Blueprint
    data: dict[str, bytes]
    sandbox: Sandbox
    image: str
    limits: SandboxLimits
    max_attempts: int
    artefacts: ArtefactStore
    lessons: tuple[Lesson, ...] = ()
    roles: LLMRoles | None = None

    @property
    def coder(self) -> str:
        """Who writes: ``offline`` or the model's label (summaries, history, lessons)."""
        return self.roles.name if self.roles is not None else "offline"

    def labels(self, attempt: int) -> dict[str, str]:
        """Bookkeeping labels of a sandbox call of this run."""
        return {"run_id": self.run_id, "agent": "blueprint", "target": self.target, "attempt": str(attempt)}
