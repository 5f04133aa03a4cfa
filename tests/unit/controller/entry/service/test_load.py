"""Load: 200 submissions from 20 concurrent clients against 2 workers; every run is accounted
for exactly once (run once, ended passed), none lost, none run twice. The child is a shell
one-liner that records its run id, so the test measures the queue, not the agent."""

from __future__ import annotations

import threading
from pathlib import Path

from fastapi.testclient import TestClient

from controller.entry.service.app import create_app
from controller.platform.store import RunRow
from controller.runner.dispatch.workers import RunWorkers
from tests.unit.controller.entry.service.conftest import make_service
from tests.waiting import wait_for

CLIENTS = 20
PER_CLIENT = 10


def test_two_hundred_submissions_from_twenty_clients(tmp_path: Path):
    # A lease far longer than any run here: this test is about the queue under concurrency, and
    # on a loaded CI machine a 2 s lease expired mid-run (a takeover, tested in test_workers).
    service = make_service(tmp_path, quota_per_token=PER_CLIENT, queue_limit=1000, poll_seconds=0.05,
                           renew_seconds=0.5, lease_seconds=60)
    settings = service.state.settings.model_copy(update={"parallel_runs": 2})
    ran = tmp_path / "ran.log"

    def command(row: RunRow, run_dir: Path) -> list[str]:
        return ["/bin/sh", "-c", 'echo "$0" >> "$1"; echo "==> run $0"', row.id, str(ran)]

    pool = RunWorkers(settings, service.store, worker_id="w", command=command, env={})
    headers = [service.token(f"client{i}") for i in range(CLIENTS)]
    accepted: list[str] = []
    refused: list[str] = []
    lock = threading.Lock()

    def client(auth: dict[str, str]) -> None:
        http = TestClient(create_app(service.state))
        for _ in range(PER_CLIENT):
            response = http.post("/v1/runs", json={"target": "icici"}, headers=auth)
            with lock:
                (accepted.append(response.json()["id"]) if response.status_code == 202
                 else refused.append(response.text))

    pool.start()
    try:
        threads = [threading.Thread(target=client, args=(h,)) for h in headers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert refused == []
        wait_for(lambda: service.store.counts() == {"passed": CLIENTS * PER_CLIENT}, "every run to pass", 300)
    finally:
        pool.stop(10.0)
    assert len(set(accepted)) == CLIENTS * PER_CLIENT
    assert sorted(ran.read_text().split()) == sorted(accepted)  # each run ran exactly once
    for run_id in accepted:
        assert (service.runs_dir / run_id / "console.txt").read_text() == f"==> run {run_id}\n"
