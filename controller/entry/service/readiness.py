"""The /readyz check that the sandbox images the registered agents need are in the engine.

Kubelets and load balancers probe every few seconds, and each answer costs an engine
connection and one inspection per image; so the answer (present, or the error saying what
is missing) is kept for :data:`IMAGES_TTL_SECONDS` and shared by concurrent probes. A built
image is seen at most that long after ``python -m controller images`` ends.

On the Kubernetes backend there is no engine to ask: nodes pull the images from the registry
when a sandbox Pod starts, and a Pod whose image cannot be pulled ends its run at once with
``SandboxImageUnavailable`` (docs/kubernetes.md). The check is not made there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import closing

from agents.ports.errors import PlatformError
from agents.registry import AGENTS
from controller.platform.images.presence import check_present, required_tags
from controller.platform.sandbox.engine import connect
from controller.platform.settings import Settings

#: How long one answer of the images check is reused.
IMAGES_TTL_SECONDS = 5.0
#: The engine connection's timeout for one check (the probe's own timeout is 5 s).
ENGINE_TIMEOUT_SECONDS = 3


class CachedCheck:
    """A check (returns, or raises a :class:`PlatformError`) run at most once per ``ttl`` seconds."""

    def __init__(self, check: Callable[[], None], ttl: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._check = check
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._checked_at: float | None = None
        self._error: PlatformError | None = None

    def __call__(self) -> None:
        """Raise the last answer's error, asking again only once it is ``ttl`` old."""
        with self._lock:
            now = self._clock()
            if self._checked_at is None or now - self._checked_at >= self._ttl:
                self._error = self._run()
                self._checked_at = self._clock()
            error = self._error
        if error is not None:
            raise error

    def _run(self) -> PlatformError | None:
        try:
            self._check()
        except PlatformError as exc:
            return exc
        return None


def docker_images_check(tags: list[str]) -> Callable[[], None]:
    """A check that the Docker engine holds every image in ``tags``."""

    def check() -> None:
        with closing(connect(timeout=ENGINE_TIMEOUT_SECONDS)) as client:
            check_present(client, tags)

    return check


def no_images_check() -> None:
    """The Kubernetes backend's nodes pull images themselves: nothing to ask here."""


def images_probe(settings: Settings) -> Callable[[], None]:
    """The cached /readyz images check for the backend the settings choose."""
    if settings.sandbox_backend != "docker":
        return no_images_check
    names = [name for agent in AGENTS.values() for name in agent.info.images]
    return CachedCheck(docker_images_check(required_tags(names, settings)), IMAGES_TTL_SECONDS)
