"""RunSignals: a worker thread's notify wakes the event streams waiting on that run, only those."""

from __future__ import annotations

import asyncio
import threading

from controller.entry.service.notify import RunSignals

NEVER = 600.0  # a wait that only a notify ends within the test


def test_a_notify_from_a_worker_thread_wakes_the_waiting_stream():
    signals = RunSignals()

    async def scenario() -> None:
        waiting = asyncio.create_task(signals.wait("run-1", NEVER))
        await asyncio.sleep(0)  # the wait is registered
        threading.Thread(target=signals.notify, args=("run-1",)).start()
        await asyncio.wait_for(waiting, 30)  # raises TimeoutError if only the 600 s timeout would end it

    asyncio.run(scenario())
    assert signals._waiting == {}  # nothing kept once the stream stopped waiting


def test_another_runs_notify_does_not_wake_it_and_the_timeout_still_does():
    signals = RunSignals()

    async def scenario() -> bool:
        waiting = asyncio.create_task(signals.wait("run-1", 0.2))
        await asyncio.sleep(0)
        signals.notify("run-2")
        await asyncio.sleep(0.05)
        woken_early = waiting.done()
        await waiting  # the timeout ends it, without an error
        return woken_early

    assert asyncio.run(scenario()) is False
    assert signals._waiting == {}


def test_notify_without_waiters_is_harmless():
    RunSignals().notify("nobody")
