"""A target's environment for `run`: which failure is whose (exit 2 vs 3), and reuse."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agents.ports.errors import ConfigError, ImageBuildError
from agents.targets import TargetEnvironment
from controller.platform.environments import target as target_env
from controller.platform.environments.resolution import EnvironmentFailure, Resolution

CLIENT = SimpleNamespace(info=lambda: {"Architecture": "x86_64"})


def settings(tmp_path):
    return SimpleNamespace(cache_dir=tmp_path, image_prefix="sandloop", build_timeout_seconds=60)


def provide(tmp_path, environment: TargetEnvironment, say=print):
    return target_env.provide_target_environment(CLIENT, settings(tmp_path), "base:1", environment.declared(),
                                                 environment.as_of, say)


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
        provide(tmp_path, TargetEnvironment(python=["pandas==0"]))
    assert raised.value.exit_code == 2


def test_a_failed_build_is_the_machines_error(tmp_path, monkeypatch, resolved):
    resolved("2.2.3")
    monkeypatch.setattr(target_env, "image_exists", lambda *a: False)
    monkeypatch.setattr(target_env, "wheels_for", lambda *a: tmp_path)

    def fail(*args):
        raise EnvironmentFailure("building its image failed: E: Unable to locate package nope")
    monkeypatch.setattr(target_env, "build_env_image", fail)
    with pytest.raises(ImageBuildError, match="Unable to locate") as raised:
        provide(tmp_path, TargetEnvironment(debian=["nope"]))
    assert raised.value.exit_code == 3


def test_a_present_image_is_reused_with_its_pins(tmp_path, monkeypatch, resolved):
    resolved("1.5.3")
    monkeypatch.setattr(target_env, "image_exists", lambda *a: True)
    lines: list[str] = []
    provided = provide(tmp_path, TargetEnvironment(), lines.append)
    assert provided.tag.startswith("sandloop/python-parser-env:") and provided.status == "reused"
    assert provided.pins == ("pandas==1.5.3", "pypdf2==3.0.1")
    assert lines[0] == f"environment {provided.tag}: reused (2 package(s))"
