"""A plan that names no image runs without any engine (the intake agent), and its session
refuses to execute anything rather than run it elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.ports.errors import SandboxError
from agents.ports.sandbox import SandboxSpec
from agents.registry import get_agent
from controller.platform.progress import Progress
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.runner.agent_runner import Runner
from controller.runner.no_sandbox import NoSandbox, NoSandboxServices


def test_an_intake_run_needs_no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No engine answers at DOCKER_HOST, yet the run passes: it never connects."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    settings = Settings(_env_file=None, data_dir=PROJECT_ROOT / "data", runs_dir=tmp_path / "runs")
    runner = Runner(settings, Progress())
    assert runner.run(get_agent("intake"), "intake-cross-node", None) == 0
    (run_dir,) = (tmp_path / "runs").glob("*-intake-cross-node-*")
    record = json.loads((run_dir / "run.json").read_text())
    assert record["image_name"] == "" and record["agent"] == "intake"


def test_the_sandbox_of_such_a_session_refuses_to_execute() -> None:
    services = NoSandboxServices(lambda line: None)
    with pytest.raises(SandboxError, match="named no sandbox image"):
        NoSandbox().run(SandboxSpec(image="x", command=("true",)))
    with pytest.raises(SandboxError):
        services.image("python-parser")
