"""What a person sees while a run goes on: one line per step, then a short summary."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from agents.ports.outcome import RunSummary


@dataclass
class Progress:
    """Prints progress lines to a stream (stdout by default), flushed at once."""

    stream: TextIO = field(default_factory=lambda: sys.stdout)

    def say(self, message: str) -> None:
        """A setup or status line (image builds, engine checks)."""
        print(f"==> {message}", file=self.stream, flush=True)

    def step(self, attempt: int, node: str, outcome: str, seconds: float, detail: str = "") -> None:
        """One node of the loop has run."""
        label = f"[attempt {attempt}]" if attempt else "[setup]    "
        text = f"  {label} {node:<9} {outcome:<16} {seconds:6.2f}s  {detail}".rstrip()
        print(text, file=self.stream, flush=True)

    def summary(self, summary: RunSummary) -> None:
        """The closing block of a run."""
        for line in summary.lines():
            print(line, file=self.stream, flush=True)
