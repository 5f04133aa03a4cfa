"""How a worker starts a run's process: forked from a warm parent, or as a fresh interpreter.

A fresh ``python -m controller run`` pays the interpreter, LangGraph, pandas and every
agent's import before the run does anything: about 1.5 CPU-seconds, more than ICICI's whole
sandboxed work. With ``SBX_SERVICE__WARM_WORKERS`` (the default) the service starts
multiprocessing's fork server once, with the controller and the agents imported
(:data:`controller.runner.dispatch.warm_child.PRELOAD`), and each run's process is a fork of it
(:func:`controller.runner.dispatch.warm_child.run`), as gunicorn's ``preload_app`` and Celery's
prefork pool do. The fork server is a separate process that only forks: it holds no thread,
lock, engine connection or store of the service's, so a fork inherits none of them.

Either way the worker gets the same thing (:class:`RunProcess`): a pid that leads its own
process group, stdout as a text pipe, stdin as a pipe it never writes to, and the exit status
(negative for a signal). A crash, leak or hang of one run ends only that process. Each run is
a new fork of the same untouched parent, so nothing one run sets is seen by the next and there
is nothing to recycle: Celery's ``max_tasks_per_child`` is 1 here, and the parent's memory does
not grow (it runs nothing). A command that is not ``python -m controller …`` (a test double's
shell line) is always started cold.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from multiprocessing import forkserver, reduction
from multiprocessing.connection import wait as wait_for_any
from typing import IO, Any, Protocol

import structlog

from controller.runner.dispatch import warm_child

log = structlog.get_logger("sandloop.service")

#: The start of a cold run's command line; what follows it is the CLI's arguments.
CONTROLLER = (sys.executable, "-m", "controller")


class RunProcess(Protocol):
    """A run's process as the worker sees it (``subprocess.Popen`` is one)."""

    pid: int
    stdin: IO[str] | None
    stdout: IO[str] | None

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


class Launcher:
    """Starts runs' processes: warm forks when enabled, else (and for other commands) cold ones."""

    def __init__(self, *, warm: bool) -> None:
        self._warm = WarmForks() if warm else None

    def start(self) -> None:
        """Start the fork server now, and have it import everything in the background, so that the
        first run is warm too (a run claimed before that waits for it, as it would have)."""
        if self._warm is not None:
            threading.Thread(target=self._warm.start, name="sandloop-warm-parent", daemon=True).start()

    def stop(self) -> None:
        """Stop the fork server (after the runs' processes have ended)."""
        if self._warm is not None:
            self._warm.stop()

    @property
    def warm(self) -> WarmForks | None:
        """The warm forks, if enabled."""
        return self._warm

    def launch(self, command: Sequence[str], env: dict[str, str], stderr: IO[bytes]) -> RunProcess:
        """Start ``command`` with ``env``, stdout a pipe, stderr to ``stderr``, in its own process group."""
        if self._warm is not None and tuple(command[:3]) == CONTROLLER:
            return self._warm.launch(command[3:], env, stderr)
        return subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                text=True, encoding="utf-8", errors="replace", env=env, process_group=0)


class WarmForks:
    """Run processes forked from multiprocessing's fork server, which imported the preload once."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload([warm_child.__name__, *warm_child.PRELOAD])
        self._lock = threading.Lock()  # the server is started, or stopped, not both at once
        self._stopped = False

    def start(self) -> None:
        """Start the fork server and wait until it has imported the preload (a first fork returns)."""
        with self._lock:
            if self._stopped:
                return
            forkserver.ensure_running()
        process = self._context.Process(target=warm_child.ready, name="sandloop-warm-up")
        try:
            process.start()
        except (OSError, EOFError) as exc:  # EOFError: the server ended before it forked
            if not self._stopped:  # else the service stopped it mid-preload: nothing to say
                log.error("service.warm_parent_failed", error=f"{type(exc).__name__}: {exc}")
            return
        process.join()
        log.info("service.warm_parent", pid=self.server_pid(), exit_code=process.exitcode)

    def stop(self) -> None:
        """Kill the fork server. It would end by itself when the service's end of its pipe closes, but
        only once its preload is imported (seconds, tens under load), holding the service's stderr
        all that time: a process never outlives the service that started it."""
        with self._lock:
            self._stopped = True
            pid = self.server_pid()
            if pid is None:
                return
            with contextlib.suppress(ProcessLookupError):  # it had ended already
                os.kill(pid, signal.SIGKILL)
            # multiprocessing's own stop: closes its pipe, reaps the process, removes its socket, so
            # that a later start (a test's next service in this process) starts a new server.
            forkserver._forkserver._stop()  # type: ignore[attr-defined]
            log.info("service.warm_parent_stopped", pid=pid)

    def server_pid(self) -> int | None:
        """The fork server's pid (what every warm run's process is a child of), once it runs."""
        pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
        return pid if isinstance(pid, int) else None

    def launch(self, argv: Sequence[str], env: dict[str, str], stderr: IO[bytes]) -> WarmProcess:
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        process = self._context.Process(
            target=warm_child.run, name="sandloop-run",
            args=(list(argv), dict(env), _Fd(stdin_r), _Fd(stdout_w), _Fd(stderr.fileno())))
        try:
            process.start()  # the descriptors are sent to the fork server here
        except BaseException:
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            raise
        finally:
            os.close(stdin_r)
            os.close(stdout_w)  # the child holds the only writer: its end is the pipe's end
        # Out of multiprocessing's own list of children: every start() polls that list, from any
        # thread, and two reads of one exit status race (the loser reads 255). WarmProcess polls it alone.
        multiprocessing.process._children.discard(process)  # type: ignore[attr-defined]
        return WarmProcess(process, stdin=open(stdin_w, "w", encoding="utf-8"),  # noqa: SIM115 - the process's
                           stdout=open(stdout_r, encoding="utf-8", errors="replace"))  # noqa: SIM115 - pipes


class WarmProcess:
    """A warm run's process, with ``Popen``'s part of the interface the worker uses."""

    def __init__(self, process: Any, *, stdin: IO[str], stdout: IO[str]) -> None:
        self._process = process
        self._lock = threading.Lock()  # the worker waits while the supervisor polls: one reads the status
        self.pid: int = process.pid
        self.stdin: IO[str] | None = stdin
        self.stdout: IO[str] | None = stdout

    def poll(self) -> int | None:
        with self._lock:
            code = self._process.exitcode
        return None if code is None else int(code)

    def wait(self) -> int:
        while (code := self.poll()) is None:
            wait_for_any([self._process.sentinel])  # readable once the status is there; read by poll
        if self.stdout is not None:
            self.stdout.close()
        return code


class _Fd:
    """A descriptor handed to the fork server with the process (as multiprocessing hands a Connection)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return _detach, (reduction.DupFd(self.fd),)


def _detach(dup: Any) -> int:
    return int(dup.detach())
