"""The warm pool's bookkeeping (no Docker): hits and misses, refill, idle expiry, close.

The launch and discard functions here are test doubles that hand out plain objects; the
pool with real containers is tested in tests/integration/sandbox/test_warm_pool.py.
"""

from __future__ import annotations

import time

from agents.ports.sandbox import SandboxSpec
from controller.platform.sandbox.pool import WarmContainer, WarmKey, WarmPool


def spec(warm: bool = True, image: str = "img") -> SandboxSpec:
    return SandboxSpec(image=image, command=("run",), warm_command=("wait",) if warm else None)


class Recorder:
    """Launches numbered fake containers and records what was discarded."""

    def __init__(self) -> None:
        self.launched: list[int] = []
        self.discarded: list[int] = []

    def launch(self, _spec: SandboxSpec) -> WarmContainer:
        self.launched.append(len(self.launched))
        return WarmContainer(container=self.launched[-1], volume=None, ready_at=time.monotonic(), warmup_seconds=0.01)

    def discard(self, warm: WarmContainer) -> None:
        self.discarded.append(warm.container)


def wait_until(predicate, timeout: float = 5.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.01)


class TestWarmPool:
    def test_miss_then_hit(self):
        """The first acquire misses and starts warming; the next one is a hit."""
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=60)
        assert pool.acquire(spec()) is None
        wait_until(lambda: pool.idle_count() == 1)
        warm = pool.acquire(spec())
        assert warm is not None and warm.container == 0
        assert (pool.stats.hits, pool.stats.misses) == (1, 1)
        pool.close()

    def test_each_container_is_handed_out_once(self):
        """Acquired containers are never handed out again; the pool refills with new ones."""
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=60)
        pool.want(spec())
        seen = []
        for _ in range(3):
            wait_until(lambda: pool.idle_count() == 1)
            seen.append(pool.acquire(spec()).container)
        assert seen == sorted(set(seen))
        pool.close()

    def test_specs_without_warm_command_never_use_the_pool(self):
        """A spec with no warm command runs cold and warms nothing."""
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=60)
        assert pool.acquire(spec(warm=False)) is None
        time.sleep(0.2)
        assert rec.launched == [] and pool.stats.misses == 0
        pool.close()

    def test_idle_containers_expire(self):
        """A container idle past max_idle_seconds is discarded (and replaced)."""
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=0.2)
        pool.want(spec())
        wait_until(lambda: 0 in rec.discarded, timeout=5)
        assert pool.stats.expired >= 1
        pool.close()

    def test_close_discards_everything_idle(self):
        """close() discards all idle containers and stops refilling."""
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=2, max_idle_seconds=60)
        pool.want(spec())
        wait_until(lambda: pool.idle_count() == 2)
        pool.close()
        assert sorted(rec.discarded) == [0, 1]
        assert pool.idle_count() == 0

    def test_keys_separate_images_and_limits(self):
        """Different images (or limits) never share warm containers."""
        assert WarmKey.of(spec(image="a")) != WarmKey.of(spec(image="b"))
        assert WarmKey.of(spec(warm=False)) is None


class SlowLauncher(Recorder):
    """Launches take ``seconds``, so an acquire can arrive while one is in flight."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def launch(self, spec_: SandboxSpec) -> WarmContainer:
        time.sleep(self.seconds)
        return super().launch(spec_)


class TestInFlight:
    def test_an_acquire_waits_for_the_container_being_launched(self):
        """Prewarmed, then asked for before the launch finished: a hit, not a cold run."""
        rec = SlowLauncher(0.5)
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=60)
        pool.want(spec())
        wait_until(lambda: pool._launching)  # noqa: SLF001 - the launch is in flight
        warm = pool.acquire(spec())
        assert warm is not None and warm.container == 0
        assert (pool.stats.hits, pool.stats.misses) == (1, 0)
        pool.close()

    def test_an_unknown_kind_misses_at_once(self):
        """The first acquire of a kind never prewarmed does not wait: it runs cold."""
        rec = SlowLauncher(2.0)
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=60)
        assert pool.acquire(spec()) is None
        assert rec.launched == []  # it returned before the launch it started could finish
        pool.close()


class TestHandingOut:
    """What the service's workers need of the pool (issue 32)."""

    def test_acquire_without_waiting_does_not_wait_for_a_launch_in_flight(self):
        import threading

        release = threading.Event()
        rec = Recorder()

        def slow(spec_: SandboxSpec) -> WarmContainer:
            release.wait(5)
            return rec.launch(spec_)

        pool = WarmPool(slow, rec.discard, size=1, max_idle_seconds=60)
        pool.want(spec())
        started = time.monotonic()
        assert pool.acquire(spec(), wait=False) is None
        assert time.monotonic() - started < 1.0
        release.set()
        pool.close()

    def test_forget_removes_the_idle_ones_and_stops_refilling(self):
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=2, max_idle_seconds=60)
        pool.want(spec())
        wait_until(lambda: pool.idle_count() == 2)
        pool.forget(spec())
        assert pool.idle_count() == 0 and sorted(rec.discarded) == [0, 1]
        time.sleep(0.2)
        assert len(rec.launched) == 2
        pool.close()

    def test_a_size_given_for_a_kind_is_kept_for_that_kind(self):
        """The workers keep workers x executions of a kind; other kinds keep the pool's size."""
        rec = Recorder()
        pool = WarmPool(rec.launch, rec.discard, size=1, max_idle_seconds=60)
        pool.want(spec(), size=3)
        pool.want(spec(image="other"))
        wait_until(lambda: pool.idle_count() == 4)
        pool.want(spec())  # no size: the kind's own is kept
        time.sleep(0.2)
        assert pool.idle_count() == 4
        pool.close()
