"""gVisor (``runsc``) as the Docker backend's runtime, on the real engine (issue 45).

Marked ``gvisor``: ``make test-gvisor`` runs these with the hostile-parser and hostile-input
suites and the sandbox's guarantees, warm pool and handed containers, all under
``SBX_SANDBOX_RUNTIME=runsc`` (the same tests as under runc, not copies). ``make test`` leaves
this file out. Without runsc registered with the engine they skip with one line naming
``make gvisor`` (fail when CI=true).

Pins: a program really runs on gVisor's kernel (not the host's) and the container was created
with the runtime; ``make run TARGET=icici`` passes under runsc and its ``summary.json`` names
the runtime.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterator

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.engine import engine_runtimes
from tests.host import missing
from tests.integration.hostile.harness import controller_env, run_controller
from tests.owner import TEST_OWNER

pytestmark = [pytest.mark.gvisor, pytest.mark.usefixtures("no_leftovers")]

RUNSC = "runsc"


@pytest.fixture(scope="module")
def runsc(docker_client) -> str:  # noqa: ANN001
    """The runtime's name, once the engine is seen to list it."""
    if RUNSC not in engine_runtimes(docker_client):
        missing("gVisor's runtime runsc, not registered with the Docker engine (sudo make gvisor)")
    return RUNSC


@pytest.fixture
def gvisor_sandbox(docker_client, base_settings, runsc) -> Iterator[DockerSandbox]:  # noqa: ANN001
    backend = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER, runtime=runsc)
    yield backend
    backend.close()


def test_the_program_runs_on_gvisors_kernel(gvisor_sandbox, parser_image, docker_client, monkeypatch):
    """The sandboxed program sees gVisor's kernel, not the host's, and the engine created the container with runsc."""
    created: list[str] = []
    create = docker_client.api.create_container

    def recording(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        created.append((kwargs.get("host_config") or {}).get("Runtime", ""))
        return create(*args, **kwargs)

    monkeypatch.setattr(docker_client.api, "create_container", recording)
    source = "import os; print(os.uname().release); print(open('/proc/version').read().split()[0])"
    result = gvisor_sandbox.run(SandboxSpec(image=parser_image, command=("python3", "-I", "-c", source),
                                            limits=SandboxLimits(timeout_seconds=30), labels={"agent": "pytest"}))
    assert result.exit_code == 0, result.stderr.text
    release = result.stdout.text.split()[0]
    assert release == "4.4.0" and release != platform.release()  # gVisor reports Linux 4.4.0
    assert created == [RUNSC]


def test_icici_passes_under_gvisor_and_its_summary_names_the_runtime(tmp_path, icici_copy, parser_image, runsc):
    """`run --target icici` with SBX_SANDBOX_RUNTIME=runsc passes (analysis, warm parser sandbox) and says so."""
    env = controller_env(tmp_path, icici_copy, SBX_SANDBOX_RUNTIME=runsc, SBX_CODER="offline")
    finished = run_controller(tmp_path, env, "run", "--target", "icici")
    assert finished.code == 0, finished.stdout[-2000:] + finished.stderr[-2000:]
    (summary_file,) = (tmp_path / "runs").glob("*/summary.json")
    summary = json.loads(summary_file.read_text())
    assert summary["status"] == "passed"
    assert summary["sandbox"] == {"backend": "docker", "runtime": RUNSC}


def test_an_engine_without_the_runtime_refuses_the_run_in_one_line(tmp_path, icici_copy, parser_image):
    """A runtime the engine does not list: exit 2, one line naming `make gvisor`, no traceback, no run folder."""
    env = controller_env(tmp_path, icici_copy, SBX_SANDBOX_RUNTIME="no-such-runtime")
    finished = run_controller(tmp_path, env, "run", "--target", "icici")
    assert finished.code == 2
    (line,) = [line for line in finished.stderr.splitlines() if line.startswith("error:")]
    assert "runtime 'no-such-runtime'" in line and "make gvisor" in line, finished.stderr
    assert "Traceback" not in finished.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").glob("*/run.json"))
