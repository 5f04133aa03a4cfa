"""Where an execution's time goes: engine round trips counted, phases timed.

:class:`RoundTrips` wraps the Docker client's HTTP session (``client.api.request``, through
which every engine call passes, including attach and archive streams) and counts the calls
each thread makes. :class:`ExecutionTrace` is what one execution records: the duration of
each phase (take, hand over, run, collect, remove, refill) and the round trips the calling
thread made, i.e. those on the critical path. The backend logs it (``sandbox.trace``) and
the benchmark prints it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


class RoundTrips:
    """Counts the engine calls made through one Docker client, per thread."""

    def __init__(self, client: Any) -> None:
        """Wrap ``client.api.request`` (idempotent: a client is wrapped once)."""
        self._local = threading.local()
        self._lock = threading.Lock()
        self.total = 0
        api = client.api
        existing = getattr(api, "_sandloop_round_trips", None)
        if existing is not None:
            self._inner = existing
            return
        self._inner = self
        original = api.request

        def counted(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            self._inner._count(method, url)
            return original(method, url, *args, **kwargs)

        api.request = counted
        api._sandloop_round_trips = self

    def _count(self, method: str, url: str) -> None:
        with self._lock:
            self.total += 1
        calls = getattr(self._local, "calls", None)
        if calls is not None:
            calls.append(f"{method} {_endpoint(url)}")

    @contextmanager
    def recording(self) -> Iterator[list[str]]:
        """Record the calls this thread makes inside the block (``METHOD /endpoint``)."""
        inner = self._inner
        previous = getattr(inner._local, "calls", None)
        calls: list[str] = []
        inner._local.calls = calls
        try:
            yield calls
        finally:
            inner._local.calls = previous


def _endpoint(url: str) -> str:
    """``/containers/{id}/archive`` from a full URL: ids folded, query dropped."""
    path = url.split("?", 1)[0]
    parts = path.split("/")
    try:
        start = next(i for i, part in enumerate(parts)
                     if part in ("containers", "volumes", "images", "_ping", "version"))
    except StopIteration:
        return path
    kept = parts[start:]
    if len(kept) > 1 and kept[0] in ("containers", "volumes") and kept[1] not in ("create", "json", "prune"):
        kept[1] = "{id}"
    return "/" + "/".join(kept)


@dataclass
class ExecutionTrace:
    """Phase durations (seconds) and critical-path round trips of one execution."""

    phases: dict[str, float] = field(default_factory=dict)
    round_trips: list[str] = field(default_factory=list)
    warm: bool = False
    #: Served by a container the service's worker handed to this process (issue 32).
    handed: bool = False

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as phase ``name`` (added to what the phase already has)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.perf_counter() - started

    def fields(self) -> dict[str, object]:
        """Plain values for a log event."""
        return {
            "warm": self.warm,
            "handed": self.handed,
            "round_trips": len(self.round_trips),
            "calls": list(self.round_trips),
            **{f"{name}_s": round(seconds, 4) for name, seconds in self.phases.items()},
        }
