"""One completion from a chat model, retried on transient errors, counted and logged.

:class:`ChatClient` is the provider-neutral face of the layer: a coder hands it messages
and gets a :class:`ChatReply` or an :class:`~agents.llm.errors.LLMError`. Rate limits,
5xx, timeouts and dropped connections are retried up to ``max_retries`` times with
exponential, jittered backoff (tenacity), waiting at least what a ``Retry-After`` header
asks; every request is measured (:mod:`agents.llm.accounting`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from agents.llm.accounting import (
    OK,
    CallLedger,
    CallRecord,
    LLMMetrics,
    RequestRecord,
    default_metrics,
    log_request,
)
from agents.llm.classify import classify
from agents.llm.config import LLMConfig
from agents.llm.errors import LLMError
from agents.llm.providers import inline_refs, structured

#: An endpoint's refusal of OpenAI's json_schema form (llama-cpp-python's server: a 500 whose
#: validation error names ``response_format``): the request is sent again in its own form.
_FORMAT_REFUSED = re.compile(r"response_format")

MAX_BACKOFF = 60.0
Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation."""

    role: Role
    content: str


@dataclass(frozen=True)
class ChatReply:
    """The model's answer to one call."""

    text: str
    call: CallRecord


class ChatClient:
    """Calls one model; owns the retry policy and the accounting of every request."""

    def __init__(
        self, config: LLMConfig, model: BaseChatModel, *, ledger: CallLedger | None = None,
        metrics: LLMMetrics | None = None, sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.model = model
        self.ledger = ledger if ledger is not None else CallLedger()
        self.metrics = metrics or default_metrics()
        self._sleep = sleep
        self._json_object = False  # an endpoint that refused OpenAI's json_schema form got the other

    def complete(self, messages: Sequence[ChatMessage], purpose: str = "chat",
                 schema: dict[str, Any] | None = None) -> ChatReply:
        """Ask for one completion of ``messages`` (with ``schema``: structured output in that JSON Schema,
        as the provider offers it: :func:`agents.llm.providers.structured`).

        Raises:
            LLMError: the request failed for good (not transient, or retries used up).
        """
        requests: list[RequestRecord] = []
        prompt_chars = sum(len(m.content) for m in messages)
        try:
            text = self._asked(messages, purpose, requests, schema)
        except LLMError as exc:
            exc.tries = len(requests)
            self._keep(purpose, exc.kind.value, requests, prompt_chars, 0)
            raise
        call = self._keep(purpose, OK, requests, prompt_chars, len(text))
        return ChatReply(text, call)

    def _asked(self, messages: Sequence[ChatMessage], purpose: str, requests: list[RequestRecord],
               schema: dict[str, Any] | None) -> str:
        """The reply's text; a server that refuses ``response_format`` is asked again, once, in its own
        ``json_object`` form, which is kept for the rest of the run."""
        while True:
            try:
                return str(self._retrying()(self._request, _to_langchain(messages), purpose, requests,
                                            self._shaped(schema, purpose)))
            except LLMError as exc:
                if schema is None or self._json_object or not _FORMAT_REFUSED.search(exc.message):
                    raise
                self._json_object = True  # the loop ends: this branch is taken at most once

    def _shaped(self, schema: dict[str, Any] | None, purpose: str) -> Runnable[Any, Any]:
        """The model, asked for ``schema`` in the form this endpoint takes (see :func:`structured`)."""
        if schema is None:
            return self.model
        return structured(self.model, self.config.provider, inline_refs(schema), purpose,
                          json_object=self._json_object)

    def _retrying(self) -> Retrying:
        backoff = wait_exponential_jitter(initial=self.config.backoff_seconds, max=MAX_BACKOFF,
                                          jitter=self.config.backoff_seconds / 2)
        return Retrying(
            retry=retry_if_exception(lambda exc: isinstance(exc, LLMError) and exc.transient
                                     and not _FORMAT_REFUSED.search(exc.message)),  # no retry can help
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=lambda state: _wait(state, backoff),
            sleep=self._sleep,
            reraise=True,
        )

    def _request(self, messages: list[BaseMessage], purpose: str, requests: list[RequestRecord],
                 model: Runnable[Any, Any] | None = None) -> str:
        started = time.monotonic()
        try:
            reply = (model or self.model).invoke(messages)
        except Exception as exc:  # noqa: BLE001 - every provider error is classified, none escapes raw
            error = classify(exc, self.config.secrets())
            self._count(purpose, requests, RequestRecord(
                error.kind.value, time.monotonic() - started, status=error.status, error=error.message))
            raise error from None
        tokens_in, tokens_out = _usage(reply)
        self._count(purpose, requests, RequestRecord(OK, time.monotonic() - started, tokens_in, tokens_out))
        return _text(reply)

    def _count(self, purpose: str, requests: list[RequestRecord], request: RequestRecord) -> None:
        requests.append(request)
        self.metrics.observe(self.config.provider, self.config.model, request)
        log_request(self.config.provider, self.config.model, purpose, len(requests), request)

    def _keep(self, purpose: str, outcome: str, requests: list[RequestRecord],
              prompt_chars: int, reply_chars: int) -> CallRecord:
        call = CallRecord(self.config.provider, self.config.model, purpose, outcome,
                          tuple(requests), prompt_chars, reply_chars)
        self.ledger.add(call)
        return call


def _wait(state: RetryCallState, backoff: Callable[[RetryCallState], float]) -> float:
    """The backoff delay, or longer if the server asked for it with Retry-After."""
    delay = backoff(state)
    outcome = state.outcome
    error = outcome.exception() if outcome is not None else None
    if isinstance(error, LLMError) and error.retry_after is not None:
        delay = max(delay, error.retry_after)
    return min(delay, MAX_BACKOFF * 2)


def _to_langchain(messages: Sequence[ChatMessage]) -> list[BaseMessage]:
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[m.role](content=m.content) for m in messages]


def _usage(reply: BaseMessage) -> tuple[int | None, int | None]:
    usage = getattr(reply, "usage_metadata", None) or {}
    return usage.get("input_tokens"), usage.get("output_tokens")


def _text(reply: BaseMessage) -> str:
    """The reply's text, whether its content is a string or a list of parts (Gemini)."""
    return str(reply.text)
