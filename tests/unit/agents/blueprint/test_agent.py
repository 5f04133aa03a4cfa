"""The blueprint agent's plan: which target, how many attempts, which limits, before any engine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.blueprint.agent import BlueprintAgent
from agents.ports.config import AgentConfig
from agents.ports.errors import ConfigError, TargetError
from agents.ports.sandbox import SandboxLimits
from controller.platform.settings import PROJECT_ROOT

AGENT = BlueprintAgent()


def data_with(tmp_path: Path, toml: str) -> Path:
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / "candidate-brief", data / "brief")
    (data / "brief" / "target.toml").write_text(toml)
    return data


class TestPlan:
    def test_defaults_three_attempts_and_a_ten_second_timeout(self, tmp_path):
        """The seed's two retries; a tool is a small function: 10 s unless told otherwise."""
        plan = AGENT.plan("brief", AgentConfig(data_dir=data_with(tmp_path, 'agent = "blueprint"\n')), None)
        assert plan.max_attempts == 3 and plan.limits.timeout_seconds == 10 and plan.image == "python-parser"
        assert plan.record["workflow"] == "candidate-brief" and plan.record["blueprint"]["tools"][1]["name"] == "match"

    def test_target_toml_then_the_command_line_win(self, tmp_path):
        data = data_with(tmp_path, 'agent = "blueprint"\n[limits]\nmax_attempts = 2\ntimeout_seconds = 4\n')
        config = AgentConfig(data_dir=data, limits=SandboxLimits(timeout_seconds=50))
        plan = AGENT.plan("brief", config, None)
        assert plan.max_attempts == 2 and plan.limits.timeout_seconds == 4
        assert AGENT.plan("brief", config, 5).max_attempts == 5

    def test_a_set_timeout_setting_beats_the_agents_default(self, tmp_path):
        config = AgentConfig(data_dir=data_with(tmp_path, 'agent = "blueprint"\n'),
                             limits=SandboxLimits(timeout_seconds=50))
        assert AGENT.plan("brief", config, None).limits.timeout_seconds == 50

    def test_a_target_of_another_agent_is_refused(self):
        with pytest.raises(TargetError, match='must say agent = "blueprint"'):
            AGENT.plan("service-contract", AgentConfig(data_dir=PROJECT_ROOT / "data"), None)

    def test_keys_of_other_agents_are_refused_in_one_line(self, tmp_path):
        data = data_with(tmp_path, 'agent = "blueprint"\n[environment]\npython = ["pandas"]\n')
        with pytest.raises(ConfigError, match='agent = "blueprint" takes only \\[limits\\]'):
            AGENT.plan("brief", AgentConfig(data_dir=data), None)
