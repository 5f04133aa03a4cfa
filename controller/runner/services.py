"""The engine-side services of one invocation: a connected client, the sandbox backend,
images built on demand (each at most once per process) and declared environments.

:func:`open_session` is the one place services start; a session is a context manager that
removes its warm containers and releases the connection however the block ends. A session
is what agents know as the :class:`~agents.ports.run.Session` port.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field

import docker

from agents.ports.environments import DeclaredEnv, Environment, EnvironmentProvider
from agents.ports.errors import EngineUnavailable
from agents.ports.events import Say
from agents.ports.sandbox import SandboxSpec
from controller.platform.environments.provision import Provisioner
from controller.platform.environments.target import provide_target_environment
from controller.platform.images.builder import ensure_image, image_spec
from controller.platform.images.idris import IMAGE_NAME as IDRIS_IMAGE
from controller.platform.images.idris import ensure_idris_image
from controller.platform.images.wheelhouse import engine_arch
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.engine import connect, require_runtime
from controller.platform.sandbox.factory import DockerBackendConfig, backend_config, get_backend
from controller.platform.sandbox.instrumented import InstrumentedSandbox
from controller.platform.sandbox.reaper import reap_leftovers
from controller.platform.sandbox.retry import guarded
from controller.platform.sandbox.warm_offer import take_offer
from controller.platform.settings import Settings
from controller.runner.kubernetes_services import KubernetesServices
from controller.runner.no_sandbox import NoSandboxServices


@dataclass
class DockerServices:
    """A Docker client, the (instrumented) sandbox backend on it, and the images it has made sure of."""

    settings: Settings
    client: docker.DockerClient
    sandbox: InstrumentedSandbox
    say: Say
    backend: DockerSandbox
    _images: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, settings: Settings, config: DockerBackendConfig, say: Say) -> DockerServices:
        """Connect to the engine and remove leftovers of controllers that died.

        Raises:
            EngineUnavailable: no engine answers, or it lacks the configured runtime (SBX_SANDBOX_RUNTIME).
        """
        client = connect()
        try:
            require_runtime(client, config.runtime)
        except EngineUnavailable:
            client.close()
            raise
        removed = reap_leftovers(client)
        if removed:
            say(f"removed {removed} container(s)/volume(s) left behind by earlier runs")
        backend = get_backend(config, client)
        # Every execution is logged and measured, whatever command runs it.
        return cls(settings, client, guarded(backend, settings.infra_retry), say, backend)

    def image(self, name: str) -> str:
        """The tag of sandbox image ``name``, building it first if the engine lacks it."""
        if name not in self._images:
            if name == IDRIS_IMAGE:  # its build needs a source archive: refused in seconds without one
                self._images[name] = ensure_idris_image(self.client, self.settings, self.say)
            else:
                self._images[name] = ensure_image(self.client, image_spec(name, self.settings), self.settings,
                                                  self.say)
        return self._images[name]

    def prewarm(self, spec: SandboxSpec) -> None:
        """Warm containers for executions like ``spec`` while other work goes on."""
        self.backend.prewarm(spec)

    def environments(self, base_image: str) -> EnvironmentProvider:
        """Declared environments on top of ``base_image``, built on this engine at most once each."""
        arch = engine_arch(self.client.info().get("Architecture", "x86_64"))
        return Provisioner(self.client, base_image, arch, self.settings, self.say)

    def target_environment(self, base_image: str, declared: DeclaredEnv, as_of: str | None) -> Environment:
        """A target's own environment on top of ``base_image`` (its failures are the run's)."""
        return provide_target_environment(self.client, self.settings, base_image, declared, as_of, self.say)

    def close(self) -> None:
        """Remove warm containers and release the engine connection."""
        try:
            self.backend.close()
        finally:
            self.client.close()


Services = DockerServices | KubernetesServices | NoSandboxServices


@contextmanager
def open_session(settings: Settings, say: Say, *, min_pool: int = 0) -> Iterator[Services]:
    """Start the services the settings choose; close them when the block ends.

    Raises:
        EngineUnavailable / ClusterUnavailable: no engine or cluster answers (exit 2).
    """
    # A service's run: the warm containers its worker handed it (taken from the environment once, here).
    config = backend_config(settings, min_pool=min_pool, offer=take_offer())
    services: Services = (DockerServices.start(settings, config, say) if isinstance(config, DockerBackendConfig)
                          else KubernetesServices.start(settings, config, say))
    with closing(services):
        yield services
