"""Two replicas as if on two nodes (issue 34): two ``serve`` processes, each with its own local
folder (its working directory and its copy of the targets), sharing only a real PostgreSQL and
the artefact folder (``SBX_RUNS_DIR``, a ReadWriteMany volume in Kubernetes).

- The lessons a run learned on one replica are given to the next run on the other.
- The history, the stats, the lessons and the exporter's run counters are the same from both.
- The artefacts of a run are served by either.
- The run history and the lessons are in PostgreSQL: no ``history.sqlite``, ``lessons.sqlite``
  or ``service.sqlite`` is written anywhere (the checkpoints are still per-run SQLite files:
  issue 34's next step).

Which replica runs a run is made certain by having only that one up while it runs.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import httpx

from controller.platform.settings import PROJECT_ROOT
from controller.platform.store.postgres import PostgresStore
from controller.platform.store.tokens import new_token, token_hash
from tests.conftest import ICICI
from tests.integration.service.harness import Service, free_port, wait_for

#: A target whose expected result differs from the statement in one cell: the offline coder's
#: parser fails with a mismatch, and the run leaves a lesson.
TARGET = "icici-one-cell-off"
ENDED = {"passed", "failed", "error", "cancelled", "unverified", "self-consistent"}


def replica(root: Path, runs: Path, dsn: str) -> Service:
    """A replica whose own folder is ``root``; ``runs`` and the PostgreSQL are what it shares."""
    data = root / "data" / TARGET
    shutil.copytree(ICICI, data)
    expected = (data / "result.csv").read_text().splitlines()
    expected[1] = expected[1].replace("1935.3", "1935.4", 1)
    (data / "result.csv").write_text("\n".join(expected) + "\n")
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "SBX_DATA_DIR": str(root / "data"),
           "SBX_RUNS_DIR": str(runs), "SBX_LOG_FORMAT": "json", "SBX_PARALLEL_RUNS": "1",
           "SBX_SERVICE__STORE": "postgres", "SBX_SERVICE__POSTGRES_DSN": dsn,
           "SBX_SERVICE__POLL_SECONDS": "0.5"}
    return Service(root, env, free_port())


def run_to_its_end(service: Service, headers: dict[str, str]) -> dict[str, object]:
    """Submit one run of TARGET (one attempt) to ``service``; its row once it ended."""
    made = httpx.post(f"{service.url}/v1/runs", json={"target": TARGET, "max_attempts": 1}, headers=headers,
                      timeout=30)
    assert made.status_code == 202, made.text
    url = f"{service.url}/v1/runs/{made.json()['id']}"
    wait_for(lambda: httpx.get(url, headers=headers, timeout=30).json()["status"] in ENDED, "the run to end", 300)
    row: dict[str, object] = httpx.get(url, headers=headers, timeout=30).json()
    return row


def shared_views(service: Service, headers: dict[str, str]) -> list[object]:
    """What every replica must answer alike: history, stats, lessons and the run counters."""
    get = lambda path, **params: httpx.get(f"{service.url}{path}", params=params, headers=headers,  # noqa: E731
                                           timeout=30)
    counters = sorted(line for line in get("/metrics").text.splitlines()
                      if line.startswith(("sbx_runs_total", "sbx_run_retries_total")))
    return [get("/v1/history").json(), get("/v1/stats").json(),
            get("/v1/lessons", agent="bank_parser", target=TARGET).json(), counters]


def test_two_replicas_share_lessons_history_and_artefacts(tmp_path: Path, postgres_dsn: str):
    runs = tmp_path / "artefacts"
    one, two = replica(tmp_path / "node-1", runs, postgres_dsn), replica(tmp_path / "node-2", runs, postgres_dsn)
    token = new_token()
    store = PostgresStore(postgres_dsn)
    store.add_token("ops", token_hash(token), admin=True)
    store.engine.dispose()
    headers = {"Authorization": f"Bearer {token}"}
    try:
        one.start()
        first = run_to_its_end(one, headers)  # only replica one is up: it runs it
        assert first["status"] == "failed", first
        two.start()
        one.stop(signal.SIGTERM)
        second = run_to_its_end(two, headers)  # only replica two is up
        given = (runs / str(second["id"]) / "lessons.md").read_text()
        assert "cells differ" in given and "seen once" in given, given
        one.start()
        assert shared_views(one, headers) == shared_views(two, headers)
        history = shared_views(one, headers)[0]
        assert [run["id"] for run in history["runs"]] == [second["id"], first["id"]]  # type: ignore[index]
        lessons = shared_views(two, headers)[2]["lessons"]  # type: ignore[index]
        assert [lesson["seen"] for lesson in lessons] == [2], lessons
        for run in (first, second):
            for service in (one, two):
                served = httpx.get(f"{service.url}/v1/runs/{run['id']}/artefacts/summary.json", headers=headers,
                                   timeout=30)
                assert served.status_code == 200 and served.content == (runs / str(run["id"]) / "summary.json").read_bytes()
    finally:
        for service in (one, two):
            if service.proc is not None:
                service.stop(signal.SIGTERM)
    written = {path.name for path in tmp_path.rglob("*.sqlite*")}
    assert written <= {"checkpoints.sqlite"}, written
