"""The one interface every agent implements, so that the controller can run, check,
resume, replay and draw any agent without knowing its name.

An agent is a small object registered in :mod:`agents.registry`. It states what it needs as
the ports of :mod:`agents.ports` and imports nothing of ``controller/``:

- :meth:`Agent.plan` validates a target and returns a :class:`~agents.ports.run.Plan`
  (images, environment, coder, limits) before any engine call: a mistake is one line, exit 2;
- :meth:`Agent.run` streams its graph with the :class:`~agents.ports.run.RunContext` the
  runner built and returns the run's summary;
- :meth:`Agent.graph` is its compiled LangGraph graph (Mermaid, resume);
- :meth:`Agent.check` and :meth:`Agent.replay` run existing or stored artefacts again;
- :attr:`Agent.info` is what never changes: target kinds, artefact, images, the state
  schema for the checkpoint allowlist, node names and failure reasons for the metrics.

The run context is rebuilt for every process and never enters the graph's state: state is
what the checkpointer stores, so it holds plain, serialisable data only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agents.ports.config import AgentConfig
from agents.ports.editor import DocumentEditor
from agents.ports.outcome import RunSummary
from agents.ports.run import CheckContext, CheckRequest, Plan, ReplayOutcome, RunContext
from agents.ports.sandbox import Sandbox, SandboxLimits, SandboxSpec


@dataclass(frozen=True)
class RunSections:
    """What a run page shows of this agent's runs beyond the parts every run has, as files the run
    writes in its folder; the console reads them, and knows no agent by name.

    Attributes:
        report: A Markdown report: the run folder's own (final), else the last attempt's of that name.
        verdicts: A JSON verdict per attempt (``attempts/<n>/<verdicts>``): ``passed``, ``issues``
            (each ``code``, ``message``, ``fix.text``) and ``validators``.
        lessons: The Markdown lessons the run was given.
        steps: Its nodes' ends are listed as role steps (node, attempt, outcome, detail).
    """

    report: str = ""
    verdicts: str = ""
    lessons: str = ""
    steps: bool = False


@dataclass(frozen=True)
class AgentInfo:
    """What the controller may know of an agent without running it.

    Attributes:
        target_kinds: The kinds of target it accepts (for ``graph`` and docs).
        artefact: What ``check`` takes and an attempt leaves (``parser``, ``module``).
        images: The sandbox images (folders of ``sandbox_images/``) it runs in.
        state_types: The state's root type plus any restorers: what a checkpoint may reconstruct.
        nodes: The graph's node names (metrics show them as zero before any run).
        failure_reasons: Why an attempt can fail, as summaries and metrics label it.
        sample: One execution as the agent makes it (image tag, limits, labels → spec), for
            ``k8s render``'s sample Pod; None when the agent has no sample to show.
        replies: It converses: a run can take its replies as they come (``--interactive``, or
            over the service, ``AgentConfig.await_replies``) instead of from the target's script.
        memory: It keeps a graph memory (:mod:`agents.ports.memory`): a run's, or its subject's
            (``run --subject NAME``, recorded as ``subject`` in run.json); ``memory RUN_ID`` reads it.
    """

    target_kinds: tuple[str, ...]
    artefact: str
    images: tuple[str, ...]
    state_types: tuple[Any, ...]
    nodes: tuple[str, ...]
    failure_reasons: tuple[str, ...]
    sample: Callable[[str, SandboxLimits, Mapping[str, str]], SandboxSpec] | None = None
    replies: bool = False
    memory: bool = False
    editor: DocumentEditor | None = None
    """Its target is one document a person may write in the console's editor (the blueprint)."""
    sections: RunSections | None = None
    """The parts of its run page that are its own (:class:`RunSections`); None: only the common ones."""


@runtime_checkable
class Agent(Protocol):
    """What the controller needs of an agent (see the module doc)."""

    name: str
    info: AgentInfo

    def plan(self, target: str, config: AgentConfig, max_attempts: int | None) -> Plan:
        """Validate the target and prepare the run; raises a PlatformError on bad input."""
        ...

    def run(self, plan: Plan, ctx: RunContext) -> RunSummary:
        """Stream the graph to its end, write and return the summary."""
        ...

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """The compiled LangGraph graph, with ``checkpointer`` if given."""
        ...

    def check(self, request: CheckRequest, ctx: CheckContext) -> int:
        """Run existing artefacts through the loop's sandbox and judgement; the exit code."""
        ...

    def replay(self, sandbox: Sandbox, image: str, run_dir: Path, record: dict[str, Any],
               attempt: int) -> ReplayOutcome:
        """Run a stored attempt's artefact again with the recorded limits and image."""
        ...
