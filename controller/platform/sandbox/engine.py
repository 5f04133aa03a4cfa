"""Connecting to the Docker engine, with one clear message when none answers."""

from __future__ import annotations

import docker
import docker.errors
import requests.exceptions

from agents.ports.errors import EngineUnavailable

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
            f"no Docker engine is reachable ({_reason(exc)})", hint=START_HINT
        ) from exc


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]
