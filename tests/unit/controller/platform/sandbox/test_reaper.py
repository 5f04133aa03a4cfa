"""Which platform containers count as leftovers of a controller that died."""

from __future__ import annotations

import os
import socket
import subprocess
import time

from controller.platform.sandbox.labels import (
    CREATED,
    OWNER,
    OWNER_PIDNS,
    OWNER_STARTED,
    Owner,
    managed_labels,
    pid_namespace,
    this_owner,
)
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

    def test_live_owner_is_kept_whatever_the_wall_clock_says(self):
        """A clock step (NTP, a VM resumed) makes a live container look hours old: it is still kept.

        The cause of a run ended ``error`` with "No such container": every run's start reaps,
        and the age rule came before the owner's liveness.
        """
        mine = managed_labels(this_owner(), {})
        mine[CREATED] = "1000"
        assert not is_leftover(mine, now=1000 + 7 * 3600, max_age=6 * 3600, host=HOST)

    def test_a_reused_pid_does_not_keep_a_dead_owners_work(self):
        """The pid lives, but in a process that started at another time: its owner is gone."""
        reused = managed_labels(this_owner(), {})
        reused[OWNER_STARTED] = str(int(reused[OWNER_STARTED]) + 1)
        assert is_leftover(reused, now=time.time(), max_age=3600, host=HOST)

    def test_a_dead_owner_with_a_start_time_is_reaped(self):
        """A pid that has exited, labelled with a start time: a leftover at once."""
        proc = subprocess.Popen(["true"])
        proc.wait()
        dead = {**labels(f"{HOST}:{proc.pid}", 1000), OWNER_STARTED: "1", OWNER_PIDNS: pid_namespace()}
        assert is_leftover(dead, now=1010, max_age=3600, host=HOST)

    def test_another_pid_namespace_is_judged_by_age_only(self):
        """Pids of another namespace mean nothing here: kept until too old, then reaped."""
        other = {**labels(f"{HOST}:1", 1000), OWNER_STARTED: "5", OWNER_PIDNS: "1"}
        assert not is_leftover(other, now=1010, max_age=3600, host=HOST, pidns="2")
        assert is_leftover(other, now=1000 + 3601, max_age=3600, host=HOST, pidns="2")

    def test_this_process_labels_its_start_and_pid_namespace(self):
        """Labels of this very process carry its start ticks and PID namespace; another owner's do not."""
        owner = Owner.of(managed_labels(this_owner(), {}))
        assert owner is not None and (owner.host, owner.pid) == (HOST, os.getpid())
        assert owner.pidns == pid_namespace() and owner.started is not None
        assert Owner.of(managed_labels("pytest:12", {})) == Owner("pytest", 12)
        assert Owner.of({OWNER: "sandloop-controller-pod"}) is None

    def test_managed_labels_are_namespaced(self):
        """Caller labels are prefixed; owner and creation time are always set."""
        made = managed_labels("h:1", {"run_id": "r1", "attempt": "2"})
        assert made["org.sandloop.run_id"] == "r1" and made["org.sandloop.attempt"] == "2"
        assert made[OWNER] == "h:1" and CREATED in made
