"""Services for a plan that executes nothing (``Plan.image is None``): no engine, no image.

An agent whose loop runs no generated or supplied code (the intake agent: it only reads
replies) should not need a Docker engine or a sandbox image to run. Its session connects to
nothing; should the agent ask for a sandbox anyway, that is a bug in the agent, reported as
one line (a :class:`SandboxError`), never a silent execution on the host.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.ports.environments import DeclaredEnv, Environment, EnvironmentProvider
from agents.ports.errors import SandboxError
from agents.ports.events import Say
from agents.ports.sandbox import SandboxResult, SandboxSpec

_HINT = "an agent that executes code must name its image in its plan"


class NoSandbox:
    """The sandbox of a session that has none: every execution is refused."""

    def run(self, spec: SandboxSpec) -> SandboxResult:
        raise SandboxError("this run's plan named no sandbox image, yet it asked to execute code", hint=_HINT)


@dataclass
class NoSandboxServices:
    """What the runner needs of a session, for a plan that executes nothing."""

    say: Say
    sandbox: NoSandbox = field(default_factory=NoSandbox)

    def image(self, name: str) -> str:
        raise SandboxError(f"this run has no sandbox session; cannot provide image {name!r}", hint=_HINT)

    def prewarm(self, spec: SandboxSpec) -> None:
        """Nothing to warm."""

    def environments(self, base_image: str) -> EnvironmentProvider:
        raise SandboxError("this run has no sandbox session; it cannot build environments", hint=_HINT)

    def target_environment(self, base_image: str, declared: DeclaredEnv, as_of: str | None) -> Environment:
        raise SandboxError("this run has no sandbox session; it cannot build environments", hint=_HINT)

    def close(self) -> None:
        """Nothing to release."""
