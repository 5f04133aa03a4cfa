"""Engine round trips per execution, counted through the real client (issue #12).

The counting wrapper (:class:`controller.platform.sandbox.trace.RoundTrips`) sits on the real Docker
client's HTTP session; these tests pin how many calls the calling thread makes, i.e. how
many are on the critical path of one execution. Removal and refills run in other threads.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")

#: Says it is ready (as the parser entrypoint does after its imports), waits for go, runs prog.py.
WAITER = ("import os, sys; os.write(1, b'\\x1esandloop-ready\\x1e'); sys.stdin.readline(); "
          "exec(open('/work/in/prog.py').read())")
PROGRAM = "open('/work/out/result.json', 'w').write('{}')"


def spec(image: str) -> SandboxSpec:
    return SandboxSpec(
        image=image,
        command=("python3", "-I", "/work/in/prog.py"),
        warm_command=("python3", "-I", "-c", WAITER),
        inputs={"prog.py": textwrap.dedent(PROGRAM).encode()},
        collect=("result.json",),
        limits=SandboxLimits(timeout_seconds=20),
        labels={"agent": "pytest"},
    )


@pytest.fixture
def backend(docker_client, base_settings, request) -> Iterator[DockerSandbox]:  # noqa: ANN001
    sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                            pool_size=request.param, pool_max_idle_seconds=60,
                            remove_in_background=True)
    yield sandbox
    sandbox.close()  # drains the background removals: no_leftovers then finds nothing


class TestRoundTrips:
    @pytest.mark.parametrize("backend", [1], indirect=True)
    def test_a_warm_execution_makes_no_engine_call(self, backend, parser_image):
        """Warm: inputs in and outputs out travel on the attach connection; nothing waits on the engine."""
        work = spec(parser_image)
        backend.prewarm(work)
        assert backend.wait_warm(60), "the pool never warmed up"
        result = backend.run(work)
        assert result.warm and result.files == {"result.json": b"{}"}
        assert backend.last_trace.round_trips == []
        assert backend.last_trace.phases["ready"] > 0

    @pytest.mark.parametrize("backend", [0], indirect=True)
    def test_a_cold_execution_makes_four(self, backend, parser_image):
        """Cold: volume, container, attach, start; the handover, outputs and removal wait on no call."""
        result = backend.run(spec(parser_image))
        assert not result.warm and result.files == {"result.json": b"{}"}
        assert backend.last_trace.round_trips == [
            "POST /volumes/create", "POST /containers/create", "POST /containers/{id}/attach",
            "POST /containers/{id}/start",
        ]
        assert set(backend.last_trace.phases) >= {"take", "start", "hand over", "run", "collect", "remove"}
