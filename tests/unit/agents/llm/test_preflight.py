"""Preflight before a run, against local servers: a missing or rejected key, an endpoint
that does not answer and a model that is not served are each one clear error."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from agents.llm.config import LLMConfig
from agents.llm.errors import LLMUnavailable
from agents.llm.preflight import preflight
from agents.ports.errors import ConfigError, UsageError
from tests.doubles.llm_servers import GeminiServer, OllamaServer, OpenAIServer, closed_port_url

KEY = SecretStr("sk-preflight-key-123456")


def config(provider: str, base_url: str, model: str = "m1", key: SecretStr | None = KEY) -> LLMConfig:
    return LLMConfig(provider, model, base_url, timeout_seconds=3, api_key=key)  # type: ignore[arg-type]


class TestReachable:
    @pytest.mark.parametrize("server_cls", [OpenAIServer, OllamaServer, GeminiServer])
    def test_model_found(self, server_cls):
        """A served model passes, and the line names provider, model and endpoint."""
        with server_cls(models=("m1",), require_key=KEY.get_secret_value()) as server:
            provider = {OpenAIServer: "openai", OllamaServer: "ollama", GeminiServer: "gemini"}[server_cls]
            line = preflight(config(provider, server.base_url))
        assert line.startswith(f"{provider}:m1 via the ") and server.base_url in line and "model listed" in line

    def test_local_openai_server_needs_no_key(self):
        """vLLM / LM Studio style servers work without any key configured."""
        with OpenAIServer(models=("m1",)) as server:
            assert "model listed" in preflight(config("openai", server.base_url, key=None))

    def test_ollama_latest_tag(self):
        """'llama3' finds 'llama3:latest' as Ollama does."""
        with OllamaServer(models=("llama3:latest",)) as server:
            preflight(config("ollama", server.base_url, model="llama3", key=None))

    def test_rate_limited_endpoint_is_reachable(self):
        """A 429 on the model list means it answered: the run starts and will back off."""
        class Busy(OpenAIServer):
            def answer(self, method, path, body, headers):  # noqa: ANN001, ANN201
                return 429, {"Content-Type": "application/json"}, b'{"error": {"message": "busy"}}'

        with Busy() as server:
            assert "reachable" in preflight(config("openai", server.base_url))


class TestRefused:
    @pytest.mark.parametrize("provider", ["openai", "ollama", "gemini"])
    def test_unreachable_endpoint(self, provider):
        """Nothing listening: LLMUnavailable (exit 2) naming the endpoint and how to fix it."""
        url = closed_port_url()
        with pytest.raises(LLMUnavailable) as caught:
            preflight(config(provider, url))
        line = caught.value.one_line()
        assert url in line and "unreachable" in line and caught.value.exit_code == 2
        assert "\n" not in line

    def test_gemini_without_key(self):
        """Gemini needs a key: ConfigError before any request."""
        with GeminiServer() as server, pytest.raises(ConfigError, match="needs an API key"):
            preflight(config("gemini", server.base_url, key=None))
        assert server.requests == []

    @pytest.mark.parametrize("server_cls,provider", [(OpenAIServer, "openai"), (GeminiServer, "gemini"),
                                                     (OllamaServer, "ollama")])
    def test_rejected_key(self, server_cls, provider):
        """A wrong key is a ConfigError that says the key was rejected (and does not show it)."""
        with (server_cls(models=("m1",), require_key="the-right-key") as server,
              pytest.raises(ConfigError) as caught):
            preflight(config(provider, server.base_url))
        assert "rejected the API key" in caught.value.one_line()
        assert KEY.get_secret_value() not in caught.value.one_line()

    @pytest.mark.parametrize("server_cls,provider,hint", [
        (OpenAIServer, "openai", "set SBX_LLM__MODEL to one it serves: other"),
        (OllamaServer, "ollama", "ollama pull m1"),
        (GeminiServer, "gemini", "SBX_LLM__MODEL"),
    ])
    def test_model_not_served(self, server_cls, provider, hint):
        """An unknown model is a ConfigError with what to do about it."""
        with server_cls(models=("other",)) as server, pytest.raises(ConfigError) as caught:
            preflight(config(provider, server.base_url))
        assert "'m1'" in caught.value.one_line() and hint in caught.value.one_line()

    def test_errors_are_usage_errors(self):
        """Both failures exit 2 through the CLI's PlatformError handling."""
        assert issubclass(LLMUnavailable, UsageError) and issubclass(ConfigError, UsageError)
