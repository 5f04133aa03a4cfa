"""Declared environment -> environment image tag, resolved, downloaded and built at most once.

The provisioner is the cache's front door: it remembers what it did in this invocation
(equal declarations are resolved once), and the engine remembers images across invocations
(equal resolved sets share one tag, which is never rebuilt). Failures are returned, not
raised: a set that cannot be resolved or built fails its own submission, not the batch.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import docker

from agents.ports.environments import DeclaredEnv, Environment
from agents.ports.events import Say
from controller.platform.environments.image import EnvImageSpec, build_env_image
from controller.platform.environments.resolution import EnvironmentFailure, resolve
from controller.platform.environments.wheels import wheels_for
from controller.platform.images.base import image_exists
from controller.platform.settings import Settings


class Provisioner:
    """Turns declarations into environment images on one engine, caching at every step."""

    def __init__(self, client: docker.DockerClient, base_tag: str, arch: str, settings: Settings, say: Say) -> None:
        self._client, self._base, self._arch, self._settings, self._say = client, base_tag, arch, settings, say
        self._done: dict[tuple[DeclaredEnv, str | None], Environment] = {}
        self._lock = threading.Lock()

    def provide(self, declared: DeclaredEnv, as_of: str | None) -> Environment:
        """The environment for ``declared`` as of ``as_of``; built here only if the engine lacks it."""
        key = (declared, as_of if declared.python else None)
        with self._lock:
            if key in self._done:
                return _reused(self._done[key])
            started = time.monotonic()
            try:
                environment = self._provide(declared, as_of, started)
            except EnvironmentFailure as exc:
                environment = Environment(None, "failed", time.monotonic() - started, error=exc.one_line())
            self._done[key] = environment
            return environment

    def _provide(self, declared: DeclaredEnv, as_of: str | None, started: float) -> Environment:
        cache: Path = self._settings.cache_dir
        pins = resolve(declared.python, as_of, self._arch, cache).pins if declared.python else ()
        spec = EnvImageSpec(self._base, pins, declared.debian, self._settings.image_prefix)
        if image_exists(self._client, spec.tag):
            return Environment(spec.tag, "reused", time.monotonic() - started, pins)
        self._say(f"building environment {spec.tag} ({len(pins)} package(s))")
        wheels = wheels_for(pins, self._arch, cache) if pins else None
        build_env_image(self._client, spec, wheels, self._settings.build_timeout_seconds)
        return Environment(spec.tag, "built", time.monotonic() - started, pins)


def _reused(environment: Environment) -> Environment:
    if environment.status == "failed":
        return Environment(None, "failed", 0.0, error=environment.error)
    return Environment(environment.tag, "reused", 0.0, environment.pins)
