"""Executions the infrastructure lost, run again: bounded tries, exponential backoff with jitter.

A backend raises :class:`~agents.ports.errors.InfraFault` when the engine or the cluster lost
an execution through nothing the program did: the container vanished or was killed from
outside, the engine or the API server did not answer, the image went missing, the Pod was
evicted for the node's sake or its node was lost. :class:`RetryingSandbox` runs such an
execution again, each time in a fresh sandbox, up to ``tries`` times in all, waiting
``backoff_seconds * 2**n`` plus up to ``backoff_seconds`` of jitter (at most
``max_backoff_seconds``) between tries (tenacity's ``wait_exponential_jitter``).

What is never retried: anything the program did. A :class:`~agents.ports.sandbox.SandboxResult`
is returned as it is, whatever it says (a timeout, an OOM kill, a non-zero exit, output cut
at its limit), and so is every other :class:`~agents.ports.errors.SandboxError` (inputs that
do not fit, a request the engine refuses as malformed, an image the cluster cannot pull).

Why running hostile code again is safe: every try is a new, throwaway sandbox with the same
inputs (the backend removes the lost one in its own ``finally``); nothing of a lost try is
read back or kept (its output and files are dropped with it), and the caller writes its
artefacts only from the result it is finally given. Each retry is a ``sandbox.infra_retry``
warning (image, reason, try, wait); the result carries the reasons (``infra_retries``: in the
attempt's ``sandbox.json`` and the run history, hence ``sbx_sandbox_infra_retries_total``).
A real outage is not hidden: after the last try the execution fails with one line naming
every reason (:class:`InfraRetriesExhausted`, an environment fault: exit 3, status ``error``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import structlog
from pydantic import BaseModel, Field, model_validator
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from agents.ports.errors import InfraFault, SandboxError
from agents.ports.sandbox import Sandbox, SandboxResult, SandboxSpec
from controller.platform.observability.metrics import image_label
from controller.platform.sandbox.instrumented import InstrumentedSandbox
from controller.platform.stop import PROCESS

log = structlog.get_logger("sandloop.sandbox")


class InfraRetrySettings(BaseModel):
    """How often an execution the infrastructure lost is run again (``SBX_INFRA_RETRY__*``)."""

    tries: int = Field(
        3, ge=1, le=10, description="Tries of one sandbox execution the infrastructure lost (container gone, "
        "engine or API server unreachable, image missing, Pod evicted, node lost) before the attempt fails as "
        "an environment fault; 1 turns retries off."
    )
    backoff_seconds: float = Field(
        1.0, gt=0, le=60, description="Wait before the second try; doubled for each later one, plus up to as "
        "much again of random jitter."
    )
    max_backoff_seconds: float = Field(
        10.0, gt=0, le=600, description="Longest wait between two tries."
    )

    @model_validator(mode="after")
    def _cap_above_base(self) -> InfraRetrySettings:
        if self.max_backoff_seconds < self.backoff_seconds:
            raise ValueError("max_backoff_seconds must be at least backoff_seconds")
        return self


class InfraRetriesExhausted(SandboxError):
    """Every try of an execution was lost by the infrastructure: an environment fault (exit 3).

    Attributes:
        reasons: Why each try was lost, oldest first.
    """

    def __init__(self, image: str, faults: list[InfraFault], seconds: float) -> None:
        reasons = tuple(fault.reason for fault in faults)
        last = faults[-1]
        super().__init__(
            f"the sandbox infrastructure lost the execution in {image} {len(faults)} time(s) in {seconds:.1f} s "
            f"({', '.join(reasons)}); the last time: {last.message}",
            hint=last.hint or "check the engine (docker info) or the cluster, then resume the run",
        )
        self.reasons = reasons


class RetryingSandbox:
    """Wraps a backend: same ``run``, with executions the infrastructure lost run again."""

    def __init__(self, inner: Sandbox, settings: InfraRetrySettings,
                 sleep: Callable[[float], None] = PROCESS.sleep) -> None:
        """Wrap ``inner``.

        Args:
            inner: The backend (Docker or Kubernetes).
            settings: Tries and backoff.
            sleep: How to wait between tries: by default the process's stop switch's, which
                raises :class:`~controller.platform.stop.Stopped` at once when the process is
                told to stop (no new try starts then either: the backend refuses it). Tests
                pass a recorder.
        """
        self.inner = inner
        self.settings = settings
        self._sleep = sleep

    def run(self, spec: SandboxSpec) -> SandboxResult:
        """Run ``spec``; run it again in a fresh sandbox while the infrastructure loses it.

        Raises:
            InfraRetriesExhausted: every try was lost.
            SandboxError: any other engine failure, at once (never retried).
        """
        faults: list[InfraFault] = []
        started = time.monotonic()
        try:
            for attempt in self._retrying(spec, faults):
                with attempt:
                    result = self.inner.run(spec)
        except InfraFault as exc:
            faults.append(exc)
            log.error("sandbox.infra_exhausted", image=spec.image, tries=len(faults),
                      reasons=[f.reason for f in faults], error=exc.one_line()[:500])
            raise InfraRetriesExhausted(spec.image, faults, time.monotonic() - started) from exc
        if not faults:
            return result
        return dataclasses.replace(result, infra_retries=tuple(fault.reason for fault in faults))

    def _retrying(self, spec: SandboxSpec, faults: list[InfraFault]) -> Retrying:
        settings = self.settings

        def before_sleep(state: RetryCallState) -> None:
            fault = state.outcome.exception() if state.outcome is not None else None
            if not isinstance(fault, InfraFault):  # only InfraFault is retried (retry_if_exception_type)
                return
            faults.append(fault)
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            log.warning("sandbox.infra_retry", image=spec.image, image_label=image_label(spec.image),
                        reason=fault.reason, attempt=spec.labels.get("attempt", ""), try_number=state.attempt_number,
                        tries=settings.tries, wait_seconds=round(wait, 3), error=fault.one_line()[:500])

        return Retrying(
            stop=stop_after_attempt(settings.tries),
            wait=wait_exponential_jitter(initial=settings.backoff_seconds, max=settings.max_backoff_seconds,
                                         jitter=settings.backoff_seconds),
            retry=retry_if_exception_type(InfraFault),
            before_sleep=before_sleep,
            sleep=self._sleep,
            reraise=True,
        )


def guarded(backend: Sandbox, settings: InfraRetrySettings) -> InstrumentedSandbox:
    """The sandbox every command uses: ``backend`` with lost executions retried, each execution
    logged and recorded once (with the retries it took)."""
    return InstrumentedSandbox(RetryingSandbox(backend, settings))
