"""Where a target with its own environment is judged: the agent decides from the pins."""

from __future__ import annotations

import pandas as pd

from agents.bank_parser.target_env import judge_image
from agents.ports.environments import Environment

TAG = "sandloop/python-parser-env:abc"


def test_a_different_pandas_is_judged_in_the_environment():
    lines: list[str] = []
    assert judge_image(Environment(TAG, "reused", 0.0, ("pandas==1.5.3",)), lines.append) == TAG
    assert lines == [f"environment pandas 1.5.3 (controller: {pd.__version__}): results are judged in the environment"]


def test_the_controllers_pandas_is_compared_on_the_host():
    assert judge_image(Environment(TAG, "built", 0.0, (f"pandas=={pd.__version__}",))) is None


def test_resume_judges_in_the_recorded_environment_whatever_its_pandas():
    """On resume the pins are not known again (pins == ()): the environment judges."""
    assert judge_image(Environment(TAG, "reused", 0.0)) == TAG


def test_no_environment_no_judge():
    assert judge_image(None) is None
