"""The platform's exceptions: one tree, so a caller can catch as wide or narrow as it needs.

    PlatformError                 base; ``exit_code`` is what the CLI returns for it
    ├── RunPaused                 the run stopped on purpose, checkpoint kept, not over (exit 75)
    │   └── AwaitingReply         ...to wait for the reply to its question (intake over the service)
    ├── UsageError                the user asked for something that cannot be done (exit 2)
    │   ├── TargetError           unknown target, bad target name, missing or corrupt input
    │   └── ConfigError           settings or a target file that do not validate
    └── EnvironmentFault          the machine, not the agent, is at fault (exit 3)
        ├── EngineUnavailable     no Docker engine answers (exit 2: the user can start one)
        ├── ImageBuildError       a sandbox image could not be built
        │   └── ImageSourceMissing   ...because its source is absent and cannot be fetched (exit 2)
        └── SandboxError          the engine failed while running a sandbox
            └── InfraFault        ...it lost the execution (container gone, engine or API server
                                  unreachable, image missing, Pod evicted, node lost): not the
                                  program's doing, so the platform retries it (bounded)

"The agent was wrong" is never an exception: a failed attempt is a result, and a loop
that gives up exits 1. Environment faults stay apart from agent failures so that success
rates are not polluted by a broken machine.
"""

from __future__ import annotations

from pydantic import ValidationError


class PlatformError(Exception):
    """Base of every error the platform raises on purpose."""

    exit_code = 3

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """Return the message and the hint as the single line shown to a user."""
        return f"{self.message} ({self.hint})" if self.hint else self.message


class RunPaused(PlatformError):
    """The run stopped on purpose before its end, with its checkpoint kept: it is not over.

    Not a failure: a loop passes it on without writing ``summary.json``, the run's observer
    records nothing, and the CLI prints the message (no ``error:``) and exits 75 (sysexits'
    EX_TEMPFAIL: try again later). ``run --resume`` continues the run.
    """

    exit_code = 75


class AwaitingReply(RunPaused):
    """A conversation's run has no reply yet for turn ``turn``: it waits (the service resumes it
    once the reply is posted)."""

    def __init__(self, turn: int, question: str) -> None:
        super().__init__(f"waiting for reply {turn}: {question[:300]}",
                         hint="send it with POST /v1/runs/RUN_ID/input")
        self.turn = turn
        self.question = question


class UsageError(PlatformError):
    """The request cannot be carried out as given; the user must change it."""

    exit_code = 2


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of ``exc``'s message (its type's name if it has none), at most ``limit`` characters;
    of a driver's error wrapped by SQLAlchemy, the driver's (SQLAlchemy's text adds the statement and its
    parameters)."""
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip()
    return (text.splitlines()[0] if text else type(original).__name__)[:limit]


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` refuses the user's input or request (a :class:`UsageError`, exit 2).

    A refusal is logged as one (``*.refused``, warning level, its one line, no frames): it
    is the expected answer to bad input, not a crash, and must not read like one in a log
    system. Anything else that ends a run keeps its traceback.
    """
    return isinstance(exc, UsageError)


class TargetError(UsageError):
    """A target is unknown, badly named, or its input files are missing or unreadable."""


class ConfigError(UsageError):
    """Settings or a target description do not validate."""


class EnvironmentFault(PlatformError):
    """The environment failed (engine, image, build), not the generated code."""

    exit_code = 3


class EngineUnavailable(EnvironmentFault):
    """No Docker engine answers; the user has to start or point to one."""

    exit_code = 2


class ImageBuildError(EnvironmentFault):
    """A sandbox image (or its base) could not be built."""


class ImageSourceMissing(ImageBuildError):
    """An image cannot be built because its source is neither here nor downloadable.

    Exit 2, like :class:`EngineUnavailable`: the user can fix it by providing the source.
    """

    exit_code = 2


class SandboxError(EnvironmentFault):
    """The container engine failed while preparing, running or collecting a sandbox."""


#: Why an execution was lost by the infrastructure (bounded: a metric label).
INFRA_REASONS = ("container_gone", "container_killed", "engine_unreachable", "engine_error", "image_missing",
                 "pod_evicted", "pod_lost", "api_unreachable")


class InfraFault(SandboxError):
    """The engine or cluster lost an execution, through nothing the program did.

    The container vanished or was killed from outside, the engine or the API server did not
    answer, the image went missing, the Pod was evicted for the node's sake or its node was
    lost. The platform runs the execution again in a fresh sandbox, a bounded number of
    times (``SBX_INFRA_RETRY__*``); what the program does (time, memory, exit status,
    output limits) is its result and never an ``InfraFault``.

    Attributes:
        reason: One of :data:`INFRA_REASONS`.
    """

    def __init__(self, reason: str, message: str, *, hint: str | None = None) -> None:
        if reason not in INFRA_REASONS:
            raise ValueError(f"unknown infrastructure fault {reason!r}")
        super().__init__(message, hint=hint)
        self.reason = reason


def invalid_setting(exc: ValidationError, prefix: str = "") -> ConfigError:
    """One line for the first setting that did not validate (``prefix``: the group it belongs to)."""
    first = exc.errors()[0]
    where = ".".join((prefix, *(str(p) for p in first["loc"])) if prefix else (str(p) for p in first["loc"]))
    return ConfigError(f"invalid setting {where}: {first['msg']}",
                       hint="see the settings in docs/reference/settings.md")
