"""What the Docker engine's failures mean: the infrastructure lost the execution, or not.

An :class:`~agents.ports.errors.InfraFault` is retried in a fresh sandbox
(:mod:`controller.platform.sandbox.retry`); any other :class:`~agents.ports.errors.SandboxError`
ends the attempt at once. The rule: an engine call that failed because the container, the
image or the engine itself went away (or answered with a server error) is the
infrastructure's; a request the engine refused as malformed (other 4xx) is a bug that a
retry would only repeat.

A container's output stream that ends before the holder said it was done is read the same
way. PID 1 of the sandbox (the holder) cannot be killed from inside its PID namespace, so
such an end is the engine's doing: the container being removed (state ``removing`` or
``dead``, or already gone: 404), or killed from outside (SIGKILL or SIGTERM, exit 137 or
143, with no OOM kill). An OOM kill stays the program's result; so does any other exit.
(A program that ptraces its holder into exiting 137 can only have itself run again, at
most ``tries`` times, each in a fresh sandbox, and then end its run as an environment fault.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import docker.errors
import requests.exceptions

from agents.ports.errors import InfraFault, SandboxError, first_line

#: Exit statuses of a container stopped by a signal from outside (SIGKILL, SIGTERM).
KILLED_FROM_OUTSIDE = frozenset({137, 143})
#: HTTP statuses of an engine (or a proxy in front of it) that is not there for the moment.
UNAVAILABLE = frozenset({502, 503, 504})
_RESTART_HINT = "check the engine (docker info); the run can be resumed with run --resume RUN_ID"


def engine_fault(image: str, exc: Exception) -> SandboxError:
    """The error an engine failure during an execution in ``image`` becomes."""
    text = first_line(exc, 300)
    if isinstance(exc, docker.errors.ImageNotFound):
        return InfraFault("image_missing", f"the image {image} is no longer in the engine ({text})",
                          hint="make images rebuilds it; a run's image is rebuilt when the run starts or resumes")
    if isinstance(exc, docker.errors.NotFound):
        return InfraFault("container_gone", f"the sandbox container went away while it ran ({text})")
    if isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.Timeout)):
        return InfraFault("engine_unreachable", f"the Docker engine did not answer ({text})", hint=_RESTART_HINT)
    if isinstance(exc, docker.errors.APIError):
        return _api_fault(image, exc, text)
    if isinstance(exc, docker.errors.DockerException):  # e.g. the client could not reach the socket
        return InfraFault("engine_unreachable", f"the Docker engine did not answer ({text})", hint=_RESTART_HINT)
    return SandboxError(f"the Docker engine failed running {image}: {text}")


def _api_fault(image: str, exc: docker.errors.APIError, text: str) -> SandboxError:
    status = exc.status_code or 0
    if status in UNAVAILABLE:
        return InfraFault("engine_unreachable", f"the Docker engine did not answer ({text})", hint=_RESTART_HINT)
    if status >= 500 or status == 409:  # the engine's own failure, or a conflict with its state
        return InfraFault("engine_error", f"the Docker engine failed running {image} ({text})")
    return SandboxError(f"the Docker engine refused to run {image}: {text}")


def lost_container(state: Mapping[str, Any]) -> InfraFault | None:
    """Whether a container whose output ended early was lost to the engine (see the module
    docstring); None when its end is the program's (an OOM kill, any other exit)."""
    if state.get("Status") in ("removing", "dead") or state.get("Dead"):
        return InfraFault("container_gone", "the sandbox container was removed while it ran")
    code = state.get("ExitCode")
    if not state.get("OOMKilled") and code in KILLED_FROM_OUTSIDE:
        return InfraFault("container_killed", f"the sandbox container was stopped from outside (exit {code}) "
                          "before its program ended")
    return None
