"""A target's own environment (``[environment]`` of ``data/<name>/target.toml``) for ``run``.

The environment image is built by the same path as a submission's
(:mod:`controller.environments`: uv resolution, host wheelhouse, image FROM python-parser,
tag = hash of the resolved set, reused when the engine has it). Unlike a submission's, a
target's failure is the run's: a set uv cannot resolve is the user's declaration (exit 2,
:class:`ConfigError`); a download or image build that fails is the machine's (exit 3,
:class:`ImageBuildError`).

When the environment's pandas is not the controller's, each attempt's result is judged in
a second container of the environment (:mod:`agents.bank_parser.env_judge`: it receives the
result and the expected CSV, never the parser; the parser's container never sees the CSV).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pandas as pd

from agents.bank_parser.compare import Comparison
from agents.bank_parser.env_judge import Verdict, judge_in_environment, judge_spec
from agents.bank_parser.evaluate import RESULT_FILE, Execution
from controller.environments.image import IMAGE_NAME as ENV_IMAGE_NAME
from controller.environments.image import EnvImageSpec, build_env_image
from controller.images.base import image_exists
from controller.environments.resolution import EnvironmentFailure, resolve
from controller.environments.wheels import wheels_for
from controller.errors import ConfigError, ImageBuildError
from controller.images.wheelhouse import engine_arch
from controller.sandbox.spec import Sandbox
from controller.settings import SandboxLimits
from controller.target_config import TargetEnvironment


@dataclasses.dataclass(frozen=True)
class TargetImage:
    """The run's image, and the image to judge in (None: judge on the host, same pandas)."""

    tag: str
    judge_image: str | None
    pandas: str


def provide_target_environment(services: Any, base_tag: str, environment: TargetEnvironment, say: Any) -> TargetImage:
    """Resolve, download and build (or reuse) the target's environment image.

    Raises:
        ConfigError: the declared set cannot be resolved (exit 2).
        ImageBuildError: downloading its wheels or building its image failed (exit 3).
    """
    started = time.monotonic()
    declared = environment.declared()
    arch = engine_arch(services.client.info().get("Architecture", "x86_64"))
    cache = services.settings.cache_dir
    try:
        pins = resolve(declared.python, environment.as_of, arch, cache).pins
    except EnvironmentFailure as exc:
        raise ConfigError(f"the target's [environment] {exc.message}",
                          hint="fix python = [...] in target.toml; see docs/environments.md") from exc
    spec = EnvImageSpec(base_tag, pins, declared.debian, services.settings.image_prefix)
    if image_exists(services.client, spec.tag):
        say(f"environment {spec.tag}: reused ({len(pins)} package(s))")
    else:
        say(f"building environment {spec.tag} ({len(pins)} package(s), {len(declared.debian)} Debian)")
        try:
            build_env_image(services.client, spec, wheels_for(pins, arch, cache),
                            services.settings.build_timeout_seconds)
        except EnvironmentFailure as exc:
            raise ImageBuildError(f"the target's environment: {exc.message}", hint=exc.hint) from exc
        say(f"environment {spec.tag}: built in {time.monotonic() - started:.0f} s")
    env_pandas = next((p.split("==", 1)[1] for p in pins if p.lower().startswith("pandas==")), "?")
    judge = None if env_pandas == pd.__version__ else spec.tag
    if judge:
        say(f"environment pandas {env_pandas} (controller: {pd.__version__}): results are judged in the environment")
    return TargetImage(spec.tag, judge, env_pandas)


def resumed_judge_image(image: str) -> str | None:
    """On ``run --resume`` (the run's recorded image): judge in it when it is an environment image.

    Judging in the environment is right whatever its pandas (the same pandas ran the parser);
    it only costs a second container when the pandas is the controller's.
    """
    return image if f"/{ENV_IMAGE_NAME}:" in image else None


def judged_in_environment(sandbox: Sandbox, image: str, execution: Execution, expected_csv: bytes,
                          host: Comparison, limits: SandboxLimits, labels: dict[str, str]) -> tuple[Comparison, Verdict]:
    """The host's comparison with its verdict replaced by the environment's judge's.

    The host's comparison keeps its details (shapes, cells) for the coder's feedback; whether
    the attempt passed is what ``DataFrame.equals`` says under the environment's pandas.
    """
    verdict = judge_in_environment(sandbox, judge_spec(image, execution.sandbox.files[RESULT_FILE],
                                                        expected_csv, limits, labels))
    return dataclasses.replace(host, passed=verdict.passed), verdict
