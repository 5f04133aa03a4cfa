"""Fixtures of the sandbox tests on the real engine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.platform.sandbox.docker import DockerSandbox
from tests.owner import TEST_OWNER


@pytest.fixture
def pooled(docker_client, base_settings, sandbox_runtime) -> Iterator[DockerSandbox]:  # noqa: ANN001
    """A Docker backend with a warm pool of one container per kind, closed afterwards."""
    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                            pool_size=1, pool_max_idle_seconds=60, runtime=sandbox_runtime)
    yield sandbox
    sandbox.close()
