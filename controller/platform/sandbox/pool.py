"""A warm pool: containers started before their code exists, each used exactly once.

Starting Python and importing pandas and pdfplumber costs more than most parsers take to
run. A warm container is created with the execution's image, limits and user, started with
a *warm command* that does those imports, says it is ready, and then blocks on its stdin;
the controller later writes the go line and the inputs to the holder, which unpacks them
and tells the warm command to go, and from that moment the execution's timeout runs. The
controller is attached to a warm container from its start, so a take costs no engine call;
the refill of the taken slot starts at the take. After that one execution the container is
destroyed like any other. A container never sees two executions, so the isolation story is
the cold one's.

The pool keeps at most ``size`` idle containers per key (image, command, limits, env and
the outputs to collect, which the holder is started with), refilled in a background
thread, removes any idle longer than ``max_idle_seconds``, and removes all on
:meth:`WarmPool.close`. Leftovers of a controller that died carry the platform's labels
and are reaped like any other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.ports.sandbox import SandboxSpec


@dataclass(frozen=True)
class WarmKey:
    """What makes two executions interchangeable for a warm container."""

    image: str
    command: tuple[str, ...]
    limits_json: str
    env: tuple[tuple[str, str], ...]
    collect: tuple[str, ...] = ()

    @classmethod
    def of(cls, spec: SandboxSpec) -> WarmKey | None:
        """The key of ``spec``, or None if it has no warm command."""
        if spec.warm_command is None:
            return None
        return cls(spec.image, spec.warm_command, spec.limits.model_dump_json(),
                   tuple(sorted(spec.env.items())), spec.collect)


@dataclass
class WarmContainer:
    """A started container waiting for its go line, the volume that holds /work, its attach session."""

    container: Any
    volume: Any
    ready_at: float
    warmup_seconds: float
    session: Any = None


@dataclass
class PoolStats:
    """Counters for metrics and the benchmark."""

    hits: int = 0
    misses: int = 0
    warmups: list[float] = field(default_factory=list)
    expired: int = 0


#: How long an acquire waits for a container of its kind that is being launched.
IN_FLIGHT_WAIT_SECONDS = 5.0
#: How long close() waits for a launch in flight; past it the next controller's reaper
#: removes what the launch leaves.
CLOSE_WAIT_SECONDS = 120.0
Launch = Callable[[SandboxSpec], WarmContainer]
Discard = Callable[[WarmContainer], None]


class WarmPool:
    """Keeps up to ``size`` warm containers per key, refilled in the background."""

    def __init__(self, launch: Launch, discard: Discard, *, size: int, max_idle_seconds: float) -> None:
        """Create a pool.

        Args:
            launch: Creates and starts a warm container for a spec (blocking).
            discard: Removes a container that will not be used.
            size: Idle containers to keep per key.
            max_idle_seconds: Idle containers older than this are removed.
        """
        self._launch, self._discard = launch, discard
        self._size, self._max_idle = size, max_idle_seconds
        self._idle: dict[WarmKey, list[WarmContainer]] = {}
        self._templates: dict[WarmKey, SandboxSpec] = {}
        self._sizes: dict[WarmKey, int] = {}
        self._lock = threading.Condition()
        self._closed = False
        self._launching: set[WarmKey] = set()
        self.stats = PoolStats()
        self._thread = threading.Thread(target=self._refill_loop, name="sandloop-warm-pool", daemon=True)
        self._thread.start()

    def want(self, spec: SandboxSpec, size: int | None = None) -> None:
        """Start keeping warm containers for executions like ``spec`` (e.g. before the first):
        ``size`` of them if given (kept for later calls), else the pool's size."""
        key = WarmKey.of(spec)
        if key is None:
            return
        with self._lock:
            if size is not None:
                self._sizes[key] = size
            self._templates.setdefault(key, spec)
            self._idle.setdefault(key, [])
            self._lock.notify_all()

    def acquire(self, spec: SandboxSpec, *, wait: bool = True) -> WarmContainer | None:
        """Take a warm container for ``spec`` (a hit) or return None (a miss, to run cold).

        When none is idle but one for this kind is being launched, wait for it (up to
        :data:`IN_FLIGHT_WAIT_SECONDS`; not with ``wait=False``): it is further along than a
        cold start would be. That is what lets a run's first execution (the statement probe,
        right after the prewarm) use the prewarmed container.
        """
        key = WarmKey.of(spec)
        if key is None:
            return None
        with self._lock:
            known = key in self._templates
        self.want(spec)
        with self._lock:
            if known and wait:
                self._wait_in_flight(key)
            idle = self._idle[key]
            warm = idle.pop(0) if idle else None
            if warm is None:
                self.stats.misses += 1
            else:
                self.stats.hits += 1
            self._lock.notify_all()
        return warm

    def _wait_in_flight(self, key: WarmKey) -> None:
        """With the lock held: wait while no container of ``key`` is idle and one is launching."""
        deadline = time.monotonic() + IN_FLIGHT_WAIT_SECONDS
        while not self._idle[key] and key in self._launching and not self._closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._lock.wait(remaining)

    def forget(self, spec: SandboxSpec) -> None:
        """Stop keeping containers for executions like ``spec`` and remove its idle ones."""
        key = WarmKey.of(spec)
        if key is None:
            return
        with self._lock:
            self._templates.pop(key, None)
            self._sizes.pop(key, None)
            dropped = self._idle.pop(key, [])
        for warm in dropped:
            self._discard(warm)

    def close(self) -> None:
        """Stop refilling and remove every idle container."""
        with self._lock:
            self._closed = True
            leftovers = [w for idle in self._idle.values() for w in idle]
            self._idle.clear()
            self._lock.notify_all()
        # A launch in flight finishes (and, seeing the pool closed, removes its container)
        # before the process may exit; on a loaded engine one can take well over 30 s.
        self._thread.join(timeout=CLOSE_WAIT_SECONDS)
        for warm in leftovers:
            self._discard(warm)

    def idle_containers(self) -> list[WarmContainer]:
        """The idle containers now (a copy; for waiting on their readiness)."""
        with self._lock:
            return [w for idle in self._idle.values() for w in idle]

    def idle_count(self) -> int:
        """Idle containers now (for tests and metrics)."""
        with self._lock:
            return sum(len(idle) for idle in self._idle.values())

    def _refill_loop(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                expired = self._take_expired()
                todo = self._next_to_launch()
                if todo is not None:
                    self._launching.add(todo[0])
                if todo is None and not expired:
                    self._lock.wait(timeout=1.0)
                    continue
            for warm in expired:
                self._discard(warm)
            if todo is not None:
                self._launch_into(*todo)

    def _take_expired(self) -> list[WarmContainer]:
        now, expired = time.monotonic(), []
        for key, idle in self._idle.items():
            keep = [w for w in idle if now - w.ready_at <= self._max_idle]
            expired += [w for w in idle if now - w.ready_at > self._max_idle]
            self._idle[key] = keep
        self.stats.expired += len(expired)
        return expired

    def _next_to_launch(self) -> tuple[WarmKey, SandboxSpec] | None:
        for key, idle in self._idle.items():
            if len(idle) < self._sizes.get(key, self._size):
                return key, self._templates[key]
        return None

    def _launch_into(self, key: WarmKey, spec: SandboxSpec) -> None:
        try:
            warm = self._launch(spec)
        except Exception:  # noqa: BLE001 - the engine failed: run cold, retry later
            with self._lock:
                self._launching.discard(key)
                self._lock.notify_all()
            time.sleep(1.0)
            return
        with self._lock:
            self._launching.discard(key)
            unwanted = self._closed or key not in self._templates  # closed, or forgotten meanwhile
            if not unwanted:
                self._idle.setdefault(key, []).append(warm)
                self.stats.warmups.append(warm.warmup_seconds)
            self._lock.notify_all()
        if unwanted:
            self._discard(warm)
