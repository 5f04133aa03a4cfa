"""Which Docker engine failures are the infrastructure losing an execution (retried), which not."""

from __future__ import annotations

import docker.errors
import pytest
import requests

from agents.ports.errors import InfraFault, SandboxError
from controller.platform.sandbox.faults import engine_fault, lost_container

IMAGE = "sandloop/python-parser:abc"


def api_error(status: int, explanation: str = "boom") -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError(f"{status} Server Error", response=response, explanation=explanation)


class TestEngineFault:
    @pytest.mark.parametrize(("exc", "reason"), [
        (docker.errors.NotFound("404 Client Error: No such container: 1a2b"), "container_gone"),
        (docker.errors.ImageNotFound("No such image: sandloop/python-parser:abc"), "image_missing"),
        (requests.exceptions.ConnectionError("Connection aborted"), "engine_unreachable"),
        (requests.exceptions.ReadTimeout("Read timed out"), "engine_unreachable"),
        (docker.errors.DockerException("Error while fetching server API version"), "engine_unreachable"),
        (api_error(503), "engine_unreachable"),
        (api_error(500, "OCI runtime create failed"), "engine_error"),
        (api_error(409, "removal of container x is already in progress"), "engine_error"),
    ], ids=["no_such_container", "image_missing", "connection", "timeout", "no_socket", "503", "500", "409"])
    def test_lost_executions_are_infra_faults(self, exc, reason):
        """The container, the image or the engine went away (or failed): an InfraFault with its reason."""
        fault = engine_fault(IMAGE, exc)
        assert isinstance(fault, InfraFault) and fault.reason == reason
        assert "\n" not in fault.one_line()

    def test_a_request_the_engine_refuses_is_not_retried(self):
        """A 400 (a malformed request: our bug) stays a plain SandboxError."""
        fault = engine_fault(IMAGE, api_error(400, "invalid mount config"))
        assert type(fault) is SandboxError and "refused" in fault.message

    def test_an_unknown_reason_is_refused(self):
        """InfraFault takes only the bounded reasons (they label a metric)."""
        with pytest.raises(ValueError, match="unknown"):
            InfraFault("cosmic_rays", "x")


class TestLostContainer:
    @pytest.mark.parametrize("state", [
        {"Status": "removing", "Dead": True, "ExitCode": 137},
        {"Status": "dead", "ExitCode": 0},
    ], ids=["removing", "dead"])
    def test_a_container_being_removed_was_lost(self, state):
        """Removed under its execution: container_gone."""
        fault = lost_container(state)
        assert fault is not None and fault.reason == "container_gone"

    @pytest.mark.parametrize("code", [137, 143])
    def test_a_holder_killed_from_outside_was_lost(self, code):
        """No end marker, SIGKILL or SIGTERM, no OOM: container_killed (PID 1 cannot be killed from inside)."""
        fault = lost_container({"Status": "exited", "ExitCode": code, "OOMKilled": False})
        assert fault is not None and fault.reason == "container_killed"

    @pytest.mark.parametrize("state", [
        {"Status": "exited", "ExitCode": 137, "OOMKilled": True},
        {"Status": "exited", "ExitCode": 125, "OOMKilled": False},
        {"Status": "exited", "ExitCode": 0},
    ], ids=["oom", "handover_failed", "zero"])
    def test_other_ends_are_the_programs(self, state):
        """An OOM kill or any other exit is the execution's result, never retried."""
        assert lost_container(state) is None
