"""Every provider's exceptions map to one LLMError kind, with Retry-After and the key redacted."""

from __future__ import annotations

import httpx
import ollama
import openai
import pytest
from google.genai import errors as genai_errors

from agents.llm.classify import classify, kind_of_status, redact
from agents.llm.errors import ErrorKind, LLMError

REQUEST = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers or {}, request=REQUEST, json={"error": {"message": "x"}})


class TestStatuses:
    @pytest.mark.parametrize(("status", "kind"), [
        (429, ErrorKind.RATE_LIMITED), (500, ErrorKind.SERVER_ERROR), (503, ErrorKind.SERVER_ERROR),
        (408, ErrorKind.TIMEOUT), (401, ErrorKind.AUTH), (403, ErrorKind.AUTH),
        (404, ErrorKind.MODEL_NOT_FOUND), (400, ErrorKind.BAD_REQUEST), (418, ErrorKind.UNKNOWN),
    ])
    def test_status_to_kind(self, status, kind):
        """HTTP statuses map to kinds; only 429, 408 and 5xx are transient."""
        assert kind_of_status(status) == kind
        assert LLMError(kind, "m").transient == (status in (429, 408) or status >= 500)


class TestProviderExceptions:
    def test_openai_rate_limit_with_retry_after(self):
        """openai's 429 is rate_limited and carries the server's Retry-After."""
        exc = openai.RateLimitError("slow down", response=response(429, {"retry-after": "7"}), body=None)
        error = classify(exc)
        assert error.kind == ErrorKind.RATE_LIMITED and error.status == 429 and error.retry_after == 7.0

    def test_retry_after_is_capped(self):
        """A server asking for an hour does not stall the run for an hour."""
        exc = openai.RateLimitError("x", response=response(429, {"retry-after": "3600"}), body=None)
        assert classify(exc).retry_after == 120.0

    def test_openai_auth_is_not_transient(self):
        """A rejected key is auth, and retrying it is pointless."""
        error = classify(openai.AuthenticationError("bad key", response=response(401), body=None))
        assert error.kind == ErrorKind.AUTH and not error.transient

    def test_transport_errors(self):
        """httpx timeouts are timeouts; refused connections are unreachable; both transient."""
        assert classify(httpx.ReadTimeout("slow", request=REQUEST)).kind == ErrorKind.TIMEOUT
        assert classify(httpx.ConnectError("refused", request=REQUEST)).kind == ErrorKind.UNREACHABLE
        assert classify(ConnectionError("Failed to connect to Ollama")).kind == ErrorKind.UNREACHABLE

    def test_ollama_response_error(self):
        """Ollama's ResponseError carries its status: 503 is a server error, 404 an unknown model."""
        assert classify(ollama.ResponseError("busy", 503)).kind == ErrorKind.SERVER_ERROR
        assert classify(ollama.ResponseError("model 'x' not found", 404)).kind == ErrorKind.MODEL_NOT_FOUND

    def test_google_errors_wrapped_by_langchain(self):
        """LangChain's Google rate-limit error is rate_limited; the status comes from the SDK error it wraps."""
        from langchain_google_genai.chat_models import GoogleRateLimitError

        sdk = genai_errors.ClientError(429, {"error": {"code": 429, "message": "quota",
                                                       "status": "RESOURCE_EXHAUSTED"}})
        try:
            try:
                raise sdk
            except genai_errors.ClientError as inner:
                raise GoogleRateLimitError("Error calling model") from inner
        except GoogleRateLimitError as wrapped:
            error = classify(wrapped)
        assert error.kind == ErrorKind.RATE_LIMITED and error.status == 429

    def test_unknown_exceptions_are_not_retried(self):
        """Something unexpected is 'error', not transient, and keeps its type name."""
        error = classify(RuntimeError("boom"))
        assert error.kind == ErrorKind.UNKNOWN and not error.transient and "RuntimeError: boom" in error.message


class TestRedaction:
    def test_key_never_in_the_message(self):
        """The key, if an SDK puts it in an error text, is replaced by ***."""
        key = "sk-live-abcdef0123456789"
        error = classify(RuntimeError(f"request with Authorization: Bearer {key} failed"), [key])
        assert key not in error.message and "***" in error.message

    def test_key_query_parameters_are_redacted(self):
        """?key=... in a URL is redacted even when the key is not known."""
        assert redact("GET https://x/models?key=AIzaSECRET&alt=json", []) == "GET https://x/models?key=***&alt=json"
