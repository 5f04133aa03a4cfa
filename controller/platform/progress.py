"""What a person sees while a run goes on: one line per step, then a short summary."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from agents.ports.outcome import RunSummary


class OutputClosed(BaseException):
    """Nobody reads the run's output any more: its pipe's reader went away (``… | head``, or the
    service whose child this process is died, even by ``kill -9``).

    A BaseException, as KeyboardInterrupt is: no ``except Exception`` on the way (a node's, the
    loop's crash record) may take it for a failure of the run. Before, a progress line written
    just after the service died raised BrokenPipeError inside the loop, the loop recorded the
    run as ``error`` in summary.json, and the worker that took the run over found that verdict
    and ended a healthy run as an error. Now the run stops as on Ctrl-C: checkpoint kept,
    containers removed, no verdict; a resume (the takeover's) continues it.
    """

    def __init__(self, run_id: str = "") -> None:
        super().__init__(run_id)
        self.run_id = run_id

    def one_line(self) -> str:
        """What the CLI prints on stderr."""
        then = f"; continue it with: python -m controller run --resume {self.run_id}" if self.run_id else ""
        return f"stopped: nobody reads this run's output any more (its reader went away){then}"


@dataclass
class Progress:
    """Prints progress lines to a stream (stdout by default), flushed at once.

    Raises :class:`OutputClosed` (from any method) once the stream's reader has gone away.
    """

    stream: TextIO = field(default_factory=lambda: sys.stdout)

    def say(self, message: str) -> None:
        """A setup or status line (image builds, engine checks)."""
        self._print(f"==> {message}")

    def step(self, attempt: int, node: str, outcome: str, seconds: float, detail: str = "") -> None:
        """One node of the loop has run."""
        label = f"[attempt {attempt}]" if attempt else "[setup]    "
        self._print(f"  {label} {node:<9} {outcome:<16} {seconds:6.2f}s  {detail}".rstrip())

    def summary(self, summary: RunSummary) -> None:
        """The closing block of a run."""
        for line in summary.lines():
            self._print(line)

    def _print(self, text: str) -> None:
        try:
            print(text, file=self.stream, flush=True)
        except BrokenPipeError as exc:
            raise OutputClosed() from exc
