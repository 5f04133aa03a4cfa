"""A sandbox wrapper that logs and measures every execution, whatever the backend.

It implements the same :class:`~agents.ports.sandbox.Sandbox` protocol as the backend it
wraps, so callers do not change. Each execution is one ``sandbox.executed`` log event (image,
container id, limits, exit code, timed_out, oom_killed, outcome, duration, output sizes),
or ``sandbox.engine_error`` when the engine failed (the :class:`SandboxError` is re-raised),
each with the infrastructure retries it took (``infra_retries``),
and one :class:`~controller.platform.observability.history.SandboxRecord` handed to the listeners
(the run's recorder keeps them in the history).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from agents.ports.errors import SandboxError
from agents.ports.sandbox import Sandbox, SandboxResult, SandboxSpec
from controller.platform.observability.history import SandboxRecord
from controller.platform.observability.metrics import image_label

log = structlog.get_logger("sandloop.sandbox")
Listener = Callable[[SandboxRecord], None]


class InstrumentedSandbox:
    """Wraps a :class:`Sandbox`: same ``run``, plus a log event and a record per execution."""

    def __init__(self, inner: Sandbox, clock: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self._clock = clock
        self._listeners: list[Listener] = []

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener`` with the record of every later execution."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener`` (no error if it was not added)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def run(self, spec: SandboxSpec) -> SandboxResult:
        """Run ``spec`` on the wrapped backend, logging and recording what happened."""
        started = self._clock()
        try:
            result = self.inner.run(spec)
        except SandboxError as exc:
            seconds = self._clock() - started
            retries = tuple(getattr(exc, "reasons", ()))
            log.error("sandbox.engine_error", **_spec_fields(spec), outcome="engine_error",
                      duration_seconds=round(seconds, 6), error=exc.one_line(), infra_retries=list(retries))
            self._notify(_record(spec, "engine_error", seconds, None, retries=retries))
            raise
        seconds = self._clock() - started
        log.info("sandbox.executed", **_spec_fields(spec), **_result_fields(result),
                 duration_seconds=round(seconds, 6))
        self._notify(_record(spec, result.outcome, seconds, result.exit_code, result))
        return result

    def _notify(self, record: SandboxRecord) -> None:
        for listener in list(self._listeners):
            listener(record)


def _spec_fields(spec: SandboxSpec) -> dict[str, object]:
    return {"image": spec.image, "limits": spec.limits.model_dump(), "inputs": sorted(spec.inputs),
            "input_bytes": sum(len(data) for data in spec.inputs.values())}


def _result_fields(result: SandboxResult) -> dict[str, object]:
    return {
        "container_id": result.container_id,
        "outcome": result.outcome,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "oom_killed": result.oom_killed,
        "run_seconds": round(result.wall_seconds, 6),
        "warm": result.warm,
        "stdout_bytes": result.stdout.total_bytes,
        "stdout_truncated": result.stdout.truncated,
        "stderr_bytes": result.stderr.total_bytes,
        "stderr_truncated": result.stderr.truncated,
        "files_collected": sorted(result.files),
        "collected_bytes": sum(len(data) for data in result.files.values()),
        "truncated_files": list(result.truncated_files),
        "pids_limited": result.pids_limited,
        "infra_retries": list(result.infra_retries),
    }


def _record(
    spec: SandboxSpec, outcome: str, seconds: float, exit_code: int | None, result: SandboxResult | None = None,
    retries: tuple[str, ...] = (),
) -> SandboxRecord:
    attempt = spec.labels.get("attempt", "0")
    return SandboxRecord(
        image=image_label(spec.image), image_ref=spec.image, outcome=outcome, seconds=seconds,
        exit_code=exit_code, attempt=int(attempt) if attempt.isdigit() else 0,
        pool=_pool_use(spec, result), warmup_seconds=result.warmup_seconds if result else None,
        infra_retries=result.infra_retries if result else retries,
    )


def _pool_use(spec: SandboxSpec, result: SandboxResult | None) -> str:
    """hit: served by a warm container; miss: could have been, ran cold; none: not poolable."""
    if spec.warm_command is None:
        return "none"
    return "hit" if result is not None and result.warm else "miss"
