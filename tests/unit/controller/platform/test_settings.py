"""Settings: defaults a new user gets, environment overrides, and refused values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from controller.platform.settings import Settings


class TestSettings:
    def test_secure_defaults(self):
        """Out of the box the sandbox has no network, a non-root user and bounded resources."""
        settings = Settings(_env_file=None)
        assert settings.sandbox_network == "none"
        assert not settings.sandbox_user.startswith("0:")
        assert settings.sandbox.memory_mb == 512 and settings.sandbox.pids == 128
        assert settings.sandbox.timeout_seconds == 30
        assert settings.max_attempts == 3

    def test_nested_environment_override(self, monkeypatch):
        """SBX_SANDBOX__MEMORY_MB changes one limit and keeps the others."""
        monkeypatch.setenv("SBX_SANDBOX__MEMORY_MB", "1024")
        settings = Settings(_env_file=None)
        assert settings.sandbox.memory_mb == 1024
        assert settings.sandbox.pids == 128

    @pytest.mark.parametrize("user", ["0:0", "10001:0", "root", "1000"])
    def test_root_or_non_numeric_user_is_refused(self, user):
        """The sandbox user must be numeric uid:gid and never root."""
        with pytest.raises(ValidationError):
            Settings(_env_file=None, sandbox_user=user)

    def test_network_cannot_be_opened(self):
        """Only network 'none' validates."""
        with pytest.raises(ValidationError):
            Settings(_env_file=None, sandbox_network="bridge")
