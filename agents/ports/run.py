"""The run port: what an agent plans (pure), and what the controller hands it to run.

``Agent.plan`` returns a :class:`Plan` (validated target, coder, limits, which sandbox image
and which declared environment it needs) before any engine call; the runner makes sure of
the images and environment, opens the checkpoint and the artefact store, and calls
``Agent.run(plan, ctx)`` with a :class:`RunContext`. ``check`` and ``replay`` get a
:class:`Session`: the sandbox, images built on demand, warm containers, environments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agents.ports.artefacts import ArtefactStore
from agents.ports.config import AgentConfig
from agents.ports.environments import DeclaredEnv, Environment, EnvironmentProvider
from agents.ports.errors import SandboxError
from agents.ports.events import OnEvent, Say
from agents.ports.memory import MemoryStores, NoMemoryStores
from agents.ports.sandbox import Sandbox, SandboxLimits, SandboxSpec


@dataclass(frozen=True)
class Follows:
    """A conversation that continues another target's with the same subject (target.toml ``follows``).

    The runner (and the service, when it accepts the run) refuses the run before anything runs
    when ``subject`` is None or its memory holds no conversation of ``target``.
    """

    target: str
    subject: str | None


@dataclass(frozen=True)
class Plan:
    """What an agent prepared for one run, before the engine is touched.

    Attributes:
        agent: The agent's name.
        target: The target's name.
        max_attempts: Attempts before the loop gives up (``--max-attempts``, target.toml, config).
        limits: The sandbox limits of every execution of the run (target.toml over the config).
        coder: The coder object (offline rules or an LLM), already checked.
        coder_name: The coder's name, for summaries and history.
        banner: What the run line says after the target's name (the input, the goal).
        image: The sandbox image (a folder of ``sandbox_images/``) the run executes in; None
            for a loop that executes nothing (no engine is needed then).
        environment: A declared environment to build on top of ``image`` (target.toml), or None.
        environment_as_of: Resolve the environment's unpinned requirements as of this date.
        prewarm: The spec of the first execution, given the image tag, for a warm container.
        notes: Lines to show before the engine starts (e.g. the LLM coder's model).
        record: Agent-specific facts ``run.json`` keeps for resume and replay.
        inputs: Agent-specific inputs (the resolved target, the document text).
        follows: The conversation this run continues, which must be in its subject's memory; None: none.
    """

    agent: str
    target: str
    max_attempts: int
    limits: SandboxLimits
    coder: Any
    coder_name: str
    banner: str
    image: str | None
    environment: DeclaredEnv | None = None
    environment_as_of: str | None = None
    prewarm: Callable[[str], SandboxSpec] | None = None
    notes: tuple[str, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict)
    inputs: Mapping[str, Any] = field(default_factory=dict)
    follows: Follows | None = None


class CheckpointHandle(Protocol):
    """Where a run's graph checkpoints (a LangGraph saver and its thread), and whether it resumes."""

    @property
    def saver(self) -> Any:
        """The LangGraph checkpointer to compile the graph with."""
        ...

    @property
    def resume(self) -> bool:
        """Whether this process continues a run from its last checkpoint."""
        ...

    @property
    def config(self) -> dict[str, Any]:
        """The ``configurable`` part of a graph config naming this run's thread."""
        ...


def _no_other_images(name: str) -> str:
    raise SandboxError(f"this run was given no way to make sure of image {name!r}",
                       hint="the runner passes image_of; a test must pass one too")


@dataclass(frozen=True)
class RunContext:
    """What the runner hands an agent's ``run``: everything rebuilt per process, never in state.

    Attributes:
        run_id: The run's id.
        config: The agent config (folders, coder, model).
        sandbox: Runs one execution in a throwaway container.
        image: The tag of the run's image (the plan's image, or its environment's).
        environment: The environment built from the plan's declaration, or None.
        artefacts: The run folder's store.
        on_event: Called per finished node.
        checkpoint: The run's checkpoint, or None (tests).
        say: A status line before the loop starts (e.g. where results are judged).
        image_of: The tag of another sandbox image by name, built first if missing (an agent
            that reads a user's file in one image and checks its work in another).
        memory: Where graph memories live (a run's, a subject's): the memory port.
    """

    run_id: str
    config: AgentConfig
    sandbox: Sandbox
    image: str
    artefacts: ArtefactStore
    on_event: OnEvent
    environment: Environment | None = None
    checkpoint: CheckpointHandle | None = None
    say: Say = field(default=lambda _line: None)
    image_of: Callable[[str], str] = field(default=_no_other_images)
    memory: MemoryStores = field(default_factory=NoMemoryStores)


class Session(Protocol):
    """The platform for one ``check`` or ``replay``: a sandbox, images, warm containers, environments."""

    @property
    def sandbox(self) -> Sandbox:
        """Runs one execution in a throwaway container."""
        ...

    def image(self, name: str) -> str:
        """The tag of sandbox image ``name``, built first if the engine lacks it."""
        ...

    def prewarm(self, spec: SandboxSpec) -> None:
        """Warm containers for executions like ``spec`` while other work goes on."""
        ...

    def environments(self, base_image: str) -> EnvironmentProvider:
        """Declared environments built on top of ``base_image`` (each at most once)."""
        ...


#: Opens a session with at least this many warm containers per kind of execution.
OpenSession = Callable[[int], AbstractContextManager[Session]]


@dataclass(frozen=True)
class CheckRequest:
    """``controller check``: which target, which artefacts, how many at once, and every
    command-line option as given (``options``), for options only one agent understands."""

    target: str
    paths: list[str]
    jobs: int | None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckVerdict:
    """One checked artefact's verdict, as ``check``'s table shows it (for a machine: the service)."""

    name: str
    status: str  # pass | self-consistent | fail | unverified
    rows: int | None
    seconds: float
    first_difference: str


def _no_record(verdicts: list[CheckVerdict]) -> None:
    """Verdicts nobody asked to keep (a plain ``check``: its table is the record)."""


@dataclass(frozen=True)
class CheckContext:
    """What ``check`` gets: the agent config, a status line, a way to open a session, and where
    to hand its verdicts (the service keeps them in the check's summary.json)."""

    config: AgentConfig
    say: Say
    open_session: OpenSession
    record: Callable[[list[CheckVerdict]], None] = _no_record
    memory: MemoryStores = field(default_factory=NoMemoryStores)


@dataclass(frozen=True)
class ReplayOutcome:
    """A stored attempt's recorded outcome and the outcome of running it again.

    Both are flat dicts of the facts that define an outcome (failure kind, exit code, a
    hash of the result); the controller compares them and shows a diff when they differ,
    with a diff of the two outputs (result document, transcript) when those differ too.
    """

    artefact: Path
    recorded: dict[str, Any]
    replayed: dict[str, Any]
    notes: tuple[str, ...] = ()
    recorded_output: str = ""
    replayed_output: str = ""

    @property
    def same(self) -> bool:
        """Whether running the artefact again gave the recorded outcome."""
        return self.recorded == self.replayed
