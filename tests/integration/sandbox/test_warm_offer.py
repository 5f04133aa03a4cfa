"""Warm containers handed from one backend (the service's workers) to another (a run's process),
on the real engine (issue 32).

Pins: a handed container serves the taking backend's first matching execution, with its output
and outputs, after the giver's attach (without stdin) was closed; it is then removed like any
other; a handed container that died, or whose key does not match, is ignored and the execution
runs as without; the report names the key and the container taken.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.offering import OfferingSandbox
from controller.platform.sandbox.pool import WarmContainer
from controller.platform.sandbox.removal import remove_now
from controller.platform.sandbox.warm_offer import Offer, WarmKeyModel, WarmOffer, read_report
from tests.integration.sandbox.test_warm_pool import spec, wait_for_idle
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")

PROGRAM = """
    import os
    print("in", sorted(os.listdir("/work/in")))
    open("/work/out/result.txt", "w").write("made")
"""


@pytest.fixture
def giver(docker_client, base_settings, sandbox_runtime) -> Iterator[OfferingSandbox]:  # noqa: ANN001
    """A backend whose pool's containers are for other backends (the service's workers)."""
    sandbox = OfferingSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                              pool_size=1, pool_max_idle_seconds=60, runtime=sandbox_runtime)
    yield sandbox
    sandbox.close()


def handed(giver: OfferingSandbox, image: str) -> tuple[WarmContainer, Offer]:
    probe = spec(image, PROGRAM)
    giver.prewarm(probe)
    wait_for_idle(giver)
    deadline = time.monotonic() + 30
    while not any(w.session is not None and w.session.ready for w in giver.pool.idle_containers()):
        assert time.monotonic() < deadline, "the warm container never said it was ready"
        time.sleep(0.05)
    box = giver.hand_out(probe)
    assert box is not None and box.session is None
    key = WarmKeyModel.of(probe)
    assert key is not None
    return box, Offer(container=box.container.id, volume=box.volume.name, warmup_seconds=box.warmup_seconds, key=key)


def taker(docker_client, base_settings, offer: Offer, report: Path) -> DockerSandbox:  # noqa: ANN001
    return DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                         offer=WarmOffer(report=str(report), offers=[offer]), runtime=base_settings.sandbox_runtime)


def test_a_handed_container_serves_the_first_matching_execution(giver, docker_client, base_settings, parser_image,
                                                                  tmp_path):
    """Attached again after the giver let go, it runs the program with its inputs and gives its outputs back."""
    box, offer = handed(giver, parser_image)
    run = spec(parser_image, PROGRAM)
    backend = taker(docker_client, base_settings, offer, tmp_path / "report.json")
    try:
        backend.prewarm(run)
        result = backend.run(run)
        trace = backend.last_trace
    finally:
        backend.close()
        remove_now(box.container, box.volume)
    assert result.exit_code == 0, result.stderr.text
    assert result.stdout.text == "in ['.go', 'prog.py']\n"
    assert result.warm and trace is not None and trace.handed
    assert result.container_id == offer.container[:12]
    assert [c.id for c in docker_client.containers.list(all=True, ignore_removed=True) if c.id == offer.container] == []
    report = read_report(tmp_path / "report.json")
    assert report is not None and report.key == offer.key and report.taken == [offer.container]
    assert report.executions == 1


def test_handed_as_many_as_expected_the_run_warms_none_of_its_own(giver, docker_client, base_settings,
                                                                  parser_image, tmp_path):
    """Two executions, two handed containers: both served warm by them, the run's own pool never launched."""
    first, offer = handed(giver, parser_image)
    second, other = handed(giver, parser_image)
    offers = [offer.model_copy(update={"expected": 2}), other.model_copy(update={"expected": 2})]
    backend = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER, pool_size=1,
                            offer=WarmOffer(report=str(tmp_path / "report.json"), offers=offers))
    try:
        run = spec(parser_image, PROGRAM)
        backend.prewarm(run)
        results = [backend.run(run), backend.run(run)]
        assert backend.pool is not None and backend.pool.stats.warmups == [] and backend.pool.idle_count() == 0
    finally:
        backend.close()
        for box in (first, second):
            remove_now(box.container, box.volume)
    assert [r.container_id for r in results] == [offer.container[:12], other.container[:12]]
    report = read_report(tmp_path / "report.json")
    assert report is not None and report.executions == 2 and report.taken == [offer.container, other.container]


def test_outputs_come_back_from_a_handed_container(giver, docker_client, base_settings, parser_image, tmp_path):
    """The holder's frames after the end marker reach the taker (collect is part of the key)."""
    from dataclasses import replace

    probe = replace(spec(parser_image, PROGRAM), collect=("result.txt",))
    giver.prewarm(probe)
    wait_for_idle(giver)
    box = giver.hand_out(probe)
    assert box is not None
    key = WarmKeyModel.of(probe)
    assert key is not None
    offer = Offer(container=box.container.id, volume=box.volume.name, key=key)
    backend = taker(docker_client, base_settings, offer, tmp_path / "report.json")
    try:
        result = backend.run(probe)
    finally:
        backend.close()
        remove_now(box.container, box.volume)
    assert result.exit_code == 0 and result.warm, result.stderr.text
    assert result.files == {"result.txt": b"made"}


def test_a_handed_container_killed_before_the_take_is_ignored(giver, docker_client, base_settings, parser_image,
                                                              tmp_path):
    """The execution runs cold (not handed) and passes; nothing is taken."""
    box, offer = handed(giver, parser_image)
    box.container.kill()
    backend = taker(docker_client, base_settings, offer, tmp_path / "report.json")
    try:
        result = backend.run(spec(parser_image, PROGRAM))
        trace = backend.last_trace
    finally:
        backend.close()
        remove_now(box.container, box.volume)
    assert result.exit_code == 0 and not result.warm
    assert trace is not None and not trace.handed
    report = read_report(tmp_path / "report.json")
    assert report is None or report.taken == []


def test_a_handed_container_of_another_key_is_not_used(giver, docker_client, base_settings, parser_image, tmp_path):
    """Another program's limits make another key: the offer is left alone (the giver removes it)."""
    box, offer = handed(giver, parser_image)
    backend = taker(docker_client, base_settings, offer, tmp_path / "report.json")
    try:
        result = backend.run(spec(parser_image, PROGRAM, memory_mb=300))
        trace = backend.last_trace
        box.container.reload()
        still_running = box.container.status == "running"
    finally:
        backend.close()
        remove_now(box.container, box.volume)
    assert result.exit_code == 0 and trace is not None and not trace.handed
    assert still_running
