"""The event port: how an agent tells the controller what happened, as it happens.

A node event is what the progress display prints, the metrics count and the service
streams; ``Say`` is a status line (an image build, a check's progress).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class NodeEvent:
    """One node's run, as the progress display and the logs report it."""

    node: str
    attempt: int
    outcome: str
    seconds: float
    detail: str = ""


OnEvent = Callable[[NodeEvent], None]
Say = Callable[[str], None]
