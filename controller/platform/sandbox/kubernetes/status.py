"""Read a sandbox Pod's status as one verdict: still going, done, or a clear failure (pure).

Kubernetes reports each way an execution can end in a different place: the Pod's phase and
reason (``DeadlineExceeded``, ``Evicted``), the init container's terminated state
(``OOMKilled``, an exit code), a waiting reason (``ErrImagePull``, ``ImagePullBackOff``,
``CreateContainerConfigError``), the ``PodScheduled`` condition (``Unschedulable``). This
module turns that into one :class:`Verdict` the backend acts on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from controller.platform.sandbox.kubernetes.podspec import COLLECTOR, PROGRAM

State = Literal["pending", "running", "succeeded", "failed"]

#: A Pod's failure reasons when its node went away (node shutdown, node lost).
NODE_GONE_REASONS = frozenset({"NodeLost", "Shutdown", "Terminated", "NodeShutdown", "NodeAffinity"})
#: How the kubelet's eviction message starts when the node, not the Pod, ran short.
NODE_PRESSURE = ("The node was low on resource", "The node had condition")
#: Waiting reasons that will not fix themselves: the image cannot be had, or the Pod is malformed.
IMAGE_PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
CONFIG_REASONS = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError"})


@dataclass(frozen=True)
class Verdict:
    """Where a Pod stands.

    Attributes:
        state: pending (not started), running, succeeded (collector done), failed.
        timed_out: the Pod hit ``activeDeadlineSeconds``.
        oom_killed: a container was OOM-killed.
        problem: why the Pod cannot run (image pull, unschedulable, config), for an error.
        problem_kind: ``image_pull`` | ``unschedulable`` | ``config`` | ``evicted`` (the Pod over its
            own storage limits: the program's doing) | ``node_evicted`` (evicted for the node's
            sake) | ``lost`` (its node went away or it was disrupted) | ``failed``.
        program_exit: the init container's exit code, when it terminated.
    """

    state: State
    timed_out: bool = False
    oom_killed: bool = False
    problem: str | None = None
    problem_kind: str | None = None
    program_exit: int | None = None


def _statuses(status: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    for item in status.get(key) or []:
        if item.get("name") == name:
            return dict(item)
    return {}


def _terminated(container: dict[str, Any]) -> dict[str, Any]:
    state = container.get("state") or {}
    return state.get("terminated") or (container.get("lastState") or {}).get("terminated") or {}


def _waiting_problem(status: dict[str, Any]) -> tuple[str, str] | None:
    for key in ("initContainerStatuses", "containerStatuses"):
        for item in status.get(key) or []:
            waiting = (item.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason")
            message = (waiting.get("message") or "")[:300]
            if reason in IMAGE_PULL_REASONS:
                return "image_pull", f"{reason}: {message or item.get('image', '')}"
            if reason in CONFIG_REASONS:
                return "config", f"{reason}: {message}"
    return None


def _unschedulable(status: dict[str, Any]) -> str | None:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False" \
                and condition.get("reason") == "Unschedulable":
            return (condition.get("message") or "no node fits the Pod")[:300]
    return None


def _disrupted(status: dict[str, Any]) -> str | None:
    """The reason of a ``DisruptionTarget`` condition (preemption, a drain, a taint), if the Pod has one."""
    for condition in status.get("conditions") or []:
        if condition.get("type") == "DisruptionTarget" and condition.get("status") == "True":
            return str(condition.get("reason") or "disrupted")
    return None


def _evicted(status: dict[str, Any], program_exit: int | None) -> Verdict:
    """An eviction: the node's (pressure: retried) or the Pod's own (over its storage limits)."""
    message = (status.get("message") or "evicted")[:300]
    kind = "node_evicted" if message.startswith(NODE_PRESSURE) else "evicted"
    return Verdict("failed", problem=message, problem_kind=kind, program_exit=program_exit)


def read_verdict(pod: dict[str, Any]) -> Verdict:
    """The verdict of a Pod given as the API's JSON (``status`` may be missing or partial)."""
    status = pod.get("status") or {}
    phase, reason = status.get("phase") or "Pending", status.get("reason") or ""
    program = _terminated(_statuses(status, "initContainerStatuses", PROGRAM))
    program_exit = program.get("exitCode")
    oom = program.get("reason") == "OOMKilled" or \
        _terminated(_statuses(status, "containerStatuses", COLLECTOR)).get("reason") == "OOMKilled"
    if phase == "Succeeded":
        return Verdict("succeeded", oom_killed=oom, program_exit=program_exit)
    if phase == "Unknown":  # the node stopped reporting: the Pod is lost to us
        return Verdict("failed", problem="its node stopped reporting (phase Unknown)", problem_kind="lost")
    if phase == "Failed":
        if reason == "DeadlineExceeded":
            return Verdict("failed", timed_out=True, oom_killed=oom, program_exit=program_exit)
        if reason == "Evicted":
            return _evicted(status, program_exit)
        gone = reason if reason in NODE_GONE_REASONS else _disrupted(status)
        if gone is not None and not oom:
            return Verdict("failed", problem=f"pod failed: {gone}: {(status.get('message') or '')[:200]}".rstrip(": "),
                           problem_kind="lost", program_exit=program_exit)
        return Verdict("failed", oom_killed=oom, program_exit=program_exit,
                       problem=None if oom else f"pod failed{': ' + reason if reason else ''}",
                       problem_kind=None if oom else "failed")
    waiting = _waiting_problem(status)
    if waiting is not None:
        return Verdict("pending", problem_kind=waiting[0], problem=waiting[1])
    unschedulable = _unschedulable(status)
    if unschedulable is not None:
        return Verdict("pending", problem_kind="unschedulable", problem=unschedulable)
    return Verdict("running" if phase == "Running" else "pending", program_exit=program_exit)
