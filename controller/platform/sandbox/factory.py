"""One factory for every sandbox backend, over a config union (as SWE-ReX's
``deployment/config.py`` + ``get_deployment``): the settings choose a config, the config
builds its backend. Adding a backend = one config class in :data:`BackendConfig` and one
branch in :func:`get_backend`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, overload

import docker
from kubernetes.client import CoreV1Api

from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.kubernetes.backend import KubernetesSandbox
from controller.platform.sandbox.kubernetes.config import KubernetesSettings
from controller.platform.sandbox.labels import this_owner
from controller.platform.sandbox.warm_offer import WarmOffer
from controller.platform.settings import Settings


@dataclass(frozen=True)
class DockerBackendConfig:
    """Containers on one Docker engine, with a pool of warm, single-use containers."""

    user: str
    pool_size: int
    pool_max_idle_seconds: float
    runtime: str = "runc"
    offer: WarmOffer | None = None
    """Warm containers a service's worker handed this process (read once, by the runner)."""
    kind: Literal["docker"] = "docker"


@dataclass(frozen=True)
class KubernetesBackendConfig:
    """One Pod per execution in a cluster's sandbox namespace (docs/kubernetes.md)."""

    user: str
    kubernetes: KubernetesSettings
    kind: Literal["kubernetes"] = "kubernetes"


BackendConfig = DockerBackendConfig | KubernetesBackendConfig
Backend = DockerSandbox | KubernetesSandbox


def backend_config(settings: Settings, *, min_pool: int = 0, offer: WarmOffer | None = None) -> BackendConfig:
    """The backend the settings choose; ``min_pool`` raises the warm pool (``check --jobs``); ``offer``:
    the warm containers a service's worker handed this run (Docker only)."""
    if settings.sandbox_backend == "kubernetes":
        return KubernetesBackendConfig(settings.sandbox_user, settings.kubernetes)
    pool = settings.pool
    size = max(pool.size, min_pool) if pool.enabled else 0
    return DockerBackendConfig(settings.sandbox_user, size, pool.max_idle_seconds, settings.sandbox_runtime, offer)


def sandbox_description(settings: Settings) -> dict[str, str]:
    """Where the settings run sandboxes, for ``/healthz``, ``summary.json`` and the console:
    the backend and its runtime (Docker's OCI runtime, or the Pods' RuntimeClass)."""
    if settings.sandbox_backend == "kubernetes":
        return {"backend": "kubernetes", "runtime": settings.kubernetes.runtime_class_name or "node default"}
    return {"backend": "docker", "runtime": settings.sandbox_runtime}


@overload
def get_backend(config: DockerBackendConfig, connection: docker.DockerClient) -> DockerSandbox: ...
@overload
def get_backend(config: KubernetesBackendConfig, connection: CoreV1Api) -> KubernetesSandbox: ...


def get_backend(config: BackendConfig, connection: docker.DockerClient | CoreV1Api) -> Backend:
    """The backend ``config`` describes, on an open engine or cluster connection (typed per
    backend by the overloads, so callers need no narrowing)."""
    if isinstance(config, KubernetesBackendConfig) and isinstance(connection, CoreV1Api):
        k8s = config.kubernetes
        return KubernetesSandbox(connection, k8s, user=config.user, owner=k8s.controller_pod or this_owner())
    if not (isinstance(config, DockerBackendConfig) and isinstance(connection, docker.DockerClient)):
        raise TypeError(f"a {config.kind} backend needs its own connection, not {type(connection).__name__}")
    return DockerSandbox(connection, user=config.user, owner=this_owner(), pool_size=config.pool_size,
                         pool_max_idle_seconds=config.pool_max_idle_seconds, runtime=config.runtime,
                         remove_in_background=True,  # drained by the session's close
                         offer=config.offer)
