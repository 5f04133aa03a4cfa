"""Which platform containers count as leftovers of a controller that died."""

from __future__ import annotations

import os
import socket

from controller.platform.sandbox.labels import CREATED, OWNER, managed_labels
from controller.platform.sandbox.reaper import is_leftover

HOST = socket.gethostname()


def labels(owner: str, created: float) -> dict[str, str]:
    return {OWNER: owner, CREATED: str(int(created))}


class TestIsLeftover:
    def test_live_owner_on_this_host_is_kept(self):
        """Work of a running controller (this very process) is not touched."""
        assert not is_leftover(labels(f"{HOST}:{os.getpid()}", 1000), now=1010, max_age=3600, host=HOST)

    def test_dead_owner_on_this_host_is_reaped(self):
        """A pid that no longer exists marks a leftover."""
        assert is_leftover(labels(f"{HOST}:999999999", 1000), now=1010, max_age=3600, host=HOST)

    def test_other_hosts_are_kept_until_too_old(self):
        """Another host's containers are reaped only past the age limit."""
        assert not is_leftover(labels("elsewhere:1", 1000), now=1010, max_age=3600, host=HOST)
        assert is_leftover(labels("elsewhere:1", 1000), now=1000 + 3601, max_age=3600, host=HOST)

    def test_managed_labels_are_namespaced(self):
        """Caller labels are prefixed; owner and creation time are always set."""
        made = managed_labels("h:1", {"run_id": "r1", "attempt": "2"})
        assert made["org.sandloop.run_id"] == "r1" and made["org.sandloop.attempt"] == "2"
        assert made[OWNER] == "h:1" and CREATED in made
