"""The warm pool on the real engine: faster starts without weaker isolation.

Pins: a warm container serves exactly one execution and is then destroyed; nothing of an
earlier execution is visible to a later one; the cold guarantees hold in warm containers
(non-root, no capabilities, read-only root, no network); the timeout counts from the
handover, not from the container's start; closing the pool leaves nothing behind.
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from agents.ports.sandbox import GO_FILE, SandboxLimits, SandboxSpec
from controller.platform.sandbox.docker import DockerSandbox
from tests.owner import TEST_OWNER

pytestmark = pytest.mark.usefixtures("no_leftovers")

#: Says it is ready and waits for the go line on stdin like the parser entrypoint does, then
#: runs /work/in/prog.py.
WAITER = textwrap.dedent(f"""
    import os, sys
    os.write(1, b"\\x1esandloop-ready\\x1e")
    sys.stdin.readline()
    assert os.path.exists({GO_FILE!r})
    exec(compile(open("/work/in/prog.py").read(), "prog.py", "exec"))
""")


def spec(image: str, program: str, **limits: object) -> SandboxSpec:
    return SandboxSpec(
        image=image,
        command=("python3", "-I", "/work/in/prog.py"),
        warm_command=("python3", "-I", "-c", WAITER),
        inputs={"prog.py": textwrap.dedent(program).encode()},
        limits=SandboxLimits(**{"timeout_seconds": 20, **limits}),  # type: ignore[arg-type]
        labels={"agent": "pytest"},
    )


def wait_for_idle(sandbox: DockerSandbox, count: int = 1, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while sandbox.pool.idle_count() < count:
        assert time.monotonic() < deadline, "the pool never warmed up"
        time.sleep(0.1)


class TestWarmPool:
    def test_a_warm_container_serves_one_execution_and_is_destroyed(self, pooled, parser_image, docker_client):
        """The first run after warming is a hit; its container is gone afterwards."""
        probe = spec(parser_image, "print('hello')")
        pooled.prewarm(probe)
        wait_for_idle(pooled)
        result = pooled.run(probe)
        assert result.warm and result.exit_code == 0 and result.stdout.text == "hello\n"
        assert pooled.pool.stats.hits == 1
        pooled.drain_removals()  # removal runs off the critical path, but always runs
        ids = [c.id[:12] for c in docker_client.containers.list(all=True, ignore_removed=True)]
        assert result.container_id not in ids

    def test_nothing_of_an_earlier_execution_is_visible(self, pooled, parser_image):
        """Files written by one execution (scratch, outputs) are absent in the next warm one."""
        writer = """
            open("/tmp/secret", "w").write("x"); open("/work/out/secret", "w").write("x")
            import os; print(os.getpid())
        """
        reader = """
            import json, os
            print(json.dumps([os.path.exists("/tmp/secret"), os.path.exists("/work/out/secret")]))
        """
        pooled.prewarm(spec(parser_image, writer))
        wait_for_idle(pooled)
        first = pooled.run(spec(parser_image, writer))
        wait_for_idle(pooled)
        second = pooled.run(spec(parser_image, reader))
        assert first.warm and second.warm
        assert first.container_id != second.container_id
        assert json.loads(second.stdout.text) == [False, False]

    def test_isolation_holds_in_warm_containers(self, pooled, parser_image):
        """Non-root, no capabilities, read-only root and no network, as in cold runs."""
        probe = """
            import json, os, socket
            status = dict(line.split(":", 1) for line in open("/proc/self/status"))
            try:
                open("/evil", "w"); root_writable = True
            except OSError:
                root_writable = False
            print(json.dumps({"uid": os.getuid(), "cap": status["CapEff"].strip(),
                              "root_writable": root_writable, "net": sorted(os.listdir("/sys/class/net"))}))
        """
        pooled.prewarm(spec(parser_image, probe))
        wait_for_idle(pooled)
        result = pooled.run(spec(parser_image, probe))
        report = json.loads(result.stdout.text)
        assert result.warm
        assert report["uid"] != 0 and int(report["cap"], 16) == 0
        assert report["root_writable"] is False and report["net"] == ["lo"]

    def test_timeout_counts_from_the_handover(self, pooled, parser_image):
        """A container idle for longer than the timeout still gets its full time for the work."""
        work = spec(parser_image, "import time; time.sleep(1.5); print('done')", timeout_seconds=3)
        pooled.prewarm(work)
        wait_for_idle(pooled)
        time.sleep(3.5)
        result = pooled.run(work)
        assert result.warm and not result.timed_out and result.stdout.text == "done\n"

    def test_endless_work_in_a_warm_container_is_killed(self, pooled, parser_image):
        """The timeout still kills a warm execution that never ends."""
        work = spec(parser_image, "while True: pass", timeout_seconds=2)
        pooled.prewarm(work)
        wait_for_idle(pooled)
        result = pooled.run(work)
        assert result.warm and result.timed_out

    def test_close_removes_idle_containers(self, docker_client, base_settings, parser_image):
        """Closing the backend removes every waiting container (checked by no_leftovers too)."""
        sandbox = DockerSandbox(docker_client, user=base_settings.sandbox_user, owner=TEST_OWNER,
                                pool_size=2, pool_max_idle_seconds=60, runtime=base_settings.sandbox_runtime)
        sandbox.prewarm(spec(parser_image, "pass"))
        wait_for_idle(sandbox, 2)
        sandbox.close()
        mine = {"label": ["org.sandloop.pool=warm", f"org.sandloop.owner={TEST_OWNER}"]}
        assert not docker_client.containers.list(all=True, ignore_removed=True, filters=mine)
