"""What the LLM layer is given: provider, model, endpoint, limits and the key.

Built from :class:`~controller.platform.settings.Settings` at the entry point (the only place
configuration is read); the key stays a ``SecretStr`` until the provider's client needs
it, so no repr, log line or artefact can show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, cast
from urllib.parse import urlsplit

from pydantic import SecretStr

from agents.ports.config import LLM_CODERS, AgentConfig
from agents.ports.errors import ConfigError

Provider = Literal["gemini", "openai", "ollama"]

#: Gemini 2.5 Flash is what seed 001 used; the others are small, code-capable defaults.
DEFAULT_MODELS: dict[str, str] = {
    "gemini": "gemini-2.5-flash",
    "openai": "gpt-4o-mini",
    "ollama": "qwen2.5-coder:7b",
}
DEFAULT_BASE_URLS: dict[str, str] = {
    "gemini": "https://generativelanguage.googleapis.com",
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434",
}
#: The provider's own variables for the key, besides SBX_LLM__API_KEY.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "ollama": ("OLLAMA_API_KEY",),
}
PROVIDER_NAMES: dict[str, str] = {
    "gemini": "Gemini API", "openai": "OpenAI-compatible endpoint", "ollama": "Ollama server",
}
#: Hosts whose OpenAI-compatible API always wants a key (local servers usually do not).
_HOSTED_OPENAI = ("api.openai.com",)


def is_hosted_openai(base_url: str) -> bool:
    """Whether ``base_url`` is OpenAI's own API (not a compatible server such as vLLM or llama.cpp)."""
    return urlsplit(base_url).hostname in _HOSTED_OPENAI


@dataclass(frozen=True)
class LLMConfig:
    """One model endpoint and how to call it."""

    provider: Provider
    model: str
    base_url: str
    temperature: float = 0.2
    timeout_seconds: float = 120.0
    max_output_tokens: int = 4096
    max_retries: int = 3
    backoff_seconds: float = 2.0
    api_key: SecretStr | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: AgentConfig) -> LLMConfig:
        """The configuration of ``settings.coder``, with provider defaults filled in.

        Raises:
            ConfigError: the coder is not an LLM coder.
        """
        if settings.coder not in LLM_CODERS:
            raise ConfigError(f"coder {settings.coder!r} does not use a language model")
        provider = cast(Provider, settings.coder)
        llm = settings.llm
        return cls(
            provider=provider,
            model=llm.model or DEFAULT_MODELS[provider],
            base_url=llm.base_url or DEFAULT_BASE_URLS[provider],
            temperature=llm.temperature,
            timeout_seconds=llm.timeout_seconds,
            max_output_tokens=llm.max_output_tokens,
            max_retries=llm.max_retries,
            backoff_seconds=llm.backoff_seconds,
            api_key=llm.api_key,
        )

    @property
    def label(self) -> str:
        """``provider:model``, as runs and metrics name the coder."""
        return f"{self.provider}:{self.model}"

    @property
    def endpoint_name(self) -> str:
        """What a person calls this endpoint, e.g. 'Ollama server at http://localhost:11434'."""
        return f"{PROVIDER_NAMES[self.provider]} at {self.base_url}"

    @property
    def needs_key(self) -> bool:
        """Gemini and OpenAI's own API need a key; local OpenAI-compatible servers and Ollama may not."""
        if self.provider == "gemini":
            return True
        if self.provider == "openai":
            return is_hosted_openai(self.base_url)
        return False

    def require_key(self) -> None:
        """Raise a one-line ConfigError when the key this endpoint needs is missing."""
        if self.needs_key and self.api_key is None:
            names = " or ".join(KEY_VARIABLES[self.provider])
            raise ConfigError(
                f"the {self.provider} coder needs an API key for {self.endpoint_name}",
                hint=f"set {names} (or SBX_LLM__API_KEY) in the environment or .env",
            )

    def secrets(self) -> tuple[str, ...]:
        """The secret values to redact from any message (the key, if set)."""
        if self.api_key is None:
            return ()
        return (self.api_key.get_secret_value(),)
