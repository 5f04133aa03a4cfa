"""Turn any provider's exception into an :class:`LLMError` with a kind and a safe message.

LangChain's OpenAI and Google integrations already raise its provider-neutral
``ModelError`` family (rate limit, timeout, connection, server, auth, not found, bad
request); Ollama's client raises ``ResponseError`` with a status, and transports raise
httpx or builtin connection errors. Each is mapped once, here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import httpx
import openai
from langchain_core import exceptions as lc

from agents.llm.errors import ErrorKind, LLMError

MAX_MESSAGE = 400
MAX_RETRY_AFTER = 120.0
#: Shorter "secrets" are not redacted: replacing them would mangle ordinary words.
MIN_SECRET = 8

#: LangChain's model errors, most specific first (ContextOverflowError is a ModelError too).
_LANGCHAIN_KINDS: tuple[tuple[type[BaseException], ErrorKind], ...] = (
    (lc.ContextOverflowError, ErrorKind.CONTEXT_OVERFLOW),
    (lc.ModelRateLimitError, ErrorKind.RATE_LIMITED),
    (lc.ModelTimeoutError, ErrorKind.TIMEOUT),
    (lc.ModelConnectionError, ErrorKind.UNREACHABLE),
    (lc.ModelAPIError, ErrorKind.SERVER_ERROR),
    (lc.ModelAuthenticationError, ErrorKind.AUTH),
    (lc.ModelPermissionDeniedError, ErrorKind.AUTH),
    (lc.ModelNotFoundError, ErrorKind.MODEL_NOT_FOUND),
    (lc.ModelInvalidRequestError, ErrorKind.BAD_REQUEST),
)


def kind_of_status(status: int) -> ErrorKind:
    """The kind an HTTP status stands for."""
    if status == 429:
        return ErrorKind.RATE_LIMITED
    if status == 408:
        return ErrorKind.TIMEOUT
    if status >= 500:
        return ErrorKind.SERVER_ERROR
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 404:
        return ErrorKind.MODEL_NOT_FOUND
    if status in (400, 413, 422):
        return ErrorKind.BAD_REQUEST
    return ErrorKind.UNKNOWN


def classify(exc: BaseException, secrets: Iterable[str] = ()) -> LLMError:
    """The :class:`LLMError` for ``exc``; any of ``secrets`` in its text is replaced by ***."""
    if isinstance(exc, LLMError):
        return exc
    status = _status(exc)
    kind = _kind(exc, status)
    message = redact(_describe(exc), secrets)
    return LLMError(kind, message, status=status, retry_after=_retry_after(exc))


def _kind(exc: BaseException, status: int | None) -> ErrorKind:
    for cls, kind in _LANGCHAIN_KINDS:
        if isinstance(exc, cls):
            return kind
    if isinstance(exc, (httpx.TimeoutException, TimeoutError, openai.APITimeoutError)):
        return ErrorKind.TIMEOUT
    if isinstance(exc, (httpx.TransportError, ConnectionError, openai.APIConnectionError)):
        return ErrorKind.UNREACHABLE
    if status is not None:
        return kind_of_status(status)
    return ErrorKind.UNKNOWN


def _status(exc: BaseException) -> int | None:
    """The HTTP status an SDK exception (or the one it wraps) carries."""
    for error in _chain(exc):
        for attribute in ("status_code", "code", "status"):
            value = getattr(error, attribute, None)
            if isinstance(value, int) and 100 <= value <= 599:
                return value
        value = getattr(getattr(error, "response", None), "status_code", None)
        if isinstance(value, int):
            return value
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it wraps (LangChain re-raises SDK errors ``from`` them)."""
    chain = [exc]
    while len(chain) < 4 and (cause := chain[-1].__cause__ or chain[-1].__context__) is not None:
        chain.append(cause)
    return chain


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` header (numeric form only), capped."""
    raw = None
    for error in _chain(exc):
        headers = getattr(getattr(error, "response", None), "headers", None)
        try:
            raw = headers.get("retry-after") if headers is not None else None
        except (AttributeError, TypeError):
            raw = None
        if raw is not None:
            break
    try:
        seconds = float(raw) if raw is not None else None
    except ValueError:
        return None
    return None if seconds is None or seconds < 0 else min(seconds, MAX_RETRY_AFTER)


def _describe(exc: BaseException) -> str:
    """``Type: message``, plus the root cause when the SDK's own message hides it."""
    text = f"{type(exc).__name__}: {' '.join(str(exc).split()) or '(no message)'}"
    root = _chain(exc)[-1]
    if root is not exc and str(root) and str(root) not in text:
        text += f" ({type(root).__name__}: {' '.join(str(root).split())})"
    return text[:MAX_MESSAGE]


def root_cause(exc: BaseException, secrets: Iterable[str] = ()) -> str:
    """``Type: message`` of the innermost exception ``exc`` wraps (e.g. the refused connection)."""
    root = _chain(exc)[-1]
    return redact(f"{type(root).__name__}: {' '.join(str(root).split())}"[:MAX_MESSAGE], secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (and any ``key=...`` query value) replaced by ***."""
    for secret in secrets:
        if len(secret) >= MIN_SECRET:
            text = text.replace(secret, "***")
    return re.sub(r"(?i)([?&](?:key|api_key|token)=)[^&\s'\"]+", r"\1***", text)
