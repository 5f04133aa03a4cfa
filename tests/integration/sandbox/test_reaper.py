"""Leftovers of a controller that died are removed at the next start; live work is not."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from controller.platform.sandbox.labels import managed_labels
from controller.platform.sandbox.reaper import reap_leftovers

pytestmark = pytest.mark.usefixtures("no_leftovers")


def dead_pid() -> int:
    """The pid of a process that has just exited (so nothing owns it now)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


class TestReaper:
    def test_containers_and_volumes_of_a_dead_owner_are_removed(self, docker_client, parser_image):
        """A container and a volume labelled with a dead pid of this host are reaped."""
        labels = managed_labels(f"{socket.gethostname()}:{dead_pid()}", {"run_id": "dead-run"})
        volume = docker_client.volumes.create(labels=labels)
        container = docker_client.containers.create(parser_image, ["true"], labels=labels)
        removed = reap_leftovers(docker_client)
        assert removed >= 2
        names = [c.id for c in docker_client.containers.list(all=True, ignore_removed=True)]
        assert container.id not in names
        assert volume.name not in [v.name for v in docker_client.volumes.list()]

    def test_work_of_a_live_owner_is_kept(self, docker_client, parser_image):
        """A container owned by a live process (this one) survives the reaper."""
        labels = managed_labels(f"{socket.gethostname()}:{os.getpid()}", {"run_id": "live-run"})
        container = docker_client.containers.create(parser_image, ["true"], labels=labels)
        try:
            reap_leftovers(docker_client)
            assert container.id in [c.id for c in docker_client.containers.list(all=True, ignore_removed=True)]
        finally:
            container.remove(force=True)
