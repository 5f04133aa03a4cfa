"""The engine-side services one CLI invocation uses: a connected client, the sandbox
backend, and images built on demand (each at most once per process)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import docker

from controller.images.builder import ensure_image, image_spec
from controller.sandbox.docker import DockerSandbox
from controller.sandbox.engine import connect
from controller.sandbox.instrumented import InstrumentedSandbox
from controller.sandbox.labels import this_owner
from controller.sandbox.reaper import reap_leftovers
from controller.sandbox.spec import SandboxSpec
from controller.settings import Settings

Say = Callable[[str], None]


@dataclass
class Services:
    """A Docker client, the (instrumented) sandbox backend on it, and the images it has made sure of."""

    settings: Settings
    client: docker.DockerClient
    sandbox: InstrumentedSandbox
    say: Say
    backend: DockerSandbox
    _images: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, settings: Settings, say: Say) -> Services:
        """Connect to the engine and remove leftovers of controllers that died.

        Raises:
            EngineUnavailable: no engine answers.
        """
        if settings.sandbox_backend == "kubernetes":  # Pods in a cluster: docs/kubernetes.md
            from controller.sandbox.kubernetes.services import KubernetesServices

            return KubernetesServices.start(settings, say)  # type: ignore[return-value]
        client = connect()
        removed = reap_leftovers(client)
        if removed:
            say(f"removed {removed} container(s)/volume(s) left behind by earlier runs")
        # Every execution is logged and measured, whatever command runs it.
        pool = settings.pool
        backend = DockerSandbox(
            client, user=settings.sandbox_user, owner=this_owner(),
            pool_size=pool.size if pool.enabled else 0, pool_max_idle_seconds=pool.max_idle_seconds,
            remove_in_background=True,  # drained by close() below
        )
        sandbox = InstrumentedSandbox(backend)
        return cls(settings, client, sandbox, say, backend)

    def image(self, name: str) -> str:
        """The tag of sandbox image ``name``, building it first if the engine lacks it."""
        if name not in self._images:
            spec = image_spec(name, self.settings)
            self._images[name] = ensure_image(self.client, spec, self.settings, self.say)
        return self._images[name]

    def prewarm(self, spec: SandboxSpec) -> None:
        """Warm containers for executions like ``spec`` while other work goes on."""
        self.backend.prewarm(spec)

    def close(self) -> None:
        """Remove warm containers and release the engine connection."""
        try:
            self.backend.close()
        finally:
            self.client.close()
