"""Fixtures of the blueprint agent's unit tests: the scripted OpenAI-compatible server (a TEST
DOUBLE, tests/doubles/llm_servers.py) and a chat client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from agents.llm.client import ChatClient
from agents.llm.config import LLMConfig
from agents.llm.providers import build_chat_model
from tests.doubles.llm_servers import OpenAIServer


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(models=("m",)) as running:
        yield running


@pytest.fixture
def client(server: OpenAIServer) -> ChatClient:
    """A client of model ``m`` on the scripted server: no retries, a short timeout."""
    config = LLMConfig("openai", "m", server.base_url, timeout_seconds=5, max_retries=0, api_key=SecretStr("k" * 12))
    return ChatClient(config, build_chat_model(config))
