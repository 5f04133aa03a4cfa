"""A real Prometheus and Pushgateway (built from Debian's packages, started by pytest-docker)
scraping a real exporter (``python -m controller serve``) while a known mix of runs is made.

Order, which the exactness of the checks depends on:

1. two runs are written to the history before the exporter starts (Prometheus never sees
   them arrive: only the all-time panels count them);
2. the exporter starts, then Prometheus (1 s scrape interval) and the Pushgateway;
3. once Prometheus holds three scrapes of the exporter, the rest of the mix is written and
   one real run goes through the CLI (which pushes to the Pushgateway);
4. once Prometheus has scraped the final state, the window [T0, T] is fixed: T0 the first
   and T the last scrape of the exporter. Queries are evaluated at T with
   ``$__range = T - T0``: on those sample-aligned bounds ``increase()`` does not extrapolate,
   so counts are exact integers and the success rates exact fractions.

Everything listens on 127.0.0.1 (host networking); nothing leaves the machine.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from controller.platform.observability.history import (
    HistoryStore,
    NodeRecord,
    RunRecord,
    SandboxRecord,
)
from controller.platform.settings import PROJECT_ROOT
from tests.conftest import ICICI
from tests.integration.observability import mix
from tests.integration.observability.prom import PrometheusAPI

HERE = Path(__file__).parent
SCRAPE_SECONDS = 1
#: A fake key in the CLI run's environment: it must never show up in a log line.
FAKE_SECRET = "sk-test-9f8e7d6c5b4a39281706"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(check: Callable[[], object], what: str, timeout: float = 60.0, pause: float = 0.2) -> object:
    """Poll ``check`` until it returns something truthy; fail with ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(pause)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}")


@dataclass
class Ports:
    exporter: int = field(default_factory=free_port)
    prometheus: int = field(default_factory=free_port)
    pushgateway: int = field(default_factory=free_port)


@pytest.fixture(scope="session")
def obs_ports() -> Ports:
    return Ports()


@pytest.fixture(scope="session")
def prometheus_config(obs_ports: Ports, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deploy/prometheus.yml with 1 s intervals and the jobs pointed at loopback ports."""
    config = yaml.safe_load((PROJECT_ROOT / "deploy" / "prometheus.yml").read_text())
    config["global"] = {"scrape_interval": f"{SCRAPE_SECONDS}s", "evaluation_interval": f"{SCRAPE_SECONDS}s"}
    where = {"sbx": obs_ports.exporter, "pushgateway": obs_ports.pushgateway, "prometheus": obs_ports.prometheus}
    for job in config["scrape_configs"]:
        job["static_configs"] = [{"targets": [f"127.0.0.1:{where[job['job_name']]}"]}]
    path = tmp_path_factory.mktemp("prometheus") / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o644)
    return path


@pytest.fixture(scope="session")
def docker_compose_command(docker_client) -> str:  # noqa: ANN001 - skips/fails without an engine
    """`docker compose` (v2) where it works, else Debian's `docker-compose` (v1)."""
    for command in ("docker compose", "docker-compose"):
        if subprocess.run(f"{command} version", shell=True, capture_output=True, check=False).returncode == 0:
            return command
    pytest.fail("neither `docker compose` nor `docker-compose` is installed")


@pytest.fixture(scope="session")
def docker_compose_file(obs_ports: Ports, prometheus_config: Path) -> Iterator[str]:
    """The test compose file; its ${SBX_TEST_*} variables are set for compose here."""
    env = {"SBX_TEST_PROMETHEUS_PORT": str(obs_ports.prometheus),
           "SBX_TEST_PUSHGATEWAY_PORT": str(obs_ports.pushgateway),
           "SBX_TEST_PROMETHEUS_CONFIG": str(prometheus_config)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        yield str(HERE / "docker-compose.yml")


@pytest.fixture(scope="session")
def docker_compose_project_name() -> str:
    return f"sandloopobs{os.getpid()}"


@pytest.fixture(scope="session")
def docker_setup() -> list[str]:
    """Build (from Debian's packages; cached after the first time) and start, detached.

    ``--wait`` is compose v2 only; readiness is polled over HTTP instead.
    """
    return ["up --build -d"]


@pytest.fixture(scope="session")
def obs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder: data/ with the known targets (icici is real), runs/ for the history."""
    root = tmp_path_factory.mktemp("observed")
    for target in mix.TARGETS:
        (root / "data" / target).mkdir(parents=True)
    shutil.copytree(ICICI, root / "data" / "icici", dirs_exist_ok=True)
    return root


@pytest.fixture(scope="session")
def history(obs_root: Path) -> HistoryStore:
    return HistoryStore(obs_root / "runs" / "history.sqlite")


@pytest.fixture(scope="session")
def before_scraping(history: HistoryStore) -> list[RunRecord]:
    """Runs recorded an hour ago, before the exporter or Prometheus ran."""
    records = [plan.record(time.time() - 3600 + i) for i, plan in enumerate(mix.BEFORE_SCRAPING)]
    for record in records:
        history.record(record)
    return records


def cli_env(obs_root: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "SBX_DATA_DIR": str(obs_root / "data"),
        "SBX_RUNS_DIR": str(obs_root / "runs"),
        "SBX_PARSERS_DIR": str(obs_root / "custom_parsers"),
        "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
        "SBX_LOG_FORMAT": "json",
        **extra,
    }


@pytest.fixture(scope="session")
def exporter(obs_root: Path, obs_ports: Ports, before_scraping: list[RunRecord]) -> Iterator[str]:
    """`python -m controller serve` on 127.0.0.1, stopped with SIGTERM at the end."""
    log = (obs_root / "exporter.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "serve", "--host", "127.0.0.1", "--port", str(obs_ports.exporter)],
        cwd=obs_root, env=cli_env(obs_root), stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{obs_ports.exporter}"

    def healthy() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"the exporter exited: {(obs_root / 'exporter.log').read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    wait_for(healthy, "the exporter's /healthz")
    yield url
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


@pytest.fixture(scope="session")
def prometheus(docker_services, obs_ports: Ports, exporter: str) -> PrometheusAPI:  # noqa: ANN001
    """The Debian-built Prometheus, ready and scraping the exporter."""
    api = PrometheusAPI(f"http://127.0.0.1:{obs_ports.prometheus}")
    wait_for(api.ready, "Prometheus to be ready", timeout=90)
    return api


@dataclass(frozen=True)
class Scenario:
    """What was recorded, what the CLI run did, and the evaluation window."""

    api: PrometheusAPI
    before: list[RunRecord]
    window: list[RunRecord]
    cli: subprocess.CompletedProcess[str]
    obs_root: Path
    pushgateway_url: str
    t0: float
    t: float

    @property
    def all_runs(self) -> list[RunRecord]:
        return self.before + self.window

    @property
    def range_ms(self) -> int:
        return round((self.t - self.t0) * 1000)


def exporter_samples(api: PrometheusAPI) -> list[tuple[float, float]]:
    return api.raw_samples('sbx_build_info{job="sbx"}')


@pytest.fixture(scope="session")
def scenario(prometheus: PrometheusAPI, history: HistoryStore, before_scraping: list[RunRecord],
             obs_root: Path, obs_ports: Ports, parser_image: str) -> Scenario:
    """Make the known mix while Prometheus scrapes, then fix the window (see the module docstring)."""
    wait_for(lambda: len(_safe_samples(prometheus)) >= 3, "three scrapes of the exporter")
    window = []
    for plan in mix.WHILE_SCRAPING:
        record = plan.record(time.time())
        history.record(record)
        window.append(record)
    pushgateway = f"http://127.0.0.1:{obs_ports.pushgateway}"
    cli = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--target", "icici"], cwd=obs_root,
        env=cli_env(obs_root, SBX_OBSERVABILITY__PUSHGATEWAY_URL=pushgateway, OPENAI_API_KEY=FAKE_SECRET,
                    SBX_LLM__API_KEY=FAKE_SECRET),
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr
    (cli_run,) = [r for r in _records(history) if r.run_id not in {x.run_id for x in before_scraping + window}]
    window.append(cli_run)
    total = len(before_scraping) + len(window)
    wait_for(lambda: _latest(prometheus, "sum(sbx_agent_runs_total)") == total, "the final run count")
    wait_for(lambda: _latest(prometheus, "count(sbx_agent_last_run_success)") == 1, "the pushed result")
    settled = time.time()
    wait_for(lambda: _safe_samples(prometheus)[-1][0] > settled + 0.001, "one more scrape")
    samples = exporter_samples(prometheus)
    return Scenario(prometheus, before_scraping, window, cli, obs_root, pushgateway,
                    t0=samples[0][0], t=samples[-1][0])


def _safe_samples(api: PrometheusAPI) -> list[tuple[float, float]]:
    data = api.get("/api/v1/query", [("query", 'sbx_build_info{job="sbx"}[15m]')])
    return [(float(t), float(v)) for t, v in data["result"][0]["values"]] if data["result"] else []


def _latest(api: PrometheusAPI, expr: str) -> float | None:
    result = api.instant(expr)
    return float(result[0]["value"][1]) if result else None


def _records(history: HistoryStore) -> list[RunRecord]:
    """The history's runs as RunRecords, read with plain SQL (the CLI run's input to the checks)."""
    conn = sqlite3.connect(history.path)
    conn.row_factory = sqlite3.Row
    try:
        runs = []
        for row in conn.execute("SELECT * FROM runs ORDER BY finished_at"):
            failures = tuple(r[0] for r in conn.execute(
                "SELECT reason FROM attempt_failures WHERE run_id = ? ORDER BY attempt", (row["run_id"],)))
            sandbox = tuple(
                SandboxRecord(s["image"], s["image_ref"], s["outcome"], s["duration_seconds"], s["exit_code"],
                              s["attempt"])
                for s in conn.execute("SELECT * FROM sandbox_executions WHERE run_id = ?", (row["run_id"],)))
            nodes = tuple(
                NodeRecord(n["node"], n["attempt"], n["outcome"], n["duration_seconds"])
                for n in conn.execute("SELECT * FROM node_runs WHERE run_id = ?", (row["run_id"],)))
            runs.append(RunRecord(
                run_id=row["run_id"], agent=row["agent"], target=row["target"], status=row["status"],
                attempts=row["attempts"], max_attempts=row["max_attempts"], started_at=row["started_at"],
                finished_at=row["finished_at"], duration_seconds=row["duration_seconds"],
                sandbox_seconds=row["sandbox_seconds"], coder=row["coder"], failures=failures,
                nodes=nodes, sandbox=sandbox))
        return runs
    finally:
        conn.close()
