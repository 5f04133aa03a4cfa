"""Where a target with its own environment (``[environment]`` of target.toml) is judged.

The controller builds the environment image (:mod:`controller.platform.environments.target`)
and hands the agent the result (:class:`~agents.ports.environments.Environment`). When the
environment's pandas is not the controller's, each attempt's result is judged in a second
container of the environment (:mod:`agents.bank_parser.env_judge`: it receives the result
and the expected CSV, never the parser; the parser's container never sees the CSV).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from agents.bank_parser.compare import Comparison
from agents.bank_parser.env_judge import Verdict, judge_in_environment, judge_spec
from agents.bank_parser.evaluate import RESULT_FILE, Execution
from agents.ports.environments import Environment
from agents.ports.events import Say
from agents.ports.sandbox import Sandbox, SandboxLimits


def judge_image(environment: Environment | None, say: Say | None = None) -> str | None:
    """The image results are judged in: the environment's when its pandas is not the controller's.

    On ``run --resume`` the pins are not known again (``pins == ()``): judging in the
    environment is right whatever its pandas (the same pandas ran the parser); it only costs
    a second container when the pandas is the controller's.
    """
    if environment is None or environment.tag is None:
        return None
    if not environment.pins:
        return environment.tag
    env_pandas = next((p.split("==", 1)[1] for p in environment.pins if p.lower().startswith("pandas==")), "?")
    if env_pandas == pd.__version__:
        return None
    if say is not None:
        say(f"environment pandas {env_pandas} (controller: {pd.__version__}): results are judged in the environment")
    return environment.tag


def judged_in_environment(sandbox: Sandbox, image: str, execution: Execution, expected_csv: bytes,
                          host: Comparison, limits: SandboxLimits,
                          labels: dict[str, str]) -> tuple[Comparison, Verdict]:
    """The host's comparison with its verdict replaced by the environment's judge's.

    The host's comparison keeps its details (shapes, cells) for the coder's feedback; whether
    the attempt passed is what ``DataFrame.equals`` says under the environment's pandas.
    """
    verdict = judge_in_environment(sandbox, judge_spec(image, execution.sandbox.files[RESULT_FILE],
                                                        expected_csv, limits, labels))
    return dataclasses.replace(host, passed=verdict.passed), verdict
