"""Everything a run does for observability, from its start to its end.

``observe_run`` binds the run's context (run id, agent, target) for every log line, writes the
run's events to ``runs/<run_id>/events.jsonl``, collects node and sandbox records while the
run goes on, and at the end appends the run to the durable history and, where a Pushgateway
is configured, pushes the run's result there. A run that raises (engine failure, a bug) is
recorded with status ``error`` before the exception goes on (``run.errored``; a refusal of
the user's input, exit 2, as ``run.refused`` at info level: ``loop.refused`` warned once); an interrupted run (Ctrl-C)
is logged but not recorded, since it has no outcome.

Neither a history write nor a push that fails changes the run's result or exit status: they
are logged as errors/warnings and the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from agents.ports.errors import PlatformError, RunPaused, refused
from agents.ports.outcome import RunSummary
from controller.platform.observability.handoff import HandoffHistory
from controller.platform.observability.history import (
    HistoryError,
    HistoryStore,
    NodeRecord,
    RunRecord,
    SandboxRecord,
)
from controller.platform.observability.logs import run_log_file
from controller.platform.observability.push import PUSH_JOB, push_run
from controller.platform.progress import OutputClosed
from controller.platform.settings import ObservabilitySettings, Settings

log = structlog.get_logger("sandloop.run")
EVENTS_FILE = "events.jsonl"
HISTORY_FILE = "history.sqlite"


def history_path(settings: Settings) -> Path:
    """Where the run history lives: the configured path, else ``<runs_dir>/history.sqlite``."""
    return settings.observability.history_path or settings.runs_dir / HISTORY_FILE


def run_history_of(settings: Settings) -> HistoryStore | HandoffHistory:
    """Where a run records its end: its folder's hand-off (a service's run on PostgreSQL), else the file."""
    if settings.handoff_dir is not None:
        return HandoffHistory(settings.handoff_dir)
    return HistoryStore(history_path(settings))


@dataclass
class RunObserver:
    """Collects one run's node and sandbox records and records the run at its end."""

    run_id: str
    agent: str
    target: str
    max_attempts: int
    coder: str
    history: HistoryStore | HandoffHistory
    observability: ObservabilitySettings
    started_at: float = field(default_factory=time.time)
    started_monotonic: float = field(default_factory=time.monotonic)
    nodes: list[NodeRecord] = field(default_factory=list)
    sandbox: list[SandboxRecord] = field(default_factory=list)
    recorded: RunRecord | None = None

    def node(self, node: str, attempt: int, outcome: str, seconds: float) -> None:
        """Keep one finished node's record."""
        self.nodes.append(NodeRecord(node, attempt, outcome, seconds))

    def sandbox_executed(self, record: SandboxRecord) -> None:
        """Keep one sandbox execution's record (an InstrumentedSandbox listener)."""
        self.sandbox.append(record)

    def finish(self, summary: RunSummary) -> RunRecord:
        """Log the run's end, append it to the history and push it; return what was recorded."""
        run = self._record(summary.status, summary.attempts, tuple(summary.failures),
                           summary.wall_seconds, summary.sandbox_seconds)
        log.info("run.finished", status=run.status, attempts=run.attempts, max_attempts=run.max_attempts,
                 duration_seconds=round(run.duration_seconds, 6),
                 sandbox_seconds=round(run.sandbox_seconds, 6), failures=list(run.failures),
                 retries=list(run.retries), parser=summary.parser_path, run_dir=summary.run_dir)
        self._keep(run)
        return run

    def fail(self, exc: BaseException) -> RunRecord:
        """Record a run that ended with an exception as status ``error``."""
        message = exc.one_line() if isinstance(exc, PlatformError) else f"{type(exc).__name__}: {exc}"
        attempts = max((n.attempt for n in self.nodes), default=0)
        sandbox_seconds = sum(s.seconds for s in self.sandbox)
        run = self._record("error", attempts, (), time.monotonic() - self.started_monotonic,
                           sandbox_seconds, error=message[:500])
        fields = {"status": "error", "attempts": attempts, "error": run.error, "error_type": type(exc).__name__,
                  "duration_seconds": round(run.duration_seconds, 6)}
        if refused(exc):  # the user's input was refused (exit 2; loop.refused warned once): not an error of ours
            log.info("run.refused", **fields)
        else:
            log.error("run.errored", **fields)
        self._keep(run)
        return run

    def _record(self, status: str, attempts: int, failures: tuple[str, ...], seconds: float,
                sandbox_seconds: float, error: str = "") -> RunRecord:
        return RunRecord(
            run_id=self.run_id, agent=self.agent, target=self.target, status=status,
            attempts=attempts, max_attempts=self.max_attempts, started_at=self.started_at,
            finished_at=time.time(), duration_seconds=seconds, sandbox_seconds=sandbox_seconds,
            coder=self.coder, failures=failures, nodes=tuple(self.nodes), sandbox=tuple(self.sandbox),
            error=error,
        )

    def _keep(self, run: RunRecord) -> None:
        self.recorded = run
        try:
            self.history.record(run)
            log.info("history.recorded", path=self.history.label)
        except HistoryError as exc:
            log.error("history.write_failed", path=self.history.label, error=exc.one_line())
        self._push(run)

    def _push(self, run: RunRecord) -> None:
        url = self.observability.pushgateway_url
        if not url:
            return
        try:
            last_success = self.history.last_success(run.agent, run.target)
        except HistoryError:
            last_success = run.finished_at if run.status == "passed" else None
        try:
            push_run(url, run, last_success, self.observability.push_timeout_seconds)
        except OSError as exc:
            log.warning("push.failed", pushgateway=url, job=PUSH_JOB, error=f"{type(exc).__name__}: {exc}")
            return
        log.info("push.done", pushgateway=url, job=PUSH_JOB)


@contextmanager
def observe_run(
    settings: Settings, *, run_id: str, agent: str, target: str, coder: str, max_attempts: int | None = None,
    sandbox: object = None,
) -> Iterator[RunObserver]:
    """Observe one run: context, events.jsonl, history and push (see the module docstring).

    Args:
        settings: The program's settings (runs dir, history path, Pushgateway).
        run_id, agent, target: What every log line of the run is bound to.
        coder: The coder's name, kept in the history.
        max_attempts: The run's attempt limit (its plan's); default the settings'.
        sandbox: An :class:`~controller.platform.sandbox.instrumented.InstrumentedSandbox` whose
            executions belong to this run (anything without ``add_listener`` is ignored).
    """
    max_attempts = settings.max_attempts if max_attempts is None else max_attempts
    observer = RunObserver(run_id, agent, target, max_attempts, coder,
                           run_history_of(settings), settings.observability)
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(run_id=run_id, agent=agent, target=target)
    listen = getattr(sandbox, "add_listener", None)
    if listen is not None:
        listen(observer.sandbox_executed)
    try:
        with run_log_file(settings.runs_dir / run_id / EVENTS_FILE):
            log.info("run.started", max_attempts=max_attempts, coder=coder)
            yield from _guard(observer)
    finally:
        if listen is not None:
            sandbox.remove_listener(observer.sandbox_executed)  # type: ignore[attr-defined]
        structlog.contextvars.clear_contextvars()


def _guard(observer: RunObserver) -> Iterator[RunObserver]:
    try:
        yield observer
    except KeyboardInterrupt:
        log.warning("run.interrupted", attempts=max((n.attempt for n in observer.nodes), default=0))
        raise
    except OutputClosed:
        log.warning("run.output_closed", attempts=max((n.attempt for n in observer.nodes), default=0))
        raise
    except RunPaused as paused:  # not over: recorded when it ends, after it is resumed
        log.info("run.paused", reason=paused.message[:300])
        raise
    except Exception as exc:
        if observer.recorded is None:
            observer.fail(exc)
        raise
