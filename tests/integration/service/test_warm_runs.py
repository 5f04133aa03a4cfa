"""Warm runs for real (issue 32): an ICICI run forked from the warm parent on the real engine, its
pid lineage read from /proc while it runs and no import of the controller or the agents inside it;
and the service running ICICI with warm workers and with them off."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import httpx
import pytest

from agents.ports.artefacts import SUMMARY_FILE
from controller.platform.settings import PROJECT_ROOT
from controller.runner.dispatch.launch import CONTROLLER, Launcher
from controller.runner.dispatch.warm_child import LATE_PREFIX
from tests.conftest import ICICI
from tests.integration.service.harness import Service, free_port
from tests.integration.service.test_service import follow

pytestmark = pytest.mark.usefixtures("no_leftovers")


def icici_env(root: Path) -> dict[str, str]:
    data = root / "data"
    shutil.copytree(ICICI, data / "icici")
    return {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(root / "runs"),
            "SBX_PARSERS_DIR": str(root / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
            "SBX_LOG_FORMAT": "json", "SBX_SANDBOX__TIMEOUT_SECONDS": "120"}


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def test_an_icici_run_is_a_fork_of_the_warm_parent_and_imports_nothing(tmp_path: Path, parser_image: str):
    """While it runs, the run's parent is the fork server, whose parent is this process; it passes and
    imported none of the controller, the agents, LangGraph or pandas after the fork."""
    launcher = Launcher(warm=True)
    assert launcher.warm is not None
    launcher.warm.start()
    server = launcher.warm.server_pid()
    with tempfile.TemporaryFile("w+b") as errors:
        proc = launcher.launch([*CONTROLLER, "run", "--target", "icici", "--run-id", "warm-1", "--watch-stdin"],
                               icici_env(tmp_path), errors)
        lineage = (parent_of(proc.pid), parent_of(server) if server else None)
        assert proc.stdout is not None and proc.stdin is not None
        out = proc.stdout.read()
        code = proc.wait()
        proc.stdin.close()
        errors.seek(0)
        err = errors.read().decode()
    assert lineage == (server, os.getpid())
    assert code == 0, out + err
    assert LATE_PREFIX not in err, err
    assert "PASSED: the parser's DataFrame equals result.csv" in out
    summary = json.loads((tmp_path / "runs" / "warm-1" / SUMMARY_FILE).read_text())
    assert summary["status"] == "passed"


@pytest.mark.parametrize("warm", ["true", "false"])
def test_the_service_runs_icici_with_warm_workers_on_and_off(tmp_path: Path, parser_image: str, warm: str):
    """The same run passes either way; warm, the service starts the warm parent and misses no import."""
    env = {**icici_env(tmp_path), "SBX_PARALLEL_RUNS": "1", "SBX_SERVICE__WARM_WORKERS": warm}
    service = Service(tmp_path, env, free_port())
    service.start()
    try:
        accepted = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, timeout=60)
        assert accepted.status_code == 202, accepted.text
        events = follow(f"{service.url}{accepted.json()['links']['events']}", {})
        end = events[-1][1]
        assert (end["status"], end["exit_code"]) == ("passed", 0), end
    finally:
        assert service.stop(signal.SIGTERM) == 0
    log = (tmp_path / "service.log").read_text()
    assert ("service.warm_parent" in log) == (warm == "true")
    assert "service.warm_imports_missed" not in log
