"""The blueprint agent with the real engine: hostile tools contained, and the examples end to end.

A blueprint's tools and validators are code, and code runs only in a sandbox. Here each hostile
tool runs through the same path a run uses (``research`` → ``run_call`` → the python-parser
image, the harness sent as text) and must come back as a failed finding with one line saying
why: an infinite loop is killed at the timeout, a flood of output is capped (stdout by the
sandbox, the result by the harness and by the host's bounded decoder), a network attempt fails
(no network in a sandbox). Then `python -m controller run` on each example passes, `check
--report` judges a stored report, a run whose tool hangs still ends with a report, and a run
killed in QA resumes without calling its tools again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agents.blueprint.model import ToolSpec
from agents.blueprint.research import research
from agents.blueprint.sandboxed import Call, call_spec, run_call
from agents.ports.sandbox import SandboxLimits
from controller.platform.observability.history import HistoryStore
from controller.platform.sandbox.docker import DockerSandbox
from controller.platform.settings import PROJECT_ROOT
from tests.integration.blueprints import NO_GO, NO_GO_REASON, no_go_target

pytestmark = pytest.mark.usefixtures("no_leftovers")
#: Short where a tool hangs on purpose; the others finish in well under a second.
HANG_LIMITS = SandboxLimits(timeout_seconds=3)
LIMITS = SandboxLimits(timeout_seconds=60)
EXAMPLES = ("acme-research", "candidate-brief", "market-scan", "supplier-review")


@pytest.fixture
def sandbox(docker_client, base_settings):  # noqa: ANN001, ANN201
    return DockerSandbox(docker_client, user=base_settings.sandbox_user, owner="pytest:blueprint")


def finding(sandbox, image: str, code: str, limits: SandboxLimits = LIMITS):  # noqa: ANN001, ANN201
    (found,) = research([ToolSpec(name="hostile", files=["data.json"], code=code)], {"data.json": b"{}"}, sandbox,
                        image, limits, {"run_id": "pytest-blueprint", "agent": "blueprint", "target": "hostile"})
    return found


class TestHostileTools:
    def test_an_infinite_loop_is_killed_at_the_timeout(self, sandbox, parser_image):
        found = finding(sandbox, parser_image, "def run(data):\n    while True:\n        pass\n", HANG_LIMITS)
        assert not found["ok"] and found["error"] == "killed at the 3 s timeout"

    def test_a_huge_value_is_refused_by_the_harness(self, sandbox, parser_image):
        found = finding(sandbox, parser_image, "def run(data):\n    return 'x' * (50 << 20)\n")
        assert not found["ok"] and "bytes of JSON, more than 262144" in found["error"]

    def test_a_huge_result_written_around_the_harness_is_refused_by_the_host(self, sandbox, parser_image):
        """The tool writes 20 MiB of result.json itself and exits: the bounded decoder refuses it."""
        code = ("import os\n\ndef run(data):\n    with open('/work/out/result.json', 'w') as f:\n"
                "        f.write('[' + '0,' * (10 << 20) + '0]')\n    os._exit(0)\n")
        found = finding(sandbox, parser_image, code)
        assert not found["ok"] and re.search(r"its result was refused: \d+ bytes, more than the 262144", found["error"])

    def test_a_flood_on_stdout_is_capped(self, sandbox, parser_image):
        """64 MiB printed: the sandbox keeps its 1 MiB, counts the rest, and the value still comes back."""
        code = ("import sys\n\ndef run(data):\n    for _ in range(64):\n        sys.stdout.write('x' * (1 << 20))\n"
                "    return 7\n")
        call = Call("tool", "flood", code, {})
        result = run_call(sandbox, call_spec(parser_image, call, LIMITS, {"run_id": "pytest-blueprint"}))
        assert result.ok and result.value == 7
        assert result.record["stdout_truncated"] and result.record["stdout_bytes"] >= 64 << 20

    def test_a_network_attempt_fails(self, sandbox, parser_image):
        code = ("import socket\n\ndef run(data):\n    socket.create_connection(('1.1.1.1', 80), timeout=5)\n"
                "    return 'reached the network'\n")
        found = finding(sandbox, parser_image, code)
        assert not found["ok"] and found["error"].startswith("OSError")

    def test_only_its_inputs_are_there(self, sandbox, parser_image):
        """The tool sees only its inputs (and the holder's go file): no data file it did not name."""
        code = "import os\n\ndef run(data):\n    return sorted(os.listdir('/work/in'))\n"
        found = finding(sandbox, parser_image, code)
        assert found["ok"] and found["value"] == [".go", "call.json", "code.py", "data.json", "harness.py"]


def cli_env(tmp_path: Path, data_dir: Path) -> dict[str, str]:
    return {**os.environ, "SBX_DATA_DIR": str(data_dir), "SBX_RUNS_DIR": str(tmp_path / "runs"),
            "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache")}


def cli(tmp_path: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller", *args], cwd=tmp_path, env=cli_env(tmp_path, data_dir),
                          capture_output=True, text=True, timeout=600, check=False)


class TestExamplesEndToEnd:
    @pytest.mark.parametrize("name", EXAMPLES)
    def test_run_passes(self, tmp_path, parser_image, name):
        """`make run TARGET=<example>`: exit 0 and the agent's PASSED line."""
        proc = cli(tmp_path, PROJECT_ROOT / "data", "run", "--target", name)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
        assert f"PASSED: the {name} report passed QA" in proc.stdout

    def test_a_required_tool_reading_an_empty_file_is_a_no_go(self, tmp_path):
        """Issue 41: the manager's no-go reached the run history, which did not know the status (exit 3,
        'a bug in sandloop'). Now: exit 1, one NO-GO line, summary.json's status no-go, recorded."""
        no_go_target(tmp_path / "data")
        proc = cli(tmp_path, tmp_path / "data", "run", "--target", NO_GO)
        assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
        verdicts = [line for line in proc.stdout.splitlines() if line.startswith("NO-GO:")]
        assert verdicts == [f"NO-GO: the {NO_GO} workflow stopped before writing: {NO_GO_REASON}"], proc.stdout
        assert "error" not in proc.stderr.lower(), proc.stderr[-2000:]
        (run_dir,) = (tmp_path / "runs").glob(f"*-{NO_GO}-*")
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "no-go"
        assert not list(run_dir.rglob("report*.md"))
        history = HistoryStore(tmp_path / "runs" / "history.sqlite").read_runs()
        assert [(r["target"], r["status"]) for r in history] == [(NO_GO, "no-go")]

    def test_the_supplier_review_recommends_from_its_findings(self, tmp_path, parser_image):
        """Issue 41's example: its severity tool runs in a sandbox, the decision's rules choose from the
        findings, the retry states the on-time finding (never that the findings say nothing about it)."""
        proc = cli(tmp_path, PROJECT_ROOT / "data", "run", "--target", "supplier-review")
        assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
        (run_dir,) = (tmp_path / "runs").glob("*-supplier-review-*")
        report = (run_dir / "report.md").read_text()
        findings = {f["tool"]: f for f in json.loads((run_dir / "findings.json").read_text())}
        assert findings["severity"]["sandboxed"] and findings["severity"]["value"] == {"high": 2, "medium": 1, "low": 1}
        assert "Recommendation: **renew with conditions**." in report
        assert "Decision rule 3 holds on the findings: on time rate pct (scorecard) is 91.9, below 95" in report
        assert "- Not chosen, do not renew: high (severity) is 2, not at least 3." in report
        assert "On on-time: on time rate pct 91.9 (scorecard)." in report and "say nothing about" not in report

    def test_check_judges_stored_reports_with_the_validators(self, tmp_path, parser_image):
        """market-scan's validator in the sandbox: the brief report fails it, the full one passes."""
        proc = cli(tmp_path, PROJECT_ROOT / "data", "run", "--target", "market-scan")
        assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
        run_dir = next((tmp_path / "runs").glob("*-market-scan-*"))
        reports = [str(run_dir / "attempts" / n / "report.md") for n in ("1", "2")]
        proc = cli(tmp_path, PROJECT_ROOT / "data", "check", "--target", "market-scan", "--report", *reports)
        assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
        assert "competitors not named: Nordlys" in proc.stdout and proc.stdout.splitlines()[-1] == "1 passed, 1 failed"

    def test_a_run_whose_tool_hangs_still_ends_with_a_report(self, tmp_path, parser_image):
        """candidate-brief with its match tool replaced by an infinite loop: killed, said, the run ends."""
        data = tmp_path / "data"
        shutil.copytree(PROJECT_ROOT / "data" / "candidate-brief", data / "candidate-brief")
        path = data / "candidate-brief" / "blueprint.json"
        document = json.loads(path.read_text())
        document["tools"][1]["code"] = "def run(data):\n    while True:\n        pass\n"
        path.write_text(json.dumps(document))
        (data / "candidate-brief" / "target.toml").write_text('agent = "blueprint"\n\n[limits]\ntimeout_seconds = 3\n')
        proc = cli(tmp_path, data, "run", "--target", "candidate-brief")
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        report = next((tmp_path / "runs").glob("*/attempts/1/report.md")).read_text()
        assert "_The tool match failed: killed at the 3 s timeout._" in report


def slow_validator_target(tmp_path: Path) -> Path:
    """market-scan with a sandboxed tool and a validator that takes 4 s: a window to kill the run in QA."""
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / "market-scan", data / "market-scan")
    path = data / "market-scan" / "blueprint.json"
    document = json.loads(path.read_text())
    document["tools"].append({"name": "count", "files": ["competitors.csv"],
                              "code": "def run(data):\n    return {'competitors': len(data['competitors.csv'])}\n"})
    document["sections"][0]["tools"].append("count")
    document["qa"]["validators"] = [{"name": "slow", "code": "import time\n\ndef validate(report, data):\n"
                                     "    time.sleep(4)\n    return {'passed': True, 'message': 'ok'}\n"}]
    path.write_text(json.dumps(document))
    return data


def node_runs(run_dir: Path, node: str) -> int:
    """How many times ``node`` finished, over every process of the run."""
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    return sum(e.get("event") == "node.finished" and e.get("node") == node for e in events)


class TestKilledRunResumed:
    def test_a_run_killed_in_qa_resumes_without_researching_again(self, tmp_path, parser_image):
        """SIGKILL while attempt 1's validator runs; `run --resume` skips the finished nodes (the
        sandboxed tool is not called again), judges the report and passes."""
        data = slow_validator_target(tmp_path)
        child = subprocess.Popen([sys.executable, "-m", "controller", "run", "--target", "market-scan"], cwd=tmp_path,
                                 env=cli_env(tmp_path, data), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True)
        assert child.stdout is not None
        seen = []
        for line in child.stdout:
            seen.append(line)
            if "[attempt 1] writer" in line:
                child.send_signal(signal.SIGKILL)
                break
        assert child.wait(timeout=60) == -signal.SIGKILL, "".join(seen)
        run_id = re.search(r"^==> run ([A-Za-z0-9_-]+): ", "".join(seen), re.M)
        assert run_id, "".join(seen)
        run_dir = tmp_path / "runs" / run_id[1]
        assert not (run_dir / "summary.json").exists()

        resumed = cli(tmp_path, data, "run", "--resume", run_id[1])

        assert resumed.returncode == 0, resumed.stdout + resumed.stderr[-2000:]
        assert "skipped 4 completed node(s) (manager, researcher, manager, writer [1]); next: qa" in resumed.stdout
        assert node_runs(run_dir, "researcher") == 1 and node_runs(run_dir, "writer") == 1
        assert json.loads((run_dir / "summary.json").read_text())["status"] == "passed"
