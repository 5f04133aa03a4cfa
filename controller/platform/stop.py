"""The process's stop switch: once a process is told to stop, no execution of it goes on.

Signals reach only a process's main thread, and only between two of its bytecodes; an
execution waits in whatever thread runs it (``check`` runs parsers in a thread pool; LangGraph
may run a node in one). So a stop is not left to the signal alone: the CLI's SIGINT and SIGTERM
handlers and the service child's parent watch (:mod:`controller.entry.parent_watch`) throw this
switch first, and every sandbox backend watches it:

* a waiting execution polls it (every :data:`POLL_SECONDS`), kills its container or Pod and
  raises :class:`Stopped` — within a second of the stop, whichever thread waits;
* a new execution (a retry of one the infrastructure lost among them) refuses to start;
* a retry's backoff wakes at once and raises.

:class:`Stopped` is a :class:`KeyboardInterrupt`: every handler that keeps a run resumable on
Ctrl-C (checkpoint kept, containers removed, no verdict, exit 130) treats it the same, and no
``except Exception`` on the way takes it for a failure of the run.

One switch per process (:data:`PROCESS`), because signals and a parent's death are
per-process; a test makes its own and hands it to the backend.
"""

from __future__ import annotations

import threading

#: How often a waiting execution looks at the switch: a stop lands within this (plus the kill).
POLL_SECONDS = 0.2


class Stopped(KeyboardInterrupt):
    """The process was told to stop while an execution ran or was about to start.

    Attributes:
        reason: Who stopped it (``SIGINT``, ``SIGTERM``, ``parent gone``, ``fenced``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StopSwitch:
    """Thrown once, read by every execution of the process."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def stop(self, reason: str) -> None:
        """Throw the switch (the first reason is kept). Safe in a signal handler: it only sets an event."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def reset(self) -> None:
        """Make the switch unthrown again: for a caller that ran a command in-process and goes on
        (the CLI's ``main`` on return); never while an execution of that command could still run."""
        self._event.clear()
        self.reason = ""

    @property
    def stopped(self) -> bool:
        """Whether the switch was thrown."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Stopped` if the switch was thrown (before starting anything new)."""
        if self._event.is_set():
            raise Stopped(self.reason)

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds``, or raise :class:`Stopped` as soon as the switch is thrown."""
        if self._event.wait(seconds):
            raise Stopped(self.reason)


#: This process's switch (the CLI's signal handlers and the parent watch throw it).
PROCESS = StopSwitch()

__all__ = ["POLL_SECONDS", "PROCESS", "StopSwitch", "Stopped"]
