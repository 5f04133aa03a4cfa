"""The workers' warm sandboxes for real (issue 32): a service on the real engine runs two ICICI runs
one after the other; the first teaches the workers its first execution's kind, the second's first
execution runs in a container the workers kept warm and handed to it; a handed container killed
before the run takes it costs the run nothing but the warmth; the service leaves nothing behind."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from controller.platform.sandbox.warm_offer import REPORT_FILE
from tests.integration.service.harness import Service, free_port, wait_for
from tests.integration.service.test_service import follow
from tests.integration.service.test_warm_runs import icici_env

pytestmark = pytest.mark.usefixtures("no_leftovers")
WORKERS = 2


def run_icici(service: Service) -> str:
    accepted = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, timeout=60)
    assert accepted.status_code == 202, accepted.text
    events = follow(f"{service.url}{accepted.json()['links']['events']}", {})
    end = events[-1][1]
    assert (end["status"], end["exit_code"]) == ("passed", 0), end
    return str(accepted.json()["id"])


def report(root: Path, run_id: str) -> dict:
    return json.loads((root / "runs" / run_id / REPORT_FILE).read_text())


def owned_by(docker_client, service: Service, **extra: str) -> list:  # noqa: ANN001
    assert service.proc is not None or "pid" in extra
    pid = extra.pop("pid", None) or str(service.proc.pid)  # type: ignore[union-attr]
    labels = [f"org.sandloop.owner={socket.gethostname()}:{pid}", *(f"org.sandloop.{k}={v}" for k, v in extra.items())]
    return docker_client.containers.list(all=True, ignore_removed=True, filters={"label": labels})


def warm_ready(docker_client, service: Service) -> list:  # noqa: ANN001
    return [c for c in owned_by(docker_client, service, pool="warm") if c.status == "running"]


@pytest.fixture
def service(tmp_path: Path, parser_image: str) -> Service:
    env = {**icici_env(tmp_path), "SBX_PARALLEL_RUNS": str(WORKERS)}
    return Service(tmp_path, env, free_port())


def test_the_second_run_takes_a_container_the_workers_kept_warm(service: Service, docker_client, tmp_path: Path):
    """The pool follows the number of workers; the second run's first execution was handed; nothing is left."""
    service.start()
    pid = str(service.proc.pid) if service.proc else ""
    try:
        first = run_icici(service)
        assert report(tmp_path, first)["taken"] == []  # nothing was known yet: as before
        assert report(tmp_path, first)["key"]["image"].startswith("sandloop/python-parser")
        # ICICI: the parser, and the statement's probe unless its analysis is cached already
        executions = report(tmp_path, first)["executions"]
        assert executions in (1, 2)
        # the pool follows the number of workers: one container per execution of a run, per worker
        wait_for(lambda: len(warm_ready(docker_client, service)) == WORKERS * executions,
                 "the workers' warm containers", 120)
        offered = {c.id for c in warm_ready(docker_client, service)}
        second = run_icici(service)
        taken = report(tmp_path, second)["taken"]
        assert len(taken) == executions and set(taken) <= offered
        # the run removed each after its one execution; the pool made others
        wait_for(lambda: len(warm_ready(docker_client, service)) == WORKERS * executions, "the pool refilled", 120)
        assert not set(taken) & {c.id for c in owned_by(docker_client, service)}
        metrics = httpx.get(f"{service.url}/metrics", timeout=30).text
        assert f"sbx_service_warm_sandboxes_taken_total {float(executions)}" in metrics, metrics[-2000:]
        assert f"sbx_service_warm_sandboxes_handed_total {float(executions)}" in metrics
        assert f"sbx_service_warm_sandboxes_idle {float(WORKERS * executions)}" in metrics
    finally:
        assert service.stop(signal.SIGTERM) == 0
    log = (tmp_path / "service.log").read_text()
    assert "service.warm_sandbox_handed" in log and "service.warm_sandboxes_kept" in log
    assert "PASSED" in (tmp_path / "runs" / second / "console.txt").read_text()
    left = owned_by(docker_client, service, pid=pid)
    volumes = docker_client.volumes.list(filters={"label": f"org.sandloop.owner={socket.gethostname()}:{pid}"})
    assert (left, volumes) == ([], [])


def test_a_handed_container_killed_before_the_take_costs_only_the_warmth(service: Service, docker_client,
                                                                        tmp_path: Path):
    """Every warm container of the workers killed just before the run starts: it passes all the same."""
    service.start()
    pid = str(service.proc.pid) if service.proc else ""
    try:
        run_icici(service)
        wait_for(lambda: len(warm_ready(docker_client, service)) >= WORKERS, "the workers' warm containers", 120)
        killed = warm_ready(docker_client, service)
        for container in killed:
            container.kill()
        time.sleep(0.05)
        second = run_icici(service)  # passes: the killed ones are discarded by the worker or ignored by the run
        # (a container the pool started after the kill may be handed and taken: that is fine)
        assert not set(report(tmp_path, second)["taken"]) & {c.id for c in killed}
    finally:
        assert service.stop(signal.SIGTERM) == 0
    assert owned_by(docker_client, service, pid=pid) == []


def test_the_warm_sandboxes_of_a_service_killed_with_kill_9_are_reaped(service: Service, docker_client):
    """Labelled with the dead service's pid: the next controller's reaper removes them and their volumes."""
    from controller.platform.sandbox.reaper import reap_leftovers

    service.start()
    pid = str(service.proc.pid) if service.proc else ""
    run_icici(service)
    wait_for(lambda: len(warm_ready(docker_client, service)) >= WORKERS, "the workers' warm containers", 120)
    assert service.stop(signal.SIGKILL) == -signal.SIGKILL
    assert owned_by(docker_client, service, pid=pid, pool="warm")
    reap_leftovers(docker_client)
    volumes = docker_client.volumes.list(filters={"label": f"org.sandloop.owner={socket.gethostname()}:{pid}"})
    assert (owned_by(docker_client, service, pid=pid), volumes) == ([], [])
