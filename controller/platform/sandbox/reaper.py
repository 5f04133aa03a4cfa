"""Remove containers and volumes that earlier controllers left behind when they died.

A resource is a leftover when its owner process on this host no longer exists, or when it
is older than ``max_age_seconds`` whoever owns it (a remote engine shared by several hosts,
or a process that hung). Live work of another controller on this host is left alone.
"""

from __future__ import annotations

import os
import socket
import time

import docker
import docker.errors

from controller.platform.sandbox.labels import CREATED, MANAGED, OWNER

DEFAULT_MAX_AGE_SECONDS = 6 * 3600


def is_leftover(labels: dict[str, str], *, now: float, max_age: float, host: str) -> bool:
    """Decide from a resource's labels whether its owner is gone (pure; unit-tested)."""
    owner_host, _, pid = labels.get(OWNER, "").rpartition(":")
    try:
        age = now - float(labels.get(CREATED, "0"))
    except ValueError:
        age = max_age + 1
    if age > max_age:
        return True
    if owner_host != host or not pid.isdigit():
        return False
    return not _alive(int(pid))


def reap_leftovers(
    client: docker.DockerClient, *, max_age: float = DEFAULT_MAX_AGE_SECONDS
) -> int:
    """Remove leftover containers, then leftover volumes; return how many were removed."""
    now, host = time.time(), socket.gethostname()
    removed = 0
    # sparse: one list call, no inspect per container, so a container that another process
    # removes meanwhile cannot make the listing fail.
    for container in client.containers.list(all=True, sparse=True, filters={"label": f"{MANAGED}=1"}):
        labels = container.attrs.get("Labels") or {}
        if is_leftover(labels, now=now, max_age=max_age, host=host):
            removed += _quietly(lambda c=container: c.remove(force=True, v=True))
    for volume in client.volumes.list(filters={"label": f"{MANAGED}=1"}):
        labels = volume.attrs.get("Labels") or {}
        if is_leftover(labels, now=now, max_age=max_age, host=host):
            removed += _quietly(lambda v=volume: v.remove(force=True))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _quietly(action: object) -> int:
    try:
        action()  # type: ignore[operator]
        return 1
    except docker.errors.APIError:
        return 0  # removed concurrently, or still in use: the next start tries again
