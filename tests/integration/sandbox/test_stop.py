"""Issue 42: a stop reaches an execution in whatever thread it waits, and nothing starts after it.

Before the stop switch, a signal interrupted only the main thread: an execution waiting in a
worker thread (``check``'s pool) ran to its end, and an execution lost to the infrastructure
after its process was told to stop was retried in a new container.
"""

from __future__ import annotations

import threading
import time

import pytest

from agents.ports.errors import InfraFault
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.labels import MANAGED, OWNER
from controller.platform.sandbox.retry import RetryingSandbox
from controller.platform.stop import Stopped, StopSwitch
from tests.integration.sandbox.test_infra_retry import FAST, Counting, sleeper

pytestmark = pytest.mark.usefixtures("no_leftovers")


def ours(docker_client, owner: str) -> list[str]:  # noqa: ANN001
    return [c.id for c in docker_client.containers.list(all=True, sparse=True, filters={"label": f"{MANAGED}=1"})
            if (c.attrs.get("Labels") or {}).get(OWNER) == owner]


def running_in_a_thread(sandbox: DockerSandbox | RetryingSandbox, image: str) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def execute() -> None:
        try:
            outcome.append(sandbox.run(sleeper(image, 20)))
        except BaseException as exc:  # noqa: BLE001 - the test reads what the thread ended with
            outcome.append(exc)

    thread = threading.Thread(target=execute, daemon=True)
    thread.start()
    return thread, outcome


def wait_running(docker_client, owner: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(docker_client.api.inspect_container(c)["State"]["Running"] for c in ours(docker_client, owner)):
            time.sleep(1.0)  # the program is past its start
            return
        time.sleep(0.1)
    pytest.fail("the execution's container never ran")


def test_a_stop_ends_an_execution_waiting_in_another_thread_within_a_second(docker_client, parser_image,
                                                                          base_settings):
    switch = StopSwitch()
    owner = "pytest-stop-1"
    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=owner, stop=switch)
    thread, outcome = running_in_a_thread(sandbox, parser_image)
    wait_running(docker_client, owner)
    stopped_at = time.monotonic()
    switch.stop("SIGINT")
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - stopped_at < 1.5
    assert isinstance(outcome[0], Stopped) and outcome[0].reason == "SIGINT"
    assert ours(docker_client, owner) == []  # killed and removed, not left to run its 20 s


def test_after_a_stop_a_lost_execution_is_not_run_again(docker_client, parser_image, base_settings):
    """The container removed from outside (a reaper, as after the service's kill -9) once the
    process was told to stop: no new container, the stop is what the caller sees."""
    switch = StopSwitch()
    owner = "pytest-stop-2"
    counting = Counting(DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=owner, stop=switch))
    thread, outcome = running_in_a_thread(RetryingSandbox(counting, FAST, sleep=switch.sleep), parser_image)
    wait_running(docker_client, owner)
    switch.stop("parent gone")
    for container in ours(docker_client, owner):
        docker_client.api.remove_container(container, force=True)
    thread.join(10)
    assert isinstance(outcome[0], Stopped) and not isinstance(outcome[0], InfraFault)
    assert counting.runs <= 2  # a second call, if the loss won the race, refused before any container
    assert ours(docker_client, owner) == []


def test_nothing_starts_once_stopped(docker_client, parser_image, base_settings):
    switch = StopSwitch()
    switch.stop("SIGTERM")
    owner = "pytest-stop-3"
    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=owner, stop=switch)
    with pytest.raises(Stopped):
        sandbox.run(sleeper(parser_image, 1))
    assert ours(docker_client, owner) == []
