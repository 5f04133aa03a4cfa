"""A target's environment for `run`: which failure is whose (exit 2 vs 3), reuse, and where to judge."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from agents.bank_parser import target_env
from controller.environments.resolution import EnvironmentFailure, Resolution
from controller.errors import ConfigError, ImageBuildError
from controller.target_config import TargetEnvironment


def services(tmp_path):
    client = SimpleNamespace(info=lambda: {"Architecture": "x86_64"})
    return SimpleNamespace(client=client, settings=SimpleNamespace(cache_dir=tmp_path, image_prefix="sandloop",
                                                                   build_timeout_seconds=60))


@pytest.fixture
def resolved(monkeypatch):
    def pins(pandas: str) -> None:
        monkeypatch.setattr(target_env, "resolve", lambda *a: Resolution((f"pandas=={pandas}", "pypdf2==3.0.1"), None))
    return pins


def test_an_unresolvable_set_is_the_users_config_error(tmp_path, monkeypatch):
    def fail(*args):
        raise EnvironmentFailure("its requirements cannot be resolved: no pandas==0")
    monkeypatch.setattr(target_env, "resolve", fail)
    with pytest.raises(ConfigError, match="cannot be resolved") as raised:
        target_env.provide_target_environment(services(tmp_path), "base:1", TargetEnvironment(python=["pandas==0"]),
                                              print)
    assert raised.value.exit_code == 2


def test_a_failed_build_is_the_machines_error(tmp_path, monkeypatch, resolved):
    resolved("2.2.3")
    monkeypatch.setattr(target_env, "image_exists", lambda *a: False)
    monkeypatch.setattr(target_env, "wheels_for", lambda *a: tmp_path)

    def fail(*args):
        raise EnvironmentFailure("building its image failed: E: Unable to locate package nope")
    monkeypatch.setattr(target_env, "build_env_image", fail)
    with pytest.raises(ImageBuildError, match="Unable to locate") as raised:
        target_env.provide_target_environment(services(tmp_path), "base:1", TargetEnvironment(debian=["nope"]), print)
    assert raised.value.exit_code == 3


def test_a_present_image_is_reused_and_a_different_pandas_is_judged_there(tmp_path, monkeypatch, resolved):
    resolved("1.5.3")
    monkeypatch.setattr(target_env, "image_exists", lambda *a: True)
    lines: list[str] = []
    provided = target_env.provide_target_environment(services(tmp_path), "base:1", TargetEnvironment(), lines.append)
    assert provided.tag.startswith("sandloop/python-parser-env:") and provided.judge_image == provided.tag
    assert lines[0] == f"environment {provided.tag}: reused (2 package(s))"


def test_the_controllers_pandas_is_compared_on_the_host(tmp_path, monkeypatch, resolved):
    resolved(pd.__version__)
    monkeypatch.setattr(target_env, "image_exists", lambda *a: True)
    provided = target_env.provide_target_environment(services(tmp_path), "base:1", TargetEnvironment(), print)
    assert provided.judge_image is None


def test_resume_judges_in_an_environment_image_only():
    assert target_env.resumed_judge_image("sandloop/python-parser-env:abc") == "sandloop/python-parser-env:abc"
    assert target_env.resumed_judge_image("sandloop/python-parser:abc") is None
