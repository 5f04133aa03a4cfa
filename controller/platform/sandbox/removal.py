"""Removal of used containers and volumes off the critical path, still guaranteed.

Removing a container and its volume takes two engine calls that the caller need not wait
for: the result has been read by then. A :class:`Remover` does them in a background thread.
The guarantee stays: :meth:`Remover.close` drains the queue (the backend's ``close`` calls
it, and ``Services.close`` runs in ``finally``); a removal the engine refuses is tried again
(twice, after a pause: a container someone else is removing still holds its volume); and
the volume is removed even when its container was already gone; what a controller that dies
leaves behind carries the platform's labels and is removed by the reaper when the next
controller starts. After :meth:`close`, removals run inline.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import docker.errors
import requests.exceptions

_Pair = tuple[Any, Any]


def remove_now(container: Any | None, volume: Any | None) -> None:
    """Remove ``container`` (killing it) and then ``volume``, whatever state they are in.

    Each is tried up to three times; what the engine still refuses is left to the reaper of the next
    start (the volume is tried even when the container could not be removed: a volume still
    in use is refused by the engine, never taken from a container).
    """
    if container is not None:
        _tries(lambda: container.remove(force=True, v=True))
    if volume is not None:
        _tries(lambda: volume.remove(force=True))


#: Pauses between tries: a container someone else is removing still holds its volume a moment.
RETRY_PAUSES_SECONDS = (0.5, 2.0)


def _tries(remove: Callable[[], object]) -> None:
    for pause in (*RETRY_PAUSES_SECONDS, None):
        try:
            remove()
            return
        except docker.errors.NotFound:
            return
        except (docker.errors.APIError, requests.exceptions.RequestException):
            if pause is None:
                return  # the reaper removes it at the next start
            time.sleep(pause)


class Remover:
    """A background queue of containers and volumes to remove."""

    def __init__(self) -> None:
        self._queue: queue.Queue[_Pair | None] = queue.Queue()
        self._closed = False
        self._lock = threading.Lock()
        #: Seconds each background removal took (for the benchmark's breakdown).
        self.durations: list[float] = []
        self._thread = threading.Thread(target=self._loop, name="sandloop-remover", daemon=True)
        self._thread.start()

    def submit(self, container: Any | None, volume: Any | None) -> None:
        """Remove these soon (inline once the remover is closed)."""
        with self._lock:
            if not self._closed:
                self._queue.put((container, volume))
                return
        started = time.perf_counter()
        remove_now(container, volume)
        self.durations.append(time.perf_counter() - started)

    def pending(self) -> int:
        """Removals not done yet (for tests and the benchmark)."""
        return self._queue.unfinished_tasks

    def drain(self) -> None:
        """Block until every submitted removal is done."""
        self._queue.join()

    def close(self) -> None:
        """Finish every pending removal, then stop the thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                started = time.perf_counter()
                remove_now(*item)
                self.durations.append(time.perf_counter() - started)
            except Exception:  # noqa: BLE001 - never let one failure stop later removals
                pass
            finally:
                self._queue.task_done()
