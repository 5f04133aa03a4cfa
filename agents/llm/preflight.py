"""Before a run: is there a key where one is needed, does the endpoint answer, is the model there?

One cheap, read-only request per provider, with the provider's own SDK (the transport
the chat model uses too): OpenAI-compatible ``GET /models``, Ollama ``GET /api/tags``,
Gemini ``GET models/<model>``. Whatever is wrong becomes one line and exit 2 before
any image is built or sandbox started: a missing or rejected key and an unknown model
are :class:`~agents.ports.errors.ConfigError`, an endpoint that does not answer is
:class:`~agents.llm.errors.LLMUnavailable`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing

from agents.llm.classify import classify, root_cause
from agents.llm.client import ChatClient
from agents.llm.config import KEY_VARIABLES, LLMConfig
from agents.llm.errors import ErrorKind, LLMUnavailable
from agents.llm.providers import NO_KEY, BearerAuth, build_chat_model
from agents.ports.config import AgentConfig
from agents.ports.errors import ConfigError

PREFLIGHT_TIMEOUT = 15.0
START_HINTS = {
    "ollama": "start it with `ollama serve`, or set SBX_LLM__BASE_URL",
    "openai": "start the server, or set SBX_LLM__BASE_URL to its .../v1 address",
    "gemini": "check the network connection, or set SBX_LLM__BASE_URL",
}


def preflight(config: LLMConfig) -> str:
    """Check ``config`` against its endpoint; return a line saying what was found.

    Raises:
        ConfigError: no key where one is needed, the key was rejected, the model is unknown.
        LLMUnavailable: the endpoint did not answer (or answered with a server error).
    """
    config.require_key()
    try:
        served = _LISTERS[config.provider](config)
    except Exception as exc:  # noqa: BLE001 - every SDK error is classified below
        served = _handle(config, exc)
    if served is not None and not _is_served(config.model, served):
        raise ConfigError(f"model {config.model!r} is not served by the {config.endpoint_name}",
                          hint=_model_hint(config, served))
    found = "model listed" if served is not None else "reachable"
    return f"{config.label} via the {config.endpoint_name}: {found}"


def checked_client(settings: AgentConfig) -> ChatClient:
    """A client of the model ``settings.coder`` names, checked against its endpoint first.

    Raises:
        ConfigError: no key where one is needed, a rejected key, a model not served.
        LLMUnavailable: the endpoint does not answer.
    """
    config = LLMConfig.from_settings(settings)
    preflight(config)  # checks the key first
    return ChatClient(config, build_chat_model(config))


def _handle(config: LLMConfig, exc: Exception) -> list[str] | None:
    error = classify(exc, config.secrets())
    if error.kind == ErrorKind.RATE_LIMITED:
        return None  # it answered and knows the key; the run's requests will back off
    if error.kind == ErrorKind.AUTH or (config.provider == "gemini" and error.kind == ErrorKind.BAD_REQUEST):
        names = " or ".join(KEY_VARIABLES[config.provider])
        raise ConfigError(f"the {config.endpoint_name} rejected the API key ({error.message})",
                          hint=f"check {names} or SBX_LLM__API_KEY") from None
    if error.kind == ErrorKind.MODEL_NOT_FOUND and config.provider == "gemini":
        raise ConfigError(f"model {config.model!r} is not available from the {config.endpoint_name}",
                          hint="set SBX_LLM__MODEL to a Gemini model name such as gemini-2.5-flash") from None
    if error.kind == ErrorKind.MODEL_NOT_FOUND:
        return None  # an OpenAI-compatible server without GET /models: reachable, cannot list
    if error.kind in (ErrorKind.UNREACHABLE, ErrorKind.TIMEOUT):
        raise LLMUnavailable(f"cannot reach the {config.endpoint_name}: {error.kind.value} "
                             f"({root_cause(exc, config.secrets())})", hint=START_HINTS[config.provider]) from None
    raise LLMUnavailable(f"cannot use the {config.endpoint_name}: {error.kind.value} ({error.message})",
                         hint=START_HINTS[config.provider]) from None


def _openai_models(config: LLMConfig) -> list[str]:
    import openai  # lazy: one provider's client, imported only when chosen

    key = config.api_key.get_secret_value() if config.api_key else NO_KEY
    with openai.OpenAI(base_url=config.base_url, api_key=key, max_retries=0,
                       timeout=min(config.timeout_seconds, PREFLIGHT_TIMEOUT)) as client:
        return [model.id for model in client.models.list()]


def _ollama_models(config: LLMConfig) -> list[str]:
    import ollama  # lazy: one provider's client, imported only when chosen

    auth = BearerAuth(config.api_key) if config.api_key is not None else None
    client = ollama.Client(host=config.base_url, timeout=min(config.timeout_seconds, PREFLIGHT_TIMEOUT), auth=auth)
    with closing(client):
        return [m.model for m in client.list().models if m.model]


def _gemini_model(config: LLMConfig) -> list[str] | None:
    # lazy: one provider's client, imported only when chosen
    from google import genai
    from google.genai import types

    assert config.api_key is not None  # require_key() ran
    options = types.HttpOptions(base_url=config.base_url,
                                timeout=int(min(config.timeout_seconds, PREFLIGHT_TIMEOUT) * 1000))
    with closing(genai.Client(api_key=config.api_key.get_secret_value(), http_options=options)) as client:
        client.models.get(model=config.model)
    return [config.model]  # found: a missing model raised 404 above


_LISTERS: dict[str, Callable[[LLMConfig], list[str] | None]] = {
    "openai": _openai_models, "ollama": _ollama_models, "gemini": _gemini_model,
}


def _is_served(model: str, served: list[str]) -> bool:
    """Ollama names ``llama3`` and ``llama3:latest`` the same model."""
    names = set(served) | {name.removesuffix(":latest") for name in served}
    return model in names or model.removesuffix(":latest") in names


def _model_hint(config: LLMConfig, served: list[str]) -> str:
    listed = ", ".join(sorted(served)[:8]) or "none"
    if config.provider == "ollama":
        return f"run `ollama pull {config.model}` or set SBX_LLM__MODEL (pulled: {listed})"
    return f"set SBX_LLM__MODEL to one it serves: {listed}"
