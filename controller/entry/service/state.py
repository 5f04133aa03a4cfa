"""What the routes share: the settings, the store, the draining flag and the readiness probes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import structlog
from starlette.requests import Request

from agents.ports.errors import EngineUnavailable
from controller.entry.service.notify import RunSignals
from controller.platform.sandbox.engine import (
    DEFAULT_RUNTIME,
    RuntimeMissing,
    check_engine,
    connect,
)
from controller.platform.settings import Settings
from controller.platform.store import RunStore

log = structlog.get_logger("sandloop.service")


def docker_probe() -> None:
    """Raise :class:`~agents.ports.errors.EngineUnavailable` unless the Docker engine answers."""
    connect(timeout=5).close()


def runtime_probe(runtime: str) -> Callable[[], None]:
    """The Docker engine answers and lists ``runtime`` (SBX_SANDBOX_RUNTIME)."""
    return docker_probe if runtime == DEFAULT_RUNTIME else partial(check_engine, runtime)


def require_engine_runtime(settings: Settings) -> None:
    """At the service's start: an engine that answers must list SBX_SANDBOX_RUNTIME (one answering
    later is checked by /readyz and by each run).

    Raises:
        RuntimeMissing: the engine answers without the runtime (exit 2, how to register it).
    """
    if settings.sandbox_backend != "docker":
        return
    try:
        runtime_probe(settings.sandbox_runtime)()
    except RuntimeMissing:
        raise
    except EngineUnavailable as exc:
        log.warning("service.engine_unavailable", reason=exc.one_line())


def no_probe() -> None:
    """The Kubernetes backend's engine is not probed yet (its runs say so when it fails)."""


def engine_probe(settings: Settings) -> Callable[[], None]:
    """The /readyz check of the sandbox engine the settings choose."""
    return runtime_probe(settings.sandbox_runtime) if settings.sandbox_backend == "docker" else no_probe


@dataclass
class ServiceState:
    """The service's shared state (``app.state.service``)."""

    settings: Settings
    store: RunStore
    engine_probe: Callable[[], None] = docker_probe
    #: /readyz's images check (:func:`controller.entry.service.readiness.images_probe`); none by default.
    images_probe: Callable[[], None] = no_probe
    draining: threading.Event = field(default_factory=threading.Event)
    #: Set on each accepted run, so an idle worker of this process claims it at once, not at its next poll.
    submitted: threading.Event = field(default_factory=threading.Event)
    #: Wakes a run's event streams when a worker of this process wrote to it or ended it.
    signals: RunSignals = field(default_factory=RunSignals)


def state_of(request: Request) -> ServiceState:
    """The service's shared state (the API's and the console's)."""
    state: ServiceState = request.app.state.service
    return state
