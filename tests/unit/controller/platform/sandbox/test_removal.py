"""Background removal: off the critical path, but drained by close and inline after it."""

from __future__ import annotations

import threading

from controller.platform.sandbox.removal import Remover


class Recorded:
    """Test double of a container/volume: records ``remove`` calls (the engine is not needed here)."""

    def __init__(self, log: list[str], name: str, gate: threading.Event | None = None) -> None:
        self.log, self.name, self.gate = log, name, gate

    def remove(self, **_: object) -> None:
        if self.gate is not None:
            self.gate.wait(5)
        self.log.append(self.name)


class TestRemover:
    def test_submit_returns_before_the_removal_and_close_drains_it(self):
        """A submitted removal runs later, in another thread; close() waits for it."""
        log: list[str] = []
        gate = threading.Event()
        remover = Remover()
        remover.submit(Recorded(log, "c1", gate), Recorded(log, "v1"))
        assert log == [] and remover.pending() == 1
        gate.set()
        remover.close()
        assert log == ["c1", "v1"]

    def test_after_close_removal_is_inline(self):
        """Once closed, submit removes before it returns (nothing can be left queued)."""
        log: list[str] = []
        remover = Remover()
        remover.close()
        remover.submit(Recorded(log, "c"), Recorded(log, "v"))
        assert log == ["c", "v"]

    def test_a_failing_removal_does_not_stop_later_ones(self):
        """One removal that raises leaves the queue working for the next."""
        log: list[str] = []

        class Broken:
            def remove(self, **_: object) -> None:
                raise RuntimeError("engine hiccup")

        remover = Remover()
        remover.submit(Broken(), None)
        remover.submit(Recorded(log, "c"), None)
        remover.close()
        assert log == ["c"]
