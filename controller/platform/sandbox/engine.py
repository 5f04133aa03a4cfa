"""Connecting to the Docker engine, with one clear message when none answers or it lacks the runtime."""

from __future__ import annotations

from contextlib import closing

import docker
import docker.errors
import requests.exceptions

from agents.ports.errors import EngineUnavailable, first_line

START_HINT = (
    "start it (sudo systemctl start docker, or sudo service docker start) "
    "or point DOCKER_HOST at a running engine"
)


def connect(timeout: int = 60) -> docker.DockerClient:
    """Connect to the engine named by DOCKER_HOST (or the local socket) and ping it.

    Raises:
        EngineUnavailable: no engine answers.
    """
    try:
        client = docker.from_env(timeout=timeout, max_pool_size=32)
        client.ping()
        return client
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise EngineUnavailable(
            f"no Docker engine is reachable ({first_line(exc, 160)})", hint=START_HINT
        ) from exc


#: The runtime every Docker engine has: the host's kernel, no registration needed.
DEFAULT_RUNTIME = "runc"
#: How to give an engine gVisor's runtime (docs/sandbox.md#gvisor-runsc).
REGISTER_HINT = "register it with the engine: sudo make gvisor (docs/sandbox.md), or set SBX_SANDBOX_RUNTIME=runc"


class RuntimeMissing(EngineUnavailable):
    """The engine answers but does not list the configured runtime (exit 2: register it)."""


def engine_runtimes(client: docker.DockerClient) -> list[str]:
    """The OCI runtimes the engine lists (``docker info``'s Runtimes), sorted."""
    return sorted((client.info().get("Runtimes") or {}).keys())


def require_runtime(client: docker.DockerClient, runtime: str) -> None:
    """Make sure the engine knows ``runtime`` before any sandbox is created with it.

    ``runc`` is not asked about (every engine has it, and the default costs no engine call).

    Raises:
        RuntimeMissing: the engine does not list ``runtime`` (exit 2, one line saying how to register it).
        EngineUnavailable: the engine does not answer.
    """
    if runtime == DEFAULT_RUNTIME:
        return
    try:
        known = engine_runtimes(client)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise EngineUnavailable(f"no Docker engine is reachable ({first_line(exc, 160)})", hint=START_HINT) from exc
    if runtime not in known:
        raise RuntimeMissing(
            f"the Docker engine has no runtime {runtime!r} "
            f"(SBX_SANDBOX_RUNTIME; it lists {', '.join(known) or 'none'})",
            hint=REGISTER_HINT,
        )


def check_engine(runtime: str, timeout: int = 5) -> None:
    """Connect, make sure of ``runtime`` and disconnect: the service's start and its /readyz.

    Raises:
        EngineUnavailable: no engine answers, or it lacks ``runtime``.
    """
    with closing(connect(timeout=timeout)) as client:
        require_runtime(client, runtime)
