"""The chat client over real HTTP: the openai, ollama and google-genai SDKs (under LangChain)
talk to local scripted servers (tests/doubles/llm_servers.py) that speak their APIs.

Pins: replies and token counts come back; 429/5xx/timeouts are retried with backoff (at
least Retry-After) a bounded number of times; auth errors are not retried; every request
is counted in Prometheus and logged, without the key or the prompt.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog
from prometheus_client import CollectorRegistry
from pydantic import SecretStr

from agents.llm.accounting import LLMMetrics
from agents.llm.client import ChatClient, ChatMessage
from agents.llm.config import LLMConfig
from agents.llm.errors import ErrorKind, LLMError
from agents.llm.providers import build_chat_model
from tests.doubles.llm_servers import (
    Fail,
    GeminiServer,
    OllamaServer,
    OpenAIServer,
    Reply,
    ScriptedLLMServer,
    Stall,
)

KEY = "sk-test-0123456789abcdef"
MESSAGES = (ChatMessage("system", "You write parsers."), ChatMessage("user", "PROMPT-MARKER write parse()"))
SERVERS = {"openai": OpenAIServer, "ollama": OllamaServer, "gemini": GeminiServer}


@pytest.fixture(params=sorted(SERVERS))
def provider(request) -> str:  # noqa: ANN001
    return request.param


@pytest.fixture
def server(provider: str) -> Iterator[ScriptedLLMServer]:
    with SERVERS[provider](models=("test-model",), require_key=KEY) as running:
        yield running


class Harness:
    """A client on the server, with a fresh metrics registry and recorded backoff sleeps."""

    def __init__(self, provider: str, server: ScriptedLLMServer, **overrides: float) -> None:
        self.registry = CollectorRegistry()
        self.sleeps: list[float] = []
        values = {"timeout_seconds": 5.0, "max_retries": 2, "backoff_seconds": 0.01, **overrides}
        self.config = LLMConfig(provider, "test-model", server.base_url, api_key=SecretStr(KEY), **values)  # type: ignore[arg-type]
        self.client = ChatClient(self.config, build_chat_model(self.config),
                                 metrics=LLMMetrics(self.registry), sleep=self.sleeps.append)

    def requests(self, outcome: str) -> float:
        labels = {"provider": self.config.provider, "model": "test-model", "outcome": outcome}
        return self.registry.get_sample_value("sbx_llm_requests_total", labels) or 0.0

    def tokens(self, direction: str) -> float:
        labels = {"provider": self.config.provider, "model": "test-model", "direction": direction}
        return self.registry.get_sample_value("sbx_llm_tokens_total", labels) or 0.0


class TestReplies:
    def test_reply_text_and_tokens(self, provider, server):
        """A reply's text comes back; tokens in/out are counted per provider and model."""
        server.push(Reply("```python\ndef parse(p):\n    return 1\n```", tokens_in=321, tokens_out=45))
        harness = Harness(provider, server)
        reply = harness.client.complete(MESSAGES, "generate")
        assert "def parse(p)" in reply.text
        assert (reply.call.tokens_in, reply.call.tokens_out, reply.call.outcome) == (321, 45, "ok")
        assert harness.requests("ok") == 1 and harness.tokens("in") == 321 and harness.tokens("out") == 45

    def test_messages_and_key_reach_the_server(self, provider, server):
        """The system and user messages are sent, with the key in the provider's header."""
        server.push(Reply("ok"))
        Harness(provider, server).client.complete(MESSAGES)
        (request,) = server.chat_requests
        assert "PROMPT-MARKER" in request.text() and "You write parsers." in request.text()
        header = request.headers.get("x-goog-api-key") or request.headers.get("authorization")
        assert header in (KEY, f"Bearer {KEY}")

    def test_the_reply_length_is_capped_at_the_model(self, provider, server):
        """Each request asks the model to stop at max_output_tokens, in the field its API reads
        (a compatible server such as llama.cpp's reads only max_tokens), so a rambling model
        stops there instead of generating until the timeout."""
        server.push(Reply("ok"))
        Harness(provider, server, max_output_tokens=321).client.complete(MESSAGES)
        (request,) = server.chat_requests
        body = request.body
        cap = {"openai": lambda: body.get("max_tokens"), "ollama": lambda: body["options"]["num_predict"],
               "gemini": lambda: body["generationConfig"]["maxOutputTokens"]}[provider]()
        assert cap == 321


class TestRetries:
    def test_rate_limit_then_success(self, provider, server):
        """A 429 is retried after at least its Retry-After; the second request succeeds."""
        server.push(Fail(429, "slow down", retry_after=0.5), Reply("done"))
        harness = Harness(provider, server)
        reply = harness.client.complete(MESSAGES)
        assert reply.text == "done" and len(server.chat_requests) == 2
        assert [r.outcome for r in reply.call.requests] == ["rate_limited", "ok"]
        assert harness.sleeps and harness.sleeps[0] >= 0.5
        assert harness.requests("rate_limited") == 1 and harness.requests("ok") == 1

    def test_server_errors_are_retried_a_bounded_number_of_times(self, provider, server):
        """5xx on every try: max_retries + 1 requests, then an LLMError server_error."""
        server.push(*[Fail(503, "overloaded")] * 3)
        harness = Harness(provider, server, max_retries=2)
        with pytest.raises(LLMError) as caught:
            harness.client.complete(MESSAGES)
        assert caught.value.kind == ErrorKind.SERVER_ERROR and caught.value.tries == 3
        assert len(server.chat_requests) == 3 and len(harness.sleeps) == 2
        assert harness.client.ledger.calls[-1].outcome == "server_error"

    def test_backoff_grows(self, provider, server):
        """Each retry waits longer than the one before (exponential backoff)."""
        server.push(Fail(500), Fail(500), Reply("ok"))
        harness = Harness(provider, server, backoff_seconds=0.2)
        harness.client.complete(MESSAGES)
        assert len(harness.sleeps) == 2 and harness.sleeps[1] > harness.sleeps[0]

    def test_auth_errors_are_not_retried(self, provider):
        """A wrong key fails at once (auth, or Gemini's invalid-key 400), one request only."""
        with SERVERS[provider](models=("test-model",), require_key="another-key") as server:
            harness = Harness(provider, server)
            with pytest.raises(LLMError) as caught:
                harness.client.complete(MESSAGES)
        assert caught.value.kind in (ErrorKind.AUTH, ErrorKind.BAD_REQUEST) and caught.value.tries == 1
        assert harness.sleeps == []

    def test_timeout_then_success(self, provider, server):
        """A request that hangs past the timeout is retried; the retry's reply is used."""
        server.push(Stall(10), Reply("after the timeout"))
        harness = Harness(provider, server, timeout_seconds=1.0)
        reply = harness.client.complete(MESSAGES)
        assert reply.text == "after the timeout"
        assert [r.outcome for r in reply.call.requests] == ["timeout", "ok"]

    def test_timeouts_exhaust_the_retries(self, provider, server):
        """Hanging on every try ends as an LLMError timeout after max_retries + 1 requests."""
        server.push(Stall(10), Stall(10))
        harness = Harness(provider, server, timeout_seconds=0.5, max_retries=1)
        with pytest.raises(LLMError) as caught:
            harness.client.complete(MESSAGES)
        assert caught.value.kind == ErrorKind.TIMEOUT and caught.value.tries == 2


class TestLogs:
    def test_every_request_is_logged_without_key_or_prompt(self, provider, server):
        """One log event per request with outcome and tokens; neither the key nor the prompt."""
        server.push(Fail(429, f"quota for {KEY}"), Reply("ok"))
        with structlog.testing.capture_logs() as logs:
            Harness(provider, server).client.complete(MESSAGES)
        requests = [entry for entry in logs if entry["event"] == "llm.request"]
        assert [entry["outcome"] for entry in requests] == ["rate_limited", "ok"]
        assert all(entry["provider"] == provider and entry["model"] == "test-model" for entry in requests)
        text = repr(logs)
        assert KEY not in text and "PROMPT-MARKER" not in text
