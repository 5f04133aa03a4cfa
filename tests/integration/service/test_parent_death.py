"""Issue 42: a run's process never outlives its service's claim.

The service is killed with -9 while a run's parser sleeps 20 s in its sandbox, and started again
at once. Before, the old run process went on for 15 s, and when its container was reaped it
retried the execution in a new container, while the new service executed the same node in the
same run folder. Now the old process stops within 2 s of the kill (its stdin closes: the stop
switch kills its container and no retry starts), and a lingering one could not commit anyway
(the claim's fence). On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import docker
import httpx
import pytest

from controller.platform.sandbox.labels import MANAGED, OWNER
from controller.platform.settings import PROJECT_ROOT
from tests.conftest import ICICI
from tests.doubles.llm_servers import OpenAIServer, Reply
from tests.integration.agents.test_llm_loop import GOOD, KEY, fenced
from tests.integration.service.harness import Service, free_port, wait_for
from tests.integration.service.test_chaos import nodes_once

pytestmark = pytest.mark.usefixtures("parser_image")
SLEEPY = GOOD.replace("def parse(pdf_path):\n", "def parse(pdf_path):\n    import time\n    time.sleep(20)\n")


def containers_of(client: docker.DockerClient, pid: int) -> set[str]:
    """The sandbox containers process ``pid`` started (a handed one is the service's)."""
    return {c.id for c in client.containers.list(all=True, sparse=True, filters={"label": f"{MANAGED}=1"})
            if (c.attrs.get("Labels") or {}).get(OWNER, "").rpartition(":")[2] == str(pid)}


def holder_of(path: Path) -> int | None:
    """The process that has ``path`` open (the run's process holds its checkpoint file)."""
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(os.readlink(fd) == str(path) for fd in fd_dir.iterdir()):
                return int(fd_dir.parent.name)
        except OSError:
            continue
    return None


def executing(store, run_id: str) -> bool:  # noqa: ANN001
    return any(e.kind == "node_started" and e.data.get("node") == "execute"
               for e in store.events(run_id, after=0, limit=10_000))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has ended: it only waits for its parent to read its status
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class Watch(threading.Thread):
    """From the kill on, for 6 s: when the old run process ended, and what containers it started."""

    def __init__(self, client: docker.DockerClient, pid: int, before: set[str]) -> None:
        super().__init__(daemon=True)
        self.client, self.pid, self.before = client, pid, before
        self.gone: float | None = None
        self.started: set[str] = set()

    def run(self) -> None:
        killed = time.monotonic()
        while time.monotonic() - killed < 6:
            self.started |= containers_of(self.client, self.pid) - self.before
            if self.gone is None and not alive(self.pid):
                self.gone = time.monotonic() - killed
            time.sleep(0.05)


def service_env(root: Path, server: OpenAIServer, **extra: str) -> dict[str, str]:
    data = root / "data"
    shutil.copytree(ICICI, data / "icici")
    return {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "SBX_DATA_DIR": str(data),
            "SBX_RUNS_DIR": str(root / "runs"), "SBX_LOG_FORMAT": "json", "SBX_PARALLEL_RUNS": "1",
            "SBX_SERVICE__LEASE_SECONDS": "8", "SBX_SERVICE__RENEW_SECONDS": "2",
            "SBX_SERVICE__POLL_SECONDS": "0.5", "SBX_CODER": "openai", "SBX_LLM__BASE_URL": server.base_url,
            "SBX_LLM__MODEL": "test-model", "OPENAI_API_KEY": KEY, "SBX_MAX_ATTEMPTS": "1", **extra}


def killed_mid_execution(tmp_path: Path, store_env: dict[str, str], store_of) -> None:  # noqa: ANN001
    client = docker.from_env()
    with OpenAIServer(models=("test-model",), require_key=KEY) as server:
        server.push(Reply(fenced(SLEEPY, "Here is a parser:")), Reply(fenced(SLEEPY, "Here is a parser:")))
        service = Service(tmp_path, service_env(tmp_path, server, **store_env), free_port())
        service.start()
        try:
            answer = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, timeout=30)
            assert answer.status_code == 202, answer.text
            run_id = answer.json()["id"]
            store = store_of()
            wait_for(lambda: executing(store, run_id), "the run's parser to start", 300)
            time.sleep(3.0)
            old_pid = holder_of(tmp_path / "runs" / run_id / "checkpoints.sqlite")
            assert old_pid is not None
            before = containers_of(client, old_pid)
            assert service.proc is not None
            watch = Watch(client, old_pid, before)
            service.proc.send_signal(signal.SIGKILL)
            watch.start()
            service.proc.wait()
            service.proc = None
            service.start()  # at once, as the audit did
            watch.join(10)
            assert watch.gone is not None and watch.gone < 2.0, f"the old run process {old_pid} outlived its service"
            assert watch.started == set(), "the old run process started a new container after the kill"
            wait_for(lambda: store.get(run_id).status not in ("queued", "running"), "the run to end", 300)
            row = store.get(run_id)
            assert row.status == "passed", (row.status, row.error)
            assert row.takeovers >= 1
            ends = Counter((e.data["node"], e.data["attempt"]) for e in store.events(run_id, after=0, limit=10_000)
                           if e.kind == "node")
            assert ends and max(ends.values()) == 1, f"a node's attempt ended twice in the journal: {ends}"
            nodes_once(store, tmp_path / "runs" / run_id, run_id)  # and once in the checkpoint
        finally:
            if service.proc is not None:
                service.stop(signal.SIGTERM)
            client.close()


def test_sqlite_a_run_process_stops_with_its_killed_service(tmp_path: Path):
    from controller.platform.store.sqlite import SqliteStore

    killed_mid_execution(tmp_path, {}, lambda: SqliteStore(tmp_path / "runs" / "service.sqlite"))


def test_postgres_a_run_process_stops_with_its_killed_service(tmp_path: Path, postgres_dsn: str):
    from controller.platform.store.postgres import PostgresStore

    killed_mid_execution(tmp_path, {"SBX_SERVICE__STORE": "postgres", "SBX_SERVICE__POSTGRES_DSN": postgres_dsn},
                         lambda: PostgresStore(postgres_dsn))
