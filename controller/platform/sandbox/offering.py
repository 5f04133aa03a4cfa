"""The Docker backend of the service's workers: its warm containers are for other processes (the
runs the workers start), handed out by :meth:`OfferingSandbox.hand_out` and offered to a run in its
environment (:mod:`controller.platform.sandbox.warm_offer`). A run's own backend is a plain
:class:`~controller.platform.sandbox.docker.DockerSandbox`, which takes such an offer.
"""

from __future__ import annotations

from agents.ports.sandbox import SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.pool import WarmContainer


class OfferingSandbox(DockerSandbox):
    """A Docker backend whose warm containers are handed to other processes, not run by it."""

    def _attach_stdin(self, waits_itself: bool) -> bool:
        # A warm container waits for its go line from the process it is handed to, which attaches
        # its own stdin; this one's attach only watches it until then.
        return not waits_itself

    def hand_out(self, spec: SandboxSpec) -> WarmContainer | None:
        """An idle warm container for ``spec``, its attach closed, for another process to take
        (the caller removes it when that process ended); None if none is idle now (no waiting)."""
        while self.pool is not None and (warm := self.pool.acquire(spec, wait=False)) is not None:
            if warm.session is None or warm.session.ended:
                self._discard(warm)  # it died while waiting: try the next
                continue
            warm.session.close()
            warm.session = None
            return warm
        return None
