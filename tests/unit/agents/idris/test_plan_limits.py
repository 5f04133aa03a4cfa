"""How the Idris agent's plan settles its limits and its coder before anything starts."""

from __future__ import annotations

from agents.idris.agent import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MEMORY_MB,
    idris_limits,
    idris_max_attempts,
    make_idris_coder,
)
from agents.ports.config import AgentConfig
from agents.ports.sandbox import SandboxLimits
from agents.targets import TargetConfig, TargetLimits
from controller.platform.settings import Settings, agent_config


def settings(**values: object) -> AgentConfig:
    return agent_config(Settings(_env_file=None, **values))  # type: ignore[arg-type]


def config(**limits: object) -> TargetConfig:
    return TargetConfig(agent="idris", project="P", limits=TargetLimits(**limits))  # type: ignore[arg-type]


class TestMaxAttempts:
    def test_the_seeds_five_by_default(self):
        """No flag, no target limit, no SBX_MAX_ATTEMPTS: 5."""
        assert idris_max_attempts(settings(), config(), None) == DEFAULT_MAX_ATTEMPTS == 5

    def test_precedence_flag_then_target_then_setting(self):
        """--max-attempts beats target.toml, which beats SBX_MAX_ATTEMPTS."""
        assert idris_max_attempts(settings(max_attempts=2), config(max_attempts=4), 7) == 7
        assert idris_max_attempts(settings(max_attempts=2), config(max_attempts=4), None) == 4
        assert idris_max_attempts(settings(max_attempts=2), config(), None) == 2


class TestLimits:
    def test_defaults_are_30_seconds_and_more_memory(self):
        """Timeout as the settings (30 s, the seed's); memory raised for Idris2 on Chez."""
        limits = idris_limits(settings(), config())
        assert limits.timeout_seconds == 30 and limits.memory_mb == DEFAULT_MEMORY_MB

    def test_an_explicit_memory_setting_is_kept(self):
        """SBX_SANDBOX__MEMORY_MB set by the user wins over the agent's default."""
        limits = idris_limits(settings(sandbox=SandboxLimits(memory_mb=700)), config())
        assert limits.memory_mb == 700

    def test_the_target_wins(self):
        """target.toml's limits override both."""
        limits = idris_limits(settings(sandbox=SandboxLimits(memory_mb=700)), config(timeout_seconds=5, memory_mb=900))
        assert (limits.timeout_seconds, limits.memory_mb) == (5, 900)


class TestCoder:
    def test_offline_is_the_coder(self):
        """The default coder is the offline one."""
        assert make_idris_coder(settings()).name == "offline"
