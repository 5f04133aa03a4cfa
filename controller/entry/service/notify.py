"""Wake a run's event streams when this process's worker wrote to the run or ended it.

An event stream reads the run's files and row again when woken, or every ``POLL_SECONDS``
at the latest (a run another replica executes can only be polled). The worker threads call
:meth:`RunSignals.notify`; the streams, on the server's event loop, ``await``
:meth:`RunSignals.wait`. Without it a stream saw a run's end up to a poll interval late,
which is most of what a short run over the service cost beyond the same run on the CLI.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict


class RunSignals:
    """Per run, the asyncio events of the streams waiting on it (thread-safe to notify)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = defaultdict(set)

    def notify(self, run_id: str) -> None:
        """Wake every stream waiting on ``run_id`` (from any thread)."""
        with self._lock:
            waiting = list(self._waiting.get(run_id, ()))
        for loop, event in waiting:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that stream's loop has closed meanwhile
                pass

    async def wait(self, run_id: str, timeout: float) -> None:
        """Return when ``run_id`` is notified, or after ``timeout`` seconds."""
        key = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
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
