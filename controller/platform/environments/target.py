"""A target's own environment (``[environment]`` of ``data/<name>/target.toml``) for ``run``.

The environment image is built by the same path as a submission's (uv resolution, host
wheelhouse, image FROM python-parser, tag = hash of the resolved set, reused when the engine
has it). Unlike a submission's, a target's failure is the run's: a set uv cannot resolve is
the user's declaration (exit 2, :class:`ConfigError`); a download or image build that fails
is the machine's (exit 3, :class:`ImageBuildError`). Which image judges a result is the
agent's decision (it gets the resolved pins back).
"""

from __future__ import annotations

import time

import docker

from agents.ports.environments import DeclaredEnv, Environment
from agents.ports.errors import ConfigError, ImageBuildError
from agents.ports.events import Say
from controller.platform.environments.image import EnvImageSpec, build_env_image
from controller.platform.environments.resolution import EnvironmentFailure, resolve
from controller.platform.environments.wheels import wheels_for
from controller.platform.images.base import image_exists
from controller.platform.images.wheelhouse import engine_arch
from controller.platform.settings import Settings


def provide_target_environment(client: docker.DockerClient, settings: Settings, base_tag: str,
                               declared: DeclaredEnv, as_of: str | None, say: Say) -> Environment:
    """Resolve, download and build (or reuse) the target's environment image.

    Raises:
        ConfigError: the declared set cannot be resolved (exit 2).
        ImageBuildError: downloading its wheels or building its image failed (exit 3).
    """
    started = time.monotonic()
    arch = engine_arch(client.info().get("Architecture", "x86_64"))
    cache = settings.cache_dir
    try:
        pins = resolve(declared.python, as_of, arch, cache).pins
    except EnvironmentFailure as exc:
        raise ConfigError(f"the target's [environment] {exc.message}",
                          hint="fix python = [...] in target.toml; see docs/environments.md") from exc
    spec = EnvImageSpec(base_tag, pins, declared.debian, settings.image_prefix)
    if image_exists(client, spec.tag):
        say(f"environment {spec.tag}: reused ({len(pins)} package(s))")
        return Environment(spec.tag, "reused", time.monotonic() - started, pins)
    say(f"building environment {spec.tag} ({len(pins)} package(s), {len(declared.debian)} Debian)")
    try:
        build_env_image(client, spec, wheels_for(pins, arch, cache), settings.build_timeout_seconds)
    except EnvironmentFailure as exc:
        raise ImageBuildError(f"the target's environment: {exc.message}", hint=exc.hint) from exc
    say(f"environment {spec.tag}: built in {time.monotonic() - started:.0f} s")
    return Environment(spec.tag, "built", time.monotonic() - started, pins)
