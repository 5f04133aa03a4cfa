"""Wake a run's event streams when this process's worker wrote to the run or ended it.

An event stream reads the run's files and row again when woken, or every ``POLL_SECONDS``
at the latest (a run another replica executes can only be polled). The worker threads call
:meth:`RunSignals.notify`; the streams, on the server's event loop, ``await``
:meth:`RunSignals.wait`. Without it a stream saw a run's end up to a poll interval late,
which is most of what a short run over the service cost beyond the same run on the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import defaultdict


class RunSignals:
    """Per run, the asyncio events of the streams waiting on it (thread-safe to notify), and how
    often it was notified, so that a stream never sleeps through a notice that came while it read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = defaultdict(set)
        self._versions: dict[str, int] = {}

    def version(self, run_id: str) -> int:
        """How many notices ``run_id`` has had (in this process)."""
        with self._lock:
            return self._versions.get(run_id, 0)

    def pause_for(self, run_id: str) -> Pause:
        """A stream's pause on ``run_id``: it returns at once if a notice came since the last one ended."""
        return Pause(self, run_id, self.version(run_id))

    def notify(self, run_id: str) -> None:
        """Wake every stream waiting on ``run_id`` (from any thread)."""
        with self._lock:
            self._versions[run_id] = self._versions.get(run_id, 0) + 1
            waiting = list(self._waiting.get(run_id, ()))
        for loop, event in waiting:
            with contextlib.suppress(RuntimeError):  # that stream's loop has closed meanwhile
                loop.call_soon_threadsafe(event.set)

    def forget(self, run_id: str) -> None:
        """Drop the run's notice count (it ended; no stream needs it any more)."""
        with self._lock:
            if run_id not in self._waiting:
                self._versions.pop(run_id, None)

    async def wait(self, run_id: str, timeout: float, seen: int | None = None) -> None:
        """Return when ``run_id`` is notified, after ``timeout`` seconds, or at once when it was
        notified more often than ``seen`` times already."""
        key = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            if seen is not None and self._versions.get(run_id, 0) != seen:
                return
            self._waiting[run_id].add(key)
        try:
            await asyncio.wait_for(key[1].wait(), timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                waiters = self._waiting[run_id]
                waiters.discard(key)
                if not waiters:
                    del self._waiting[run_id]


class Pause:
    """One stream's pauses on one run (see :meth:`RunSignals.pause_for`)."""

    def __init__(self, signals: RunSignals, run_id: str, seen: int) -> None:
        self._signals, self._run_id, self._seen = signals, run_id, seen

    async def __call__(self, timeout: float) -> None:
        """Wait for the run's next notice (or ``timeout``); a notice since the last pause returns at once."""
        await self._signals.wait(self._run_id, timeout, self._seen)
        self._seen = self._signals.version(self._run_id)
