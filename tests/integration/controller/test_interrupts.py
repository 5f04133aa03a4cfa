"""Issue 42: SIGINT interrupts a CLI ``check`` and ``run`` while a sandbox executes.

Before, ``check`` ran its parsers in a thread pool and the signal reached only the main thread:
a parser sleeping 25 s, interrupted 4 s in, still ran to its verdict. Now the CLI's handler
throws the process's stop switch (controller.platform.stop): the container is killed, the
command ends within 2 s with exit 130, and a run stays resumable.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.doubles.llm_servers import OpenAIServer, Reply
from tests.integration.agents.test_llm_loop import GOOD, KEY, fenced

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")

SLEEPY_CHECK = textwrap.dedent('''\
    import time

    import pandas as pd


    def parse(pdf_path):
        time.sleep(25)
        return pd.DataFrame()
''')
SLEEPY_RUN = GOOD.replace("def parse(pdf_path):\n", "def parse(pdf_path):\n    import time\n    time.sleep(20)\n")


def env_for(tmp_path: Path, data_dir: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "SBX_DATA_DIR": str(data_dir), "SBX_RUNS_DIR": str(tmp_path / "runs"),
            "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
            "SBX_LOG_FORMAT": "json", **extra}


def interrupt_while_executing(args: list[str], cwd: Path, env: dict[str, str], docker_client,  # noqa: ANN001
                              ) -> tuple[int, float, str]:
    """Start the CLI in its own process group, SIGINT the group once its parser's container has
    run for 2 s; the exit status, the seconds from the signal to the exit, and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0)
    try:
        deadline = time.monotonic() + 300
        while not _executing(docker_client, proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the parser never started"
            time.sleep(0.2)
        time.sleep(2.0)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        return proc.returncode, time.monotonic() - sent, stderr
    finally:
        if proc.poll() is None:
            proc.kill()


def _executing(docker_client, pid: int) -> bool:  # noqa: ANN001
    """Whether a parser container of the process ``pid`` is running (not a warm one waiting)."""
    for container in docker_client.containers.list(sparse=True, filters={"label": "org.sandloop.managed=1"}):
        labels = container.attrs.get("Labels") or {}
        parser = labels.get("org.sandloop.agent") == "check" or labels.get("org.sandloop.attempt", "").isdigit()
        if labels.get("org.sandloop.owner", "").endswith(f":{pid}") and parser:
            return True
    return False


def test_check_interrupted_mid_execution_stops_within_2s(tmp_path, icici_copy, docker_client):
    parser = tmp_path / "sleepy_parser.py"
    parser.write_text(SLEEPY_CHECK)
    code, seconds, stderr = interrupt_while_executing(
        ["check", "--target", "icici", "--parser", str(parser)], tmp_path,
        env_for(tmp_path, icici_copy, SBX_POOL__ENABLED="false"), docker_client)
    assert code == 130, stderr
    assert seconds < 2.0
    assert "interrupted" in stderr and "Traceback" not in stderr


def test_run_interrupted_mid_execution_stops_within_2s_and_stays_resumable(tmp_path, icici_copy, docker_client):
    with OpenAIServer(models=("test-model",), require_key=KEY) as server:
        server.push(Reply(fenced(SLEEPY_RUN, "Here is a parser:")))
        env = env_for(tmp_path, icici_copy, SBX_LLM__BASE_URL=server.base_url, SBX_LLM__MODEL="test-model",
                      OPENAI_API_KEY=KEY, SBX_POOL__ENABLED="false")
        code, seconds, stderr = interrupt_while_executing(
            ["run", "--target", "icici", "--coder", "openai", "--max-attempts", "1"], tmp_path, env, docker_client)
    assert code == 130, stderr
    assert seconds < 2.0
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if (p / "run.json").exists()]
    assert not (run_dir / "summary.json").exists()  # no verdict: it was interrupted, not judged
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert any(e.get("event") == "run.interrupted" for e in events)
