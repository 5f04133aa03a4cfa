"""Labels on every container and volume the platform creates, and who owns them.

``org.sandloop.owner`` names the controller process (``host:pid``). When the owner is the
process itself (:func:`this_owner`), two more labels say which process that pid was:
``org.sandloop.owner-started`` (when it started, in clock ticks after boot: ``/proc/<pid>/stat``'s
field 22) and ``org.sandloop.owner-pidns`` (its PID namespace, ``/proc/self/ns/pid``). A later
controller on the same host and in the same PID namespace can then tell, without any wall
clock, leftovers of a process that died (no such pid, or the pid now belongs to a process
that started at another time) from the live work of a process that still runs beside it.
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PREFIX = "org.sandloop."
MANAGED = f"{PREFIX}managed"
OWNER = f"{PREFIX}owner"
CREATED = f"{PREFIX}created"
OWNER_STARTED = f"{PREFIX}owner-started"
OWNER_PIDNS = f"{PREFIX}owner-pidns"
_PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    """Who made a resource: a process of a host (``started`` and ``pidns`` None when not labelled)."""

    host: str
    pid: int
    started: int | None = None
    pidns: str | None = None

    @classmethod
    def of(cls, labels: Mapping[str, str]) -> Owner | None:
        """The owner a resource's labels name, or None when they name no process of a host (a Pod)."""
        host, _, pid = labels.get(OWNER, "").rpartition(":")
        if not host or not pid.isdigit():
            return None
        started, pidns = labels.get(OWNER_STARTED, ""), labels.get(OWNER_PIDNS, "")
        return cls(host, int(pid), int(started) if started.isdigit() else None, pidns if pidns.isdigit() else None)


def started_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks after boot; None if it cannot be read."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
        # The command name (field 2) may hold spaces and parentheses: count from its last ')'.
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int, started: int | None = None) -> bool:
    """Whether process ``pid`` exists and, when ``started`` is known, is the one that started then
    (a pid comes back: a container's first process is pid 1 after every restart)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    now_started = started_ticks(pid) if started is not None else None
    return now_started is None or now_started == started


def pid_namespace() -> str | None:
    """This process's PID namespace (the inode of ``/proc/self/ns/pid``); None without /proc."""
    try:
        link = os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return None
    digits = "".join(ch for ch in link if ch.isdigit())
    return digits or None


def this_owner() -> str:
    """The owner label value of the current process."""
    return f"{socket.gethostname()}:{os.getpid()}"


@functools.cache
def _identity(pid: int) -> dict[str, str]:
    """The labels that say which process ``pid`` (this one) is; cached per pid (a fork gets its own)."""
    started, pidns = started_ticks(pid), pid_namespace()
    if started is None or pidns is None:
        return {}
    return {OWNER_STARTED: str(started), OWNER_PIDNS: pidns}


def managed_labels(owner: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Labels for a new container: managed flag, owner, creation time, plus ``extra``.

    ``extra`` keys are namespaced (``run_id`` becomes ``org.sandloop.run_id``). When ``owner``
    is this process, its start time and PID namespace are labelled too (see the module docstring).
    """
    labels = {MANAGED: "1", OWNER: owner, CREATED: str(int(time.time()))}
    if owner == this_owner():
        labels.update(_identity(os.getpid()))
    labels.update({f"{PREFIX}{key}": str(value)[:128] for key, value in extra.items()})
    return labels
