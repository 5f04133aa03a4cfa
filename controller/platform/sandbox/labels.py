"""Labels on every container and volume the platform creates, and who owns them.

``org.sandloop.owner`` names the controller process, ``host:pid:started:pidns``: its host,
its pid, when it started (clock ticks after boot, ``/proc/<pid>/stat``'s field 22) and its
PID namespace (``/proc/self/ns/pid``). A later controller on the same host and in the same
PID namespace can then tell, without any clock, leftovers of a process that died (no such
pid, or the pid now belongs to a process that started at another time) from the live work
of a process that still runs beside it. Labels written before the last two parts existed
(``host:pid``) are still read.
"""

from __future__ import annotations

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
_PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    """Who made a resource: a process on a host (``started`` and ``pidns`` None when unknown)."""

    host: str
    pid: int
    started: int | None = None
    pidns: str | None = None

    def label(self) -> str:
        """The owner label's value."""
        if self.started is None or self.pidns is None:
            return f"{self.host}:{self.pid}"
        return f"{self.host}:{self.pid}:{self.started}:{self.pidns}"

    @classmethod
    def parse(cls, value: str) -> Owner | None:
        """The owner a label names, or None when it names no process of a host (e.g. a Pod)."""
        parts = value.split(":")
        if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit() and parts[3].isdigit():
            return cls(parts[0], int(parts[1]), int(parts[2]), parts[3])
        host, _, pid = value.rpartition(":")
        return cls(host, int(pid)) if host and pid.isdigit() else None


def started_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks after boot; None if it cannot be read."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
        # The command name (field 2) may hold spaces and parentheses: count from its last ')'.
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


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
    pid = os.getpid()
    return Owner(socket.gethostname(), pid, started_ticks(pid), pid_namespace()).label()


def managed_labels(owner: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Labels for a new container: managed flag, owner, creation time, plus ``extra``.

    ``extra`` keys are namespaced (``run_id`` becomes ``org.sandloop.run_id``).
    """
    labels = {MANAGED: "1", OWNER: owner, CREATED: str(int(time.time()))}
    labels.update({f"{PREFIX}{key}": str(value)[:128] for key, value in extra.items()})
    return labels
