"""LLM settings: provider defaults, where the key comes from, and that it never shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from agents.llm.config import DEFAULT_MODELS, LLMConfig
from agents.ports.errors import ConfigError
from controller.platform.settings import Settings

KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "OLLAMA_API_KEY", "SBX_LLM__API_KEY",
                 "SBX_CODER", "SBX_LLM__MODEL", "SBX_LLM__BASE_URL")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No key from the developer's own environment leaks into these tests."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


class TestSettings:
    def test_offline_is_the_default(self):
        """With nothing configured the offline coder is used and no key is needed."""
        settings = Settings(_env_file=None)
        assert settings.coder == "offline" and settings.llm.api_key is None

    @pytest.mark.parametrize(("coder", "variable"), [
        ("gemini", "GOOGLE_API_KEY"), ("gemini", "GEMINI_API_KEY"), ("openai", "OPENAI_API_KEY"),
        ("ollama", "OLLAMA_API_KEY"),
    ])
    def test_provider_standard_key_variables(self, monkeypatch, coder, variable):
        """Each provider's own key variable is read, without the SBX_ prefix."""
        monkeypatch.setenv(variable, "key-from-provider-variable")
        settings = Settings(_env_file=None, coder=coder)
        assert settings.llm.api_key.get_secret_value() == "key-from-provider-variable"

    def test_another_providers_key_is_not_used(self, monkeypatch):
        """An OPENAI_API_KEY is never sent to Gemini."""
        monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
        assert Settings(_env_file=None, coder="gemini").llm.api_key is None

    def test_sbx_key_wins(self, monkeypatch):
        """SBX_LLM__API_KEY overrides the provider's variable."""
        monkeypatch.setenv("GOOGLE_API_KEY", "google")
        monkeypatch.setenv("SBX_LLM__API_KEY", "sbx")
        assert Settings(_env_file=None, coder="gemini").llm.api_key.get_secret_value() == "sbx"

    def test_key_from_dotenv(self, tmp_path: Path):
        """Keys in .env are read like environment variables."""
        env = tmp_path / ".env"
        env.write_text("SBX_CODER=openai\nOPENAI_API_KEY=from-dotenv\nSBX_LLM__TEMPERATURE=0.7\n")
        settings = Settings(_env_file=env)
        assert settings.llm.api_key.get_secret_value() == "from-dotenv" and settings.llm.temperature == 0.7

    def test_blank_key_counts_as_missing(self, monkeypatch):
        """OPENAI_API_KEY='' is no key."""
        monkeypatch.setenv("SBX_LLM__API_KEY", "  ")
        assert Settings(_env_file=None, coder="openai").llm.api_key is None

    def test_key_is_not_in_repr_or_dump(self, monkeypatch):
        """repr() and model_dump_json() never show the key."""
        monkeypatch.setenv("GOOGLE_API_KEY", "AIza-very-secret-value")
        settings = Settings(_env_file=None, coder="gemini")
        assert "very-secret" not in repr(settings) and "very-secret" not in settings.model_dump_json()
        assert "very-secret" not in repr(LLMConfig.from_settings(settings))

    @pytest.mark.parametrize("url", ["localhost:11434", "ftp://host", "http://user:pw@host:1/v1"])
    def test_bad_base_url_is_refused(self, url):
        """base_url must be a plain http(s) URL, without credentials in it."""
        with pytest.raises(ValidationError):
            Settings(_env_file=None, llm={"base_url": url})

    def test_unknown_coder_is_refused(self):
        """Only offline, gemini, openai and ollama validate."""
        with pytest.raises(ValidationError):
            Settings(_env_file=None, coder="claude")


class TestConfig:
    @pytest.mark.parametrize("provider", ["gemini", "openai", "ollama"])
    def test_provider_defaults(self, provider):
        """Model and endpoint default per provider; label is provider:model."""
        config = LLMConfig.from_settings(Settings(_env_file=None, coder=provider))
        assert config.model == DEFAULT_MODELS[provider] and config.base_url.startswith("http")
        assert config.label == f"{provider}:{config.model}"

    def test_settings_override_defaults(self):
        """SBX_LLM__* values reach the config."""
        settings = Settings(_env_file=None, coder="ollama",
                            llm={"model": "llama3", "base_url": "http://gpu:11434/", "timeout_seconds": 5,
                                 "max_retries": 0})
        config = LLMConfig.from_settings(settings)
        assert (config.model, config.base_url, config.timeout_seconds, config.max_retries) == \
            ("llama3", "http://gpu:11434", 5, 0)

    def test_offline_has_no_llm_config(self):
        """Asking the offline coder for an LLM config is an error."""
        with pytest.raises(ConfigError):
            LLMConfig.from_settings(Settings(_env_file=None))

    @pytest.mark.parametrize(("provider", "base_url", "needs"), [
        ("gemini", "http://127.0.0.1:1", True),
        ("openai", "https://api.openai.com/v1", True),
        ("openai", "http://localhost:8000/v1", False),
        ("ollama", "http://localhost:11434", False),
    ])
    def test_which_endpoints_need_a_key(self, provider, base_url, needs):
        """Gemini and OpenAI's API need a key; local vLLM/LM Studio/Ollama do not."""
        config = LLMConfig(provider, "m", base_url)
        assert config.needs_key is needs
        if needs:
            with pytest.raises(ConfigError, match="needs an API key"):
                config.require_key()
        else:
            config.require_key()

    def test_missing_key_message_names_the_variables(self):
        """The one-line error says which variables to set."""
        with pytest.raises(ConfigError) as caught:
            LLMConfig("gemini", "m", "https://x").require_key()
        assert "GOOGLE_API_KEY or GEMINI_API_KEY" in caught.value.one_line()

    def test_secrets_lists_the_key(self):
        """secrets() is what messages are redacted with."""
        assert LLMConfig("openai", "m", "http://x", api_key=SecretStr("k1")).secrets() == ("k1",)
        assert LLMConfig("openai", "m", "http://x").secrets() == ()
