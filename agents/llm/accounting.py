"""Every request to a model is counted, timed and logged; every call is kept for the run.

A *request* is one HTTP exchange; a *call* is what a coder asked for (one completion),
which may take several requests when transient errors are retried. Requests feed the
Prometheus metrics and a structured log line; calls are kept in a :class:`CallLedger`
that a coder writes next to each attempt (``llm.json``). Prompts, replies and keys are
never logged: only sizes, counts, timings and outcomes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import structlog
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

LOGGER = "sandloop.llm"

#: Outcome label of a request that returned a reply.
OK = "ok"


@dataclass(frozen=True)
class RequestRecord:
    """One HTTP request to the model: its outcome, size and latency."""

    outcome: str
    seconds: float
    tokens_in: int | None = None
    tokens_out: int | None = None
    status: int | None = None
    error: str = ""


@dataclass(frozen=True)
class CallRecord:
    """One completion a coder asked for, with every request it took."""

    provider: str
    model: str
    purpose: str
    outcome: str
    requests: tuple[RequestRecord, ...]
    prompt_chars: int
    reply_chars: int = 0

    @property
    def tokens_in(self) -> int:
        """Prompt tokens over all requests (0 where the server did not say)."""
        return sum(r.tokens_in or 0 for r in self.requests)

    @property
    def tokens_out(self) -> int:
        """Reply tokens over all requests."""
        return sum(r.tokens_out or 0 for r in self.requests)

    @property
    def seconds(self) -> float:
        """Time spent in requests (backoff sleeps excluded)."""
        return sum(r.seconds for r in self.requests)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record (for ``llm.json``)."""
        return {**asdict(self), "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "seconds": round(self.seconds, 3)}


class LLMMetrics:
    """The Prometheus series of the LLM layer, on a given registry (default: the global one)."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.requests = Counter(
            "sbx_llm_requests", "Requests to a language model, by provider, model and outcome.",
            ("provider", "model", "outcome"), registry=registry,
        )
        self.tokens = Counter(
            "sbx_llm_tokens", "Tokens sent to (in) and received from (out) a language model.",
            ("provider", "model", "direction"), registry=registry,
        )
        self.latency = Histogram(
            "sbx_llm_request_seconds", "Latency of one request to a language model.",
            ("provider", "model"), registry=registry,
            buckets=(0.1, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
        )

    def observe(self, provider: str, model: str, request: RequestRecord) -> None:
        """Count one request."""
        self.requests.labels(provider, model, request.outcome).inc()
        self.latency.labels(provider, model).observe(request.seconds)
        if request.tokens_in:
            self.tokens.labels(provider, model, "in").inc(request.tokens_in)
        if request.tokens_out:
            self.tokens.labels(provider, model, "out").inc(request.tokens_out)


_default_metrics: LLMMetrics | None = None


def default_metrics() -> LLMMetrics:
    """The process-wide metrics on the global registry (created once)."""
    global _default_metrics
    if _default_metrics is None:
        _default_metrics = LLMMetrics()
    return _default_metrics


@dataclass
class CallLedger:
    """The calls one coder made, in order; ``since(n)`` gives those of one attempt."""

    calls: list[CallRecord] = field(default_factory=list)

    def add(self, call: CallRecord) -> None:
        """Keep ``call``."""
        self.calls.append(call)

    def since(self, start: int) -> list[CallRecord]:
        """Calls made after the first ``start``."""
        return self.calls[start:]


def log_request(provider: str, model: str, purpose: str, try_number: int, request: RequestRecord) -> None:
    """One structured line per request: outcome, tokens, latency; no prompt, reply or key."""
    fields = {"provider": provider, "model": model, "purpose": purpose, "try": try_number,
              "outcome": request.outcome, "seconds": round(request.seconds, 3),
              "tokens_in": request.tokens_in, "tokens_out": request.tokens_out}
    log = structlog.get_logger(LOGGER)  # per call: never a logger cached under an older configuration
    if request.outcome == OK:
        log.info("llm.request", **fields)
    else:
        log.warning("llm.request", **fields, status=request.status, error=request.error)
