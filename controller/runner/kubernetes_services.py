"""What one CLI invocation uses when ``SBX_SANDBOX_BACKEND=kubernetes``: the same surface as
:class:`controller.runner.services.DockerServices` (``sandbox``, ``image``, ``prewarm``, ``close``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from kubernetes.client import CoreV1Api

from agents.ports.errors import UsageError
from agents.ports.events import Say
from agents.ports.sandbox import SandboxSpec
from controller.platform.images.builder import image_spec
from controller.platform.sandbox.factory import KubernetesBackendConfig, get_backend
from controller.platform.sandbox.instrumented import InstrumentedSandbox
from controller.platform.sandbox.kubernetes.backend import KubernetesSandbox
from controller.platform.sandbox.kubernetes.client import connect
from controller.platform.sandbox.kubernetes.podspec import now
from controller.platform.sandbox.kubernetes.reaper import reap_expired
from controller.platform.sandbox.retry import guarded
from controller.platform.settings import Settings


@dataclass
class KubernetesServices:
    """A CoreV1Api, the (instrumented) Pod backend on it, and image references by name."""

    settings: Settings
    api: CoreV1Api
    sandbox: InstrumentedSandbox
    say: Say
    backend: KubernetesSandbox

    @classmethod
    def start(cls, settings: Settings, config: KubernetesBackendConfig, say: Say) -> KubernetesServices:
        """Connect, check access to the sandbox namespace and delete expired leftovers.

        Raises:
            ClusterUnavailable: no cluster answers or the namespace is not ours (exit 2).
        """
        k8s = config.kubernetes
        api = connect(k8s)
        removed = reap_expired(api, k8s.namespace, now(), k8s.request_timeout_seconds)
        if removed:
            say(f"removed {removed} sandbox pod(s)/configmap(s) left behind by earlier runs")
        backend = get_backend(config, api)
        return cls(settings, api, guarded(backend, settings.infra_retry), say, backend)

    @property
    def client(self) -> NoReturn:
        """Commands that need a Docker engine (bench, building the idris2 image) stop here, in one line."""
        raise UsageError("this command needs a Docker engine, not the Kubernetes backend",
                         hint="run it with SBX_SANDBOX_BACKEND=docker; build and push images with make k8s-images")

    def image(self, name: str) -> str:
        """The registry reference of sandbox image ``name`` (built and pushed by ``make k8s-images``)."""
        k8s = self.settings.kubernetes
        return k8s.image_ref(k8s.image_tags.get(name) or image_spec(name, self.settings).tag)

    def prewarm(self, spec: SandboxSpec) -> None:
        """No warm pool on Kubernetes: every Pod is made for its execution."""

    def environments(self, base_image: str) -> NoReturn:
        """Declared environments are built on a Docker engine: stop here, in one line."""
        raise UsageError("declared environments need a Docker engine, not the Kubernetes backend",
                         hint="check submissions with SBX_SANDBOX_BACKEND=docker")

    def target_environment(self, base_image: str, declared: object, as_of: str | None) -> NoReturn:
        """A target's [environment] is built on a Docker engine too: the same one line."""
        self.environments(base_image)

    def close(self) -> None:
        """Release the API connection."""
        self.api.api_client.close()
