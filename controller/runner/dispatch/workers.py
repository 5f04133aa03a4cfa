"""The service's workers: claim queued runs, run each as a child process, keep leases alive.

``SBX_PARALLEL_RUNS`` worker threads each claim one run at a time from the store and run it
as ``python -m controller run`` (see :mod:`controller.runner.dispatch.child`), forked from a warm
parent unless ``SBX_SERVICE__WARM_WORKERS`` is off (:mod:`controller.runner.dispatch.launch`), journaling its
lines and nodes in the store for the event stream (:mod:`controller.runner.dispatch.journal`).
One supervisor thread renews this process's leases every ``renew_seconds``, delivers
cancellations to the children (SIGINT to the process group, SIGKILL after
``CANCEL_GRACE_SECONDS``), takes over runs whose worker died, and sweeps uploads.

A run whose worker died goes back to the queue, whatever it had done: one that had started
(its run.json) is resumed from its last checkpoint, one that had not starts afresh; nothing
of it is lost. A worker is known dead when its lease ran out, or at once when it ran on this
host and its process is gone (a service restarted after ``kill -9`` takes its predecessor's
runs over as it starts, not a lease later). Only a run whose workers died
``max_takeovers`` times already ends as ``error`` (a run that kills its worker every time).

A conversation (intake) run over the service stops, checkpointed, when it has no reply for
its question (the child exits 75 and leaves question.json): its row goes to ``waiting``,
holding no worker and no lease; ``POST /v1/runs/{id}/input`` stores the reply and queues it
again, and the worker that claims it resumes it (``--resume``) from that checkpoint.

Drain (``stop``): claim nothing more, interrupt the children (they remove their containers
and keep their checkpoints), wait up to ``drain_seconds``, kill what is left, and give the
interrupted runs back to the queue, so the next start resumes them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import structlog

from agents.ports.replies import read_question
from controller.platform import shared_state
from controller.platform.fence import write_claim
from controller.platform.sandbox.labels import alive, started_ticks
from controller.platform.sandbox.warm_offer import OFFER_ENV
from controller.platform.sandbox.worker_sandboxes import WorkerSandboxes, wanted
from controller.platform.settings import Settings, child_env
from controller.platform.store import RunRow, RunStatus, RunStore, StoreError
from controller.platform.uploads import upload_dir
from controller.runner.dispatch import child, housekeeping
from controller.runner.dispatch.journal import RunJournal, Scrubber, question_event
from controller.runner.dispatch.launch import Launcher, RunProcess
from controller.runner.dispatch.warm_child import LATE_PREFIX

log = structlog.get_logger("sandloop.service")
CANCEL_GRACE_SECONDS = 10.0
STDERR_TAIL = 8192
#: Exit statuses of a child stopped by a drain (SIGINT handled, or killed).
STOPPED = frozenset({130, -signal.SIGINT, -signal.SIGKILL, -signal.SIGTERM})
#: A run's child command line, from its row and its run folder.
Command = Callable[[RunRow, Path], list[str]]


def new_worker_id() -> str:
    """This process's identity in the store's leases: host, pid and the process's start time (a pid
    comes back after a restart: a container's service is pid 1 every time), and a random part."""
    started = started_ticks(os.getpid())
    return f"{socket.gethostname()}:{os.getpid()}.{'' if started is None else started}:{secrets.token_hex(3)}"


#: The service's own store settings: a run's child never opens the store, so it never gets its DSN.
STORE_VARIABLES = ("SBX_SERVICE__STORE", "SBX_SERVICE__POSTGRES_DSN")


def run_env(settings: Settings) -> dict[str, str]:
    """The environment of the service's run children: a batch child's, without the store's secret."""
    return {key: value for key, value in child_env(settings).items() if key.upper() not in STORE_VARIABLES}


def signal_group(proc: RunProcess, sig: int) -> None:
    """Send ``sig`` to the child's process group (itself and anything it started); to the child
    alone if its group is not there yet (a warm fork makes its group first thing, not at birth)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)
    except PermissionError:
        pass


class RunWorkers:
    """Runs the store's queued runs, ``workers`` at a time, as child processes."""

    def __init__(self, settings: Settings, store: RunStore, *, worker_id: str | None = None,
                 command: Command = child.command,
                 env: dict[str, str] | None = None, wake: threading.Event | None = None,
                 notify: Callable[[str], None] = lambda run_id: None, launcher: Launcher | None = None,
                 sandboxes: WorkerSandboxes | None = None) -> None:
        self.settings = settings
        self.store = store
        self.worker_id = worker_id or new_worker_id()
        self.workers = settings.parallel_runs
        self._command = command
        self._env = env if env is not None else run_env(settings)
        self._stopping = threading.Event()
        self._wake = wake or threading.Event()
        self._notify = notify  # the run's console grew or the run ended: its event streams read again
        self._lock = threading.Lock()
        self._launcher = launcher or Launcher(warm=settings.service.warm_workers)
        # Warm containers handed to the runs (their pool follows the number of workers).
        self.sandboxes = sandboxes or (WorkerSandboxes(settings, self.workers) if wanted(settings) else None)
        self._children: dict[str, RunProcess] = {}
        self._launching: set[str] = set()
        self._cancelled: dict[str, float] = {}
        self._threads: list[threading.Thread] = []

    # lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the warm parent of the runs' processes, the worker threads and the supervisor."""
        self._launcher.start()
        for number in range(self.workers):
            self._spawn(self._work, f"sandloop-worker-{number + 1}")
        self._spawn(self._supervise, "sandloop-supervisor")
        log.info("service.workers_started", worker=self.worker_id, workers=self.workers)

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self, grace: float) -> None:
        """Drain: claim nothing more, interrupt running children, kill them after ``grace`` s."""
        self._stopping.set()
        self._wake.set()
        for proc in self._running():
            signal_group(proc, signal.SIGINT)
        deadline = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for proc in self._running():
            signal_group(proc, signal.SIGKILL)
        for thread in self._threads:
            thread.join(30.0)
        self._launcher.stop()
        if self.sandboxes is not None:
            self.sandboxes.close()
        log.info("service.workers_stopped", worker=self.worker_id)

    def _running(self) -> list[RunProcess]:
        with self._lock:
            return list(self._children.values())

    # one worker ---------------------------------------------------------------------------
    def _work(self) -> None:
        service = self.settings.service
        while not self._stopping.is_set():
            try:
                row = self.store.claim(self.worker_id, service.lease_seconds)
            except StoreError as exc:
                log.error("service.claim_failed", error=exc.one_line())
                row = None
            if row is None:
                # Woken by a submission in this process, else at the next poll (other replicas' runs).
                if self._wake.wait(service.poll_seconds):
                    self._wake.clear()
                continue
            try:
                self.execute(row)
            except Exception as exc:  # noqa: BLE001 - one run's failure must not end the worker
                log.error("service.run_failed", run_id=row.id, error_type=type(exc).__name__, exc_info=exc)
                self._give_up(row, exc)

    def _give_up(self, row: RunRow, exc: Exception) -> None:
        """End a run the worker could not carry out; if even that fails, its lease runs out and
        another worker (or this one) takes it over."""
        try:
            self._finish(row, "error", 3, None, f"the service could not run it ({type(exc).__name__})")
        except StoreError as again:
            log.error("service.finish_failed", run_id=row.id, error=again.one_line())

    def execute(self, row: RunRow) -> None:
        """Run one claimed run to its end (or until a drain stops it) and record how it ended."""
        run_dir = self.settings.runs_dir / row.id
        run_dir.mkdir(parents=True, exist_ok=True)
        summary = child.read_summary(run_dir)
        if summary is not None and child.resumable(run_dir):  # it ended, its worker died before saying so
            status = child.status_of(1, summary)
            self._finish(row, status, 0 if status == "passed" else 1, summary, child.end_line(status, 1, summary, ""))
            return
        log.info("service.run_started", run_id=row.id, target=row.target, resume=child.resumable(run_dir))
        write_claim(run_dir, row.takeovers)  # fences off any process of an earlier claim still alive
        shared_state.give_run_lessons(self.settings, self.store, run_dir, row.agent, row.target)
        code, tail = self._run_child(row, run_dir)
        self._record(row, run_dir, code, tail)

    def _run_child(self, row: RunRow, run_dir: Path) -> tuple[int, str]:
        """The child's exit status and the end of its stderr; its stdout and nodes go to the journal."""
        with tempfile.TemporaryFile("w+b") as errors, \
                RunJournal(self.store, row.id, run_dir, holder=self.worker_id, journaled=row.last_event,
                           notify=lambda: self._notify(row.id), scrub=self._scrubber(row)) as journal:
            # Held (its lease renewed, not taken over) from before the launch: the first warm fork
            # waits for the warm parent's imports, seconds on a busy machine, longer than a lease.
            with self._lock:
                self._launching.add(row.id)
            env = {**self.env_for(row), **self._offer(row, run_dir)}
            try:
                # stdin stays open and unused: the child stops when it closes (this process died).
                proc = self._launcher.launch(self._command(row, run_dir), env, errors)
                with self._lock:
                    self._children[row.id] = proc
            except BaseException:
                self._after_run(row, run_dir)
                raise
            finally:
                with self._lock:
                    self._launching.discard(row.id)
            if self._stopping.is_set():  # claimed just as the drain began: stop it like the others
                signal_group(proc, signal.SIGINT)
            try:
                journal.copy(proc.stdout)
                code = proc.wait()
            finally:
                with self._lock:
                    self._children.pop(row.id, None)
                if proc.stdin is not None:
                    proc.stdin.close()
                self._after_run(row, run_dir)
            return code, _tail(errors)

    def _offer(self, row: RunRow, run_dir: Path) -> dict[str, str]:
        """The run's warm sandboxes, already started (removed after the run if unused); none if the
        engine fails here: the run then warms its own, as without."""
        if self.sandboxes is None:
            return {}
        try:
            return {OFFER_ENV: self.sandboxes.hand_to(row.id, row.kind, row.agent, run_dir)}
        except Exception as exc:  # noqa: BLE001 - the run's outcome does not depend on it
            log.warning("service.warm_sandbox_failed", run_id=row.id, error_type=type(exc).__name__, exc_info=exc)
            return {}

    def _after_run(self, row: RunRow, run_dir: Path) -> None:
        """Remove the warm containers handed to the run; learn the kind its first execution was."""
        if self.sandboxes is None:
            return
        try:
            self.sandboxes.after_run(row.id, row.kind, row.agent, run_dir)
        except Exception as exc:  # noqa: BLE001 - the run's outcome does not depend on it
            log.warning("service.warm_sandbox_failed", run_id=row.id, error_type=type(exc).__name__, exc_info=exc)

    def env_for(self, row: RunRow) -> dict[str, str]:
        """The child's environment: an uploaded target's run reads its own data folder."""
        env = self._env
        if shared_state.hands_off(self.store):  # PostgreSQL: history and lessons through its folder
            env = {**env, "SBX_HANDOFF_DIR": str(self.settings.runs_dir / row.id)}
        upload = row.options.get("upload")
        if not isinstance(upload, str) or upload != row.id:  # set by the service, and only to the run's id
            return env
        return {**env, "SBX_DATA_DIR": str(upload_dir(self.settings, row.id))}

    def _record(self, row: RunRow, run_dir: Path, code: int, tail: str) -> None:
        with self._lock:
            cancelled = self._cancelled.pop(row.id, None) is not None
        summary = child.read_summary(run_dir)
        if cancelled:
            self._finish(row, "cancelled", code, summary, "cancelled while it ran")
        elif self._stopping.is_set() and code in STOPPED:
            released = self.store.release(row.id, self.worker_id)
            log.info("service.run_released", run_id=row.id, requeued=released)
        elif child.waits(code, run_dir):  # checkpointed on a question: no worker, no lease until the reply
            pending = read_question(run_dir)
            question = question_event(row.id, pending) if pending is not None else None
            parked = self.store.wait(row.id, self.worker_id, question)
            log.info("service.run_waiting", run_id=row.id, parked=parked)
            self._notify(row.id)  # its streams send the question now
        else:
            status = child.status_of(code, summary)
            self._finish(row, status, code, summary, child.end_line(status, code, summary, tail))
        _note_late_imports(row, tail)

    def _finish(self, row: RunRow, status: RunStatus, code: int | None, summary: dict[str, Any] | None,
                error: str) -> None:
        shared_state.keep_handoff(self.settings, self.store, self.settings.runs_dir / row.id)
        scrub = self._scrubber(row)
        summary = None if summary is None else scrub.tree(summary)
        if not self.store.finish(row.id, self.worker_id, status, exit_code=code, summary=summary,
                                 error=scrub.text(error)):
            log.warning("service.run_taken_over", run_id=row.id, status=status)
        elif row.upload_held:
            housekeeping.remove_upload(self.settings, self.store, row.id)
        self._notify(row.id)
        log.info("service.run_finished", run_id=row.id, status=status, exit_code=code)

    def _scrubber(self, row: RunRow) -> Scrubber:
        return child.scrubber(self.settings, row)

    # the supervisor -----------------------------------------------------------------------
    def _supervise(self) -> None:
        service = self.settings.service
        last_renewal = last_sweep = time.monotonic()
        self._housekeep()
        while not self._stopping.wait(service.poll_seconds) or self._running():
            try:
                if time.monotonic() - last_renewal >= service.renew_seconds:
                    self.renew()
                    last_renewal = time.monotonic()
                self.deliver_cancels()
                if not self._stopping.is_set():
                    self.take_over_expired()
                if time.monotonic() - last_sweep >= service.sweep_seconds:
                    housekeeping.sweep(self.settings, self.store)
                    last_sweep = time.monotonic()
            except StoreError as exc:
                log.error("service.supervisor_store_failed", error=exc.one_line())
            if self._stopping.is_set():
                time.sleep(service.poll_seconds)

    def _housekeep(self) -> None:
        """At start: take over what a dead predecessor on this host held, sweep what it left."""
        try:
            self.take_over_expired()
            housekeeping.sweep(self.settings, self.store)
        except StoreError as exc:
            log.error("service.supervisor_store_failed", error=exc.one_line())

    def renew(self) -> int:
        """Renew the leases of the runs whose children are running; a run without one (its record
        could not be written) is left to expire, so that it is taken over rather than held forever."""
        with self._lock:
            held = [*self._children, *self._launching]
        return self.store.renew(self.worker_id, self.settings.service.lease_seconds, held)

    def deliver_cancels(self) -> None:
        """Interrupt children whose runs were cancelled; kill those that ignored it for too long."""
        now = time.monotonic()
        for run_id in self.store.cancel_requested(self.worker_id):
            with self._lock:
                proc = self._children.get(run_id)
                first = proc is not None and run_id not in self._cancelled
                if first:
                    self._cancelled[run_id] = now
            if proc is not None and first:
                log.info("service.run_cancelling", run_id=run_id)
                signal_group(proc, signal.SIGINT)
        with self._lock:
            overdue = [self._children[r] for r, t in self._cancelled.items()
                       if r in self._children and now - t > CANCEL_GRACE_SECONDS]
        for proc in overdue:
            signal_group(proc, signal.SIGKILL)

    def take_over_expired(self) -> None:
        """Requeue (or, past ``max_takeovers``, end) the runs of workers that died: expired leases,
        and runs of this host's workers whose process is gone."""
        expired = {row.id: row for row in self.store.expired()}
        dead_here = {row.id: row for row in self.store.running() if self._dead_here(row.worker)}
        for row in {**expired, **dead_here}.values():
            with self._lock:
                alive = row.id in self._children or row.id in self._launching
            if row.worker is None or (row.worker == self.worker_id and alive):
                continue  # our own live run's lease ran late (a slow store): the next renewal fixes it
            self._take_over(row, force=row.id in dead_here)

    def _take_over(self, row: RunRow, *, force: bool) -> None:
        assert row.worker is not None
        limit = self.settings.service.max_takeovers
        requeue = row.takeovers < limit
        error = "" if requeue else (f"its workers stopped {row.takeovers + 1} times while running it "
                                    f"(the last: {row.worker}); it is not tried again (SBX_SERVICE__MAX_TAKEOVERS)")
        if self.store.take_over(row.id, row.worker, requeue=requeue, error=error, force=force):
            log.warning("service.run_taken_over", run_id=row.id, dead_worker=row.worker, requeued=requeue,
                        takeovers=row.takeovers + 1, at_once=force)
            self._notify(row.id)
            if not requeue:
                housekeeping.remove_upload(self.settings, self.store, row.id)
            self._wake.set()

    def _dead_here(self, worker: str | None) -> bool:
        """Whether ``worker`` ran on this host in a process that is gone."""
        if worker is None or worker == self.worker_id:
            return False
        host, _, rest = worker.partition(":")
        pid, _, started = rest.partition(":")[0].partition(".")
        if host != socket.gethostname() or not pid.isdigit():
            return False
        return not alive(int(pid), int(started) if started.isdigit() else None)


def _note_late_imports(row: RunRow, tail: str) -> None:
    """A warm run that still imported part of the controller paid for it: say which, once per run."""
    for line in tail.splitlines():
        if line.startswith(LATE_PREFIX):
            log.warning("service.warm_imports_missed", run_id=row.id, modules=line[len(LATE_PREFIX):])


def _tail(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - STDERR_TAIL))
    return handle.read().decode("utf-8", "replace")
