"""The one interface every agent implements, so that the controller can run, check,
resume, replay and draw any agent without knowing its name.

An agent is a small object (see :mod:`agents.registry`) that knows

- its ``name`` (what ``target.toml``'s ``agent`` says), the ``target_kinds`` it accepts
  and the ``artefact`` it produces (what ``check`` takes and what an attempt leaves);
- the sandbox ``images`` it needs and how to make sure of one (:meth:`Agent.ensure_image`);
- how to prepare a run before any engine call (:meth:`Agent.plan`: a mistake is one line
  and exit 2), how to run its compiled graph (:meth:`Agent.run`) and what its summary is;
- its graph (:meth:`Agent.graph`), compiled with or without a checkpointer;
- how to ``check`` existing artefacts and how to ``replay`` one stored attempt.

The run context (sandbox, coder, target, artefact writer) is rebuilt for every process and
never enters the graph's state: state is what the checkpointer stores, so it holds plain,
serialisable data only (see :mod:`controller.checkpoints`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agents.loop import OnEvent
from controller.errors import TargetError
from controller.report import RunSummary
from controller.settings import SandboxLimits, Settings

if TYPE_CHECKING:
    from controller.checkpoints import Checkpoint
    from controller.progress import Progress
    from controller.sandbox.spec import Sandbox
    from controller.services import Services


@dataclass(frozen=True)
class RunPlan:
    """What an agent prepared for one run, before the engine is touched.

    Attributes:
        agent: The agent's name.
        target: The target's name.
        max_attempts: Attempts before the loop gives up.
        limits: The sandbox limits of every execution of the run.
        coder: The coder object (offline rules or an LLM), already checked.
        coder_name: The coder's name, for summaries and history.
        banner: What the run line says after the target's name (the input, the goal).
        notes: Lines to show before the engine starts (e.g. the LLM coder's model).
        inputs: Agent-specific inputs (the resolved target, the document text).
    """

    agent: str
    target: str
    max_attempts: int
    limits: SandboxLimits
    coder: Any
    coder_name: str
    banner: str
    notes: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckRequest:
    """``controller check``: which target, which artefacts, how many at once, and every
    command-line option as given (``options``), for options only one agent understands."""

    target: str
    paths: list[str]
    jobs: int | None
    options: dict[str, Any] = field(default_factory=dict)


def collect_files(paths: list[str], suffix: str, noun: str) -> list[Path]:
    """Expand ``check``'s files and folders into the ``suffix`` files to check, in a stable order.

    Raises:
        TargetError: a path does not exist, or no such file was found.
    """
    hint = f"pass {suffix} files or folders that hold them"
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob(f"*{suffix}") if p.is_file() and "__pycache__" not in p.parts)
        elif path.is_file():
            found.append(path)
        else:
            raise TargetError(f"no {noun} file {path}", hint=hint)
    if not found:
        raise TargetError(f"no {suffix} files in {', '.join(paths)}", hint=hint)
    return list(dict.fromkeys(found))


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


@runtime_checkable
class Agent(Protocol):
    """What the controller needs of an agent (both agents implement it; see the module doc)."""

    name: str
    target_kinds: tuple[str, ...]
    artefact: str
    images: tuple[str, ...]

    def plan(self, target: str, settings: Settings, max_attempts: int | None) -> RunPlan:
        """Validate the target and prepare the run; raises a PlatformError on bad input."""

    def ensure_image(self, services: Services, name: str, say: Any) -> str:
        """The tag of sandbox image ``name`` (one of :attr:`images`), built if missing."""

    def prewarm(self, services: Services, image: str, plan: RunPlan) -> None:
        """Start warm containers for the run's first execution (or do nothing)."""

    def graph(self, max_attempts: int, checkpointer: Any = None) -> Any:
        """The compiled LangGraph graph, with ``checkpointer`` if given."""

    def run(self, plan: RunPlan, *, run_id: str, settings: Settings, sandbox: Sandbox, image: str,
            on_event: OnEvent, checkpoint: Checkpoint | None) -> RunSummary:
        """Build the run context, stream the graph to its end, write and return the summary."""

    def checkpoint_types(self) -> tuple[Any, ...]:
        """The state's root type plus any restorers: what a checkpoint may reconstruct."""

    def check(self, request: CheckRequest, settings: Settings, progress: Progress) -> int:
        """Run existing artefacts through the loop's sandbox and judgement; the exit code."""

    def replay(self, sandbox: Sandbox, image: str, run_dir: Path, record: dict[str, Any],
               attempt: int) -> ReplayOutcome:
        """Run a stored attempt's artefact again with the recorded limits and image."""

    def plan_record(self, plan: RunPlan) -> dict[str, Any]:
        """Agent-specific facts the run record keeps for resume and replay."""

    def known_nodes(self) -> tuple[str, ...]:
        """The graph's node names (metrics show them as zero before any run)."""

    def failure_reasons(self) -> tuple[str, ...]:
        """Why an attempt can fail, as summaries and metrics label it."""
