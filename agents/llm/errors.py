"""Errors of the LLM layer.

:class:`LLMError` is what a chat call ends with when it fails, whatever the provider: its
:class:`ErrorKind` says whether another try could succeed (rate limits, 5xx, timeouts,
dropped connections) or not (a rejected key, an unknown model, a bad request).
:class:`LLMUnavailable` is the user-facing, before-the-run form: the endpoint cannot be
reached, exit 2 like a missing Docker engine.
"""

from __future__ import annotations

from enum import StrEnum

from agents.ports.errors import UsageError


class ErrorKind(StrEnum):
    """Why a request failed; bounded, so it can label metrics."""

    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    AUTH = "auth"
    MODEL_NOT_FOUND = "model_not_found"
    BAD_REQUEST = "bad_request"
    CONTEXT_OVERFLOW = "context_overflow"
    UNKNOWN = "error"


#: Kinds that a later try of the same request may not meet again.
TRANSIENT = frozenset({ErrorKind.RATE_LIMITED, ErrorKind.SERVER_ERROR, ErrorKind.TIMEOUT, ErrorKind.UNREACHABLE})


class LLMError(Exception):
    """A chat request failed; ``message`` is safe to show and log (the key is redacted).

    Attributes:
        kind: Why it failed.
        message: One line, at most a few hundred characters.
        status: The HTTP status, when there was one.
        retry_after: Seconds the server asked to wait (``Retry-After``), if it said.
        tries: How many requests were made before giving up (set by the client).
    """

    def __init__(
        self, kind: ErrorKind, message: str, *, status: int | None = None,
        retry_after: float | None = None, tries: int = 1,
    ) -> None:
        super().__init__(f"{kind.value}: {message}")
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.tries = tries

    @property
    def transient(self) -> bool:
        """Whether retrying the same request may succeed."""
        return self.kind in TRANSIENT


class LLMUnavailable(UsageError):
    """The model's endpoint cannot be reached before the run starts; the user must fix it."""
