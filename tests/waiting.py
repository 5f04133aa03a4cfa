"""Poll until a condition holds, or fail the test naming what never happened."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest


def wait_for(condition: Callable[[], bool], what: str, deadline: float = 60.0, interval: float = 0.05) -> None:
    """Return once ``condition()`` is true; fail after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(interval)
