"""The chat model of each provider, built from an :class:`LLMConfig`.

All three are LangChain chat models (``langchain-google-genai``, ``langchain-openai``,
``langchain-ollama``), so the client above them sees one interface: ``invoke(messages)``
returning an ``AIMessage`` with ``usage_metadata``. Their own retries are switched off:
:class:`~agents.llm.client.ChatClient` retries, so that every request is counted.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from pydantic import SecretStr

from agents.llm.config import LLMConfig, is_hosted_openai

#: Sent as the key to OpenAI-compatible servers that need none (the SDK insists on one).
NO_KEY = "sk-no-key-configured"


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <key>`` for httpx, with a repr that does not show the key."""

    def __init__(self, key: SecretStr) -> None:
        self._key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Add the header to each request."""
        request.headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(***)"


def build_chat_model(config: LLMConfig) -> BaseChatModel:
    """The LangChain chat model for ``config.provider``, talking to ``config.base_url``."""
    builders = {"gemini": _gemini, "openai": _openai, "ollama": _ollama}
    return builders[config.provider](config)


def structured(model: BaseChatModel, provider: str, schema: dict[str, Any], name: str, *,
               json_object: bool = False) -> Runnable[Any, Any]:
    """``model`` asked to answer in ``schema`` (a JSON Schema without references), each provider its way:
    OpenAI's ``response_format`` with ``json_schema`` (llama.cpp's server makes it a grammar, so even a
    tiny model answers in the schema), Ollama's ``format``, Gemini's ``response_schema``.

    ``json_object``: the form llama-cpp-python's server takes instead (``{"type": "json_object",
    "schema": …}``); it refuses ``json_schema`` with a 500 naming ``response_format``."""
    if provider == "openai" and json_object:
        return model.bind(response_format={"type": "json_object", "schema": schema})
    if provider == "openai":
        return model.bind(response_format={"type": "json_schema",
                                           "json_schema": {"name": name[:64], "schema": schema, "strict": False}})
    if provider == "ollama":
        return model.model_copy(update={"format": schema})
    if provider == "gemini":
        return model.model_copy(update={"response_mime_type": "application/json", "response_schema": schema})
    return model


def inline_refs(schema: dict[str, Any], depth: int = 6) -> dict[str, Any]:
    """``schema`` with its ``$ref``s to ``#/$defs/...`` replaced by their definitions (Gemini takes no
    references), ``title``s dropped; bounded in depth (a recursive model is cut to ``{}``)."""
    defs = schema.get("$defs", {})

    def walk(node: Any, left: int) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs.get(ref.rsplit("/", 1)[-1], {}), left - 1) if left > 0 else {}
            return {k: walk(v, left) for k, v in node.items() if k not in ("$defs", "title")}
        if isinstance(node, list):
            return [walk(item, left) for item in node]
        return node

    inlined: dict[str, Any] = walk(schema, depth)
    return inlined


def _gemini(config: LLMConfig) -> BaseChatModel:
    from langchain_google_genai import ChatGoogleGenerativeAI  # lazy: one provider's client, imported only when chosen

    return ChatGoogleGenerativeAI(
        model=config.model,
        api_key=config.api_key,
        base_url=config.base_url,
        vertexai=False,  # the Developer API with a key; never guessed from the environment
        temperature=config.temperature,
        max_output_tokens=config.max_output_tokens,
        timeout=config.timeout_seconds,
        max_retries=1,  # google-genai counts attempts: 1 = the request itself, no SDK retry
    )


def _openai(config: LLMConfig) -> BaseChatModel:
    from langchain_openai import ChatOpenAI  # lazy: one provider's client, imported only when chosen

    # OpenAI's API takes the cap as max_completion_tokens (the SDK's name for max_tokens); compatible
    # servers such as llama.cpp's know only max_tokens and ignore the other, so they get that one.
    hosted = is_hosted_openai(config.base_url)
    return ChatOpenAI(
        model=config.model,
        base_url=config.base_url,
        api_key=config.api_key or SecretStr(NO_KEY),
        temperature=config.temperature,
        timeout=config.timeout_seconds,
        max_retries=0,
        max_tokens=config.max_output_tokens if hosted else None,
        extra_body=None if hosted else {"max_tokens": config.max_output_tokens},
    )


def _ollama(config: LLMConfig) -> BaseChatModel:
    from langchain_ollama import ChatOllama  # lazy: one provider's client, imported only when chosen

    client_kwargs: dict[str, object] = {"timeout": config.timeout_seconds}
    if config.api_key is not None:
        client_kwargs["auth"] = BearerAuth(config.api_key)
    return ChatOllama(
        model=config.model,
        base_url=config.base_url,
        temperature=config.temperature,
        num_predict=config.max_output_tokens,
        client_kwargs=client_kwargs,
    )
