"""The real CLI run of the scenario (icici, through the real sandbox), as the logs, the
history, the exporter and the Pushgateway saw it; and promtool's verdict on the config and
on the exporter's exposition."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import docker

from controller.platform.settings import PROJECT_ROOT
from tests.integration.observability.conftest import FAKE_SECRET, Scenario

PROMETHEUS_IMAGE = "sandloop/prometheus-debian:2.42"


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_dir(scenario: Scenario) -> Path:
    (path,) = (scenario.obs_root / "runs").glob("*icici*")
    return path


class TestRunLogs:
    def test_stderr_is_json_lines_with_run_context(self, scenario):
        """Every stderr line of the run parses as JSON; run events carry run id, agent and target."""
        events = json_lines(scenario.cli.stderr)
        run_id = run_dir(scenario).name
        bound = [e for e in events if e["event"].startswith(("run.", "node.", "sandbox."))]
        assert bound and all(e["run_id"] == run_id for e in bound)
        assert all(e["agent"] == "bank_parser" and e["target"] == "icici" for e in bound)
        assert {"run.started", "run.finished", "node.started", "node.finished", "sandbox.executed"} <= {
            e["event"] for e in events}

    def test_node_and_sandbox_events_carry_their_fields(self, scenario):
        """Node ends carry node, attempt, outcome, duration; the sandbox event its image, limits, exit code, sizes."""
        events = json_lines(scenario.cli.stderr)
        ends = [e for e in events if e["event"] == "node.finished"]
        assert [e["node"] for e in ends] == ["analyze", "generate", "save", "execute", "compare", "finalize"]
        assert all(isinstance(e["duration_seconds"], float) and e["outcome"] for e in ends)
        probe, sandbox = [e for e in events if e["event"] == "sandbox.executed"]
        assert probe["node"] == "analyze" and probe["outcome"] == "ok"  # the statement is read in a sandbox too
        assert sandbox["node"] == "execute" and sandbox["attempt"] == 1
        assert sandbox["image"].startswith("sandloop/python-parser:") and len(sandbox["container_id"]) == 12
        assert sandbox["exit_code"] == 0 and sandbox["outcome"] == "ok"
        assert sandbox["timed_out"] is False and sandbox["oom_killed"] is False
        assert sandbox["limits"]["memory_mb"] == 512 and sandbox["stdout_bytes"] >= 0
        assert sandbox["collected_bytes"] > 0 and sandbox["duration_seconds"] >= sandbox["run_seconds"] > 0

    def test_events_file_has_the_same_events(self, scenario):
        """runs/<run_id>/events.jsonl holds the run's events as JSON lines, the same as stderr."""
        in_file = json_lines((run_dir(scenario) / "events.jsonl").read_text())
        on_stderr = [e for e in json_lines(scenario.cli.stderr) if "run_id" in e]
        assert [e["event"] for e in in_file] == [e["event"] for e in on_stderr]
        assert in_file[0]["event"] == "run.started" and in_file[-1]["event"] in ("history.recorded", "push.done")

    def test_no_secret_in_any_log_line(self, scenario):
        """The API key set in the run's environment appears in no stderr line and no events.jsonl line."""
        assert FAKE_SECRET not in scenario.cli.stderr + scenario.cli.stdout
        assert FAKE_SECRET not in (run_dir(scenario) / "events.jsonl").read_text()

    def test_the_push_was_logged_and_landed(self, scenario):
        """push.done is logged, and the Pushgateway holds the group job=sbx_agent_run, agent, target."""
        assert "push.done" in {e["event"] for e in json_lines(scenario.cli.stderr)}
        with urllib.request.urlopen(f"{scenario.pushgateway_url}/metrics", timeout=5) as response:
            text = response.read().decode()
        line = next(l for l in text.splitlines() if l.startswith("sbx_agent_last_run_success{"))
        assert 'job="sbx_agent_run"' in line and 'agent="bank_parser"' in line and 'target="icici"' in line
        assert line.endswith(" 1")


def run_prometheus_image(docker_client, command: list[str], entrypoint: str, volumes: dict) -> bytes:  # noqa: ANN001
    """Run a one-off command in the Prometheus image; remove the container *and* its anonymous
    /prometheus volume (``containers.run(remove=True)`` keeps the volume: one leaked per run).

    Raises:
        docker.errors.ContainerError: the command exited non-zero.
    """
    container = docker_client.containers.create(PROMETHEUS_IMAGE, command, entrypoint=entrypoint, volumes=volumes)
    try:
        container.start()
        status = container.wait(timeout=120).get("StatusCode", -1)
        output = container.logs(stdout=True, stderr=True)
        if status != 0:
            raise docker.errors.ContainerError(container, status, command, PROMETHEUS_IMAGE, output)
        return output
    finally:
        container.remove(force=True, v=True)


class TestPromtool:
    def test_deploy_config_passes_promtool(self, docker_client, scenario):
        """`promtool check config` accepts deploy/prometheus.yml."""
        output = run_prometheus_image(docker_client, ["check", "config", "/config/prometheus.yml"], "promtool",
                                      {str(PROJECT_ROOT / "deploy"): {"bind": "/config", "mode": "ro"}})
        assert b"SUCCESS" in output

    def test_exposition_passes_promtool_lint(self, docker_client, scenario, tmp_path, exporter):
        """`promtool check metrics` finds no naming or metadata problem in the exporter's /metrics."""
        with urllib.request.urlopen(f"{exporter}/metrics", timeout=5) as response:
            (tmp_path / "metrics.txt").write_bytes(response.read())
        (tmp_path / "metrics.txt").chmod(0o644)
        tmp_path.chmod(0o755)
        try:
            output = run_prometheus_image(docker_client, ["-c", "promtool check metrics < /data/metrics.txt 2>&1"],
                                          "sh", {str(tmp_path): {"bind": "/data", "mode": "ro"}})
        except docker.errors.ContainerError as exc:
            raise AssertionError(f"promtool check metrics failed: {exc.stderr or exc}") from exc
        assert output.strip() == b"", output.decode()
