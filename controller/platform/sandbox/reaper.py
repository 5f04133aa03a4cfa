"""Remove containers and volumes that earlier controllers left behind when they died.

A resource whose owner this controller can check (a process of this host, in this PID
namespace: :class:`~controller.platform.sandbox.labels.Owner`) is a leftover exactly when
that process is gone: its pid no longer exists, or now belongs to a process that started at
another time (the pid was reused). Live work of another controller on this host is never
taken, however old its labels say it is: the wall clock is not trusted there, since a clock
step (NTP, a VM resumed from a snapshot) once made every container on the engine look
hours old at once, and the next run's start removed live ones ("No such container").
A resource whose owner cannot be checked (another host sharing the engine, another PID
namespace, a label of no process) is a leftover once older than ``max_age_seconds``; one
whose owner is labelled without its start time (an older controller, a test) once older
than that, or once its pid is gone.
"""

from __future__ import annotations

import socket
import time

import docker
import docker.errors

from controller.platform.sandbox.labels import CREATED, MANAGED, Owner, alive, pid_namespace

DEFAULT_MAX_AGE_SECONDS = 6 * 3600


def is_leftover(labels: dict[str, str], *, now: float, max_age: float, host: str,
                pidns: str | None = None) -> bool:
    """Decide from a resource's labels whether its owner is gone (see the module docstring).

    Args:
        labels: The resource's labels.
        now: The wall-clock time, for owners that cannot be checked.
        max_age: Seconds after which such a resource is a leftover.
        host: This host's name.
        pidns: This process's PID namespace (default: read from /proc).
    """
    owner = Owner.of(labels)
    here = owner is not None and owner.host == host
    if owner is not None and here and owner.started is not None and owner.pidns == (pidns or pid_namespace()):
        return not alive(owner.pid, owner.started)
    try:
        age = now - float(labels.get(CREATED, "0"))
    except ValueError:
        age = max_age + 1
    if age > max_age:
        return True
    # Labelled without its start time (an older controller, a test's owner): the pid alone says it.
    return owner is not None and here and owner.pidns is None and not alive(owner.pid)


def reap_leftovers(
    client: docker.DockerClient, *, max_age: float = DEFAULT_MAX_AGE_SECONDS
) -> int:
    """Remove leftover containers, then leftover volumes; return how many were removed."""
    now, host, pidns = time.time(), socket.gethostname(), pid_namespace()
    removed = 0
    # sparse: one list call, no inspect per container, so a container that another process
    # removes meanwhile cannot make the listing fail.
    for container in client.containers.list(all=True, sparse=True, filters={"label": f"{MANAGED}=1"}):
        labels = container.attrs.get("Labels") or {}
        if is_leftover(labels, now=now, max_age=max_age, host=host, pidns=pidns):
            removed += _quietly(lambda c=container: c.remove(force=True, v=True))
    for volume in client.volumes.list(filters={"label": f"{MANAGED}=1"}):
        labels = volume.attrs.get("Labels") or {}
        if is_leftover(labels, now=now, max_age=max_age, host=host, pidns=pidns):
            removed += _quietly(lambda v=volume: v.remove(force=True))
    return removed


def _quietly(action: object) -> int:
    try:
        action()  # type: ignore[operator]
        return 1
    except docker.errors.APIError:
        return 0  # removed concurrently, or still in use: the next start tries again
