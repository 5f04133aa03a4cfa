"""Infrastructure faults on the real engine: retried in a fresh sandbox, never blamed on the program.

Pins (issue 31): a warm container removed under its execution (what once ended a service
run ``error`` with "No such container") is run again and served, with the reason kept; with
retries off it is one clear line, an environment fault; a live controller's containers
survive another controller's reaper whatever the wall clock says (the cause); what the
program does (a timeout here) is returned as it is, with no retry.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from agents.ports.sandbox import SandboxLimits, SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.sandbox.labels import OWNER, this_owner
from controller.platform.sandbox.retry import (
    InfraRetriesExhausted,
    InfraRetrySettings,
    RetryingSandbox,
)
from controller.platform.settings import PROJECT_ROOT
from tests.integration.sandbox.test_warm_pool import WAITER, wait_for_idle

pytestmark = pytest.mark.usefixtures("no_leftovers")
FAST = InfraRetrySettings(tries=3, backoff_seconds=0.2, max_backoff_seconds=0.5)


def sleeper(image: str, seconds: float, timeout: float = 30) -> SandboxSpec:
    program = f"import time; time.sleep({seconds}); print('done')"
    return SandboxSpec(image=image, command=("python3", "-I", "-c", program),
                       warm_command=("python3", "-I", "-c", WAITER.replace(
                           'exec(compile(open("/work/in/prog.py").read(), "prog.py", "exec"))', program)),
                       limits=SandboxLimits(timeout_seconds=timeout), labels={"agent": "pytest-infra"})


class Counting:
    """Counts the executions that reach the backend (test double around the real one)."""

    def __init__(self, inner: DockerSandbox) -> None:
        self.inner, self.runs = inner, 0

    def run(self, spec: SandboxSpec):  # noqa: ANN201
        self.runs += 1
        return self.inner.run(spec)


def remove_the_first_taken(sandbox: DockerSandbox, docker_client, after: float) -> list[str]:  # noqa: ANN001
    """Have the engine remove (as ``docker rm -f`` would) the first warm container an execution takes."""
    taken: list[str] = []
    acquire = sandbox.pool.acquire

    def take(spec: SandboxSpec):  # noqa: ANN202
        warm = acquire(spec)
        if warm is not None and not taken:
            taken.append(warm.container.id)
            threading.Timer(after, lambda: docker_client.api.remove_container(warm.container.id, force=True)).start()
        return warm

    sandbox.pool.acquire = take  # type: ignore[method-assign]
    return taken


class TestLostContainers:
    def test_a_warm_container_removed_under_its_execution_is_run_again(self, pooled, parser_image, docker_client):
        """Removed mid-run by the engine: the execution runs again in a fresh sandbox and is served."""
        spec = sleeper(parser_image, 2.0)
        pooled.prewarm(spec)
        wait_for_idle(pooled)
        taken = remove_the_first_taken(pooled, docker_client, after=0.8)
        counting = Counting(pooled)
        result = RetryingSandbox(counting, FAST).run(spec)
        assert taken and counting.runs == 2
        assert (result.exit_code, result.stdout.text) == (0, "done\n")
        assert result.infra_retries in (("container_gone",), ("container_killed",))
        assert result.container_id != taken[0][:12]

    def test_with_retries_off_the_loss_is_one_line_and_an_environment_fault(self, pooled, parser_image,
                                                                          docker_client):
        """tries=1: InfraRetriesExhausted (exit 3), one line naming the reason; never a result for the parser."""
        spec = sleeper(parser_image, 2.0)
        pooled.prewarm(spec)
        wait_for_idle(pooled)
        remove_the_first_taken(pooled, docker_client, after=0.8)
        with pytest.raises(InfraRetriesExhausted) as raised:
            RetryingSandbox(pooled, InfraRetrySettings(tries=1)).run(spec)
        line = raised.value.one_line()
        assert raised.value.exit_code == 3 and "\n" not in line and "1 time(s)" in line
        assert raised.value.reasons[0] in ("container_gone", "container_killed")

    def test_a_timeout_is_the_programs_and_not_retried(self, pooled, parser_image):
        """A program past its time limit: timed_out, one execution, no infrastructure retry."""
        counting = Counting(pooled)
        result = RetryingSandbox(counting, FAST).run(sleeper(parser_image, 30, timeout=1))
        assert result.timed_out and result.infra_retries == () and counting.runs == 1


#: Another controller starting with its wall clock 7 h ahead (a clock step): its reaper, given
#: a view of the engine that holds only the resources of ``argv[1]``'s owner, so that it can
#: touch nothing else on a shared engine (``DockerClient.containers`` is a new collection at
#: every access: the view wraps them, it does not patch them).
REAP_AFTER_A_CLOCK_STEP = """
import sys, time
from controller.platform.sandbox.engine import connect
from controller.platform.sandbox.labels import OWNER
from controller.platform.sandbox.reaper import reap_leftovers

class Mine:
    def __init__(self, collection, owner):
        self.collection, self.owner = collection, owner
    def list(self, **kw):
        return [m for m in self.collection.list(**kw) if (m.attrs.get("Labels") or {}).get(OWNER) == self.owner]

class View:
    def __init__(self, client, owner):
        self.containers, self.volumes = Mine(client.containers, owner), Mine(client.volumes, owner)

client, owner, real = connect(), sys.argv[1], time.time
time.time = lambda: real() + 7 * 3600
print(reap_leftovers(View(client, owner)))
"""


class TestReaperAndClock:
    def test_a_live_execution_survives_another_controllers_reaper_after_a_clock_step(
            self, docker_client, parser_image, base_settings):
        """A controller starting with its clock 7 h ahead (NTP, a resumed VM): its reaper leaves
        this process's running execution alone, which ends normally (before: removed under it)."""
        owner = this_owner()  # this very process, as a CLI run labels its containers
        sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=owner)
        done: dict[str, object] = {}

        def execute() -> None:
            try:
                done["result"] = sandbox.run(sleeper(parser_image, 3.0))
            except Exception as exc:  # noqa: BLE001 - what the reaper did to it is the assertion
                done["error"] = exc

        worker = threading.Thread(target=execute)
        try:
            worker.start()
            time.sleep(1.0)
            reaper = subprocess.run([sys.executable, "-c", REAP_AFTER_A_CLOCK_STEP, owner], cwd=PROJECT_ROOT,
                                    capture_output=True, text=True, timeout=120,
                                    env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
            assert (reaper.returncode, reaper.stdout.strip()) == (0, "0"), reaper.stderr[-2000:]
            worker.join(60)
        finally:
            sandbox.close()
        assert "error" not in done, done
        result = done["result"]
        assert (result.exit_code, result.stdout.text) == (0, "done\n")  # type: ignore[attr-defined]
        assert not docker_client.containers.list(all=True, ignore_removed=True, filters={"label": f"{OWNER}={owner}"})
        assert not docker_client.volumes.list(filters={"label": f"{OWNER}={owner}"})

