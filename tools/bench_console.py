"""``make bench`` (the console part): the three speed goals of issue 30, measured.

* **runs page, 10,000 runs**: the store holds 10,000 runs (inserted in bulk); ``GET /`` (the
  newest page) and a text search (``?q=``), rendered by the app in-process (server time: the
  ASGI call through TestClient), median of 30;
* **run page of an attempt that printed 1,000,000 lines**: its ``stdout.txt`` has a million
  lines (and ``console.txt`` too); the run page, the attempt page and the stdout page at line
  500,000, median of 15, and the size of each page (what the browser must lay out);
* **a node's end on an open run page**: a real ``serve`` process and real ICICI runs, each
  watched in Chromium (Playwright, Debian's binary) from its submission; for every node that
  ended while the page was open, the time from its ``node.finished`` record (the run's own
  timestamp) to its box in the page's graph changing class (the page's clock; one machine).

Prints medians and each goal (<= 150 ms, <= 300 ms, <= 100 ms); asserts nothing.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

from controller.entry.service.app import create_app
from controller.entry.service.state import ServiceState
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.platform.store import NewRun
from controller.platform.store.sqlite import SqliteStore
from tools.host_packages import CHROMIUM

RUNS = 10_000
LINES = 1_000_000
BASE = "http://127.0.0.1:9466"


def median_ms(call: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def app_client(root: Path) -> tuple[TestClient, SqliteStore]:
    settings = Settings(_env_file=None, data_dir=PROJECT_ROOT / "data", runs_dir=root / "runs",  # type: ignore[call-arg]
                        parsers_dir=root / "parsers")
    store = SqliteStore(root / "runs" / "service.sqlite")
    client = TestClient(create_app(ServiceState(settings, store, engine_probe=lambda: None)), base_url=BASE,
                        client=("127.0.0.1", 5000))
    return client, store


def fill(store: SqliteStore, count: int) -> None:
    """``count`` ended runs, inserted in one transaction (submitting each would take minutes)."""
    store.submit(NewRun("seed", "~local", "bank_parser", "icici"), quota=10, queue_limit=10)
    now = time.time()
    rows = [(f"2026{n:08d}-icici-{n:012x}", "~local", "bank_parser", "icici" if n % 3 else "sbi", "{}",
             "passed" if n % 4 else "failed", now - n, now - n, now - n + 5, 0,
             json.dumps({"status": "passed", "attempts": 1, "max_attempts": 3}), "run") for n in range(count)]
    with sqlite3.connect(store.path) as db:
        db.executemany("INSERT INTO runs (id, owner, agent, target, options, status, created_at, started_at, "
                       "finished_at, exit_code, summary, kind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def runs_page(root: Path) -> None:
    client, store = app_client(root)
    fill(store, RUNS)
    client.get("/")
    for label, path in (("newest page", "/"), ("text search", "/?q=00000abc"), ("failed only", "/?status=failed")):
        print(f"  runs page, {RUNS} runs, {label:<12} {median_ms(lambda p=path: client.get(p), 30):7.1f} ms"
              "   (goal <= 150 ms)")


def big_run(root: Path) -> None:
    client, store = app_client(root)
    store.submit(NewRun("big", "~local", "bank_parser", "icici"), quota=10, queue_limit=10)
    store.claim("bench", 60)
    store.finish("big", "bench", "failed", exit_code=1, summary={"status": "failed", "attempts": 1})
    folder = root / "runs" / "big"
    (folder / "attempts" / "1").mkdir(parents=True)
    line = b"parsing page 1: a row of the statement, as a chatty parser prints it\n"
    for name in ("attempts/1/stdout.txt", "console.txt"):
        (folder / name).write_bytes(line * LINES)
    (folder / "attempts" / "1" / "parser.py").write_text("def parse(pdf_path):\n    return None\n")
    for label, path in (("run page", "/runs/big"), ("attempt page", "/runs/big/attempts/1"),
                        ("stdout at 500,000", "/runs/big/attempts/1/stdout?lines=500000")):
        size = len(client.get(path).content)
        print(f"  {LINES:,} lines, {label:<18} {median_ms(lambda p=path: client.get(p), 15):7.1f} ms"
              f"   ({size / 1024:.0f} KiB of HTML; goal <= 300 ms)")


WATCH = """() => { window.__seen = {}; for (const box of document.querySelectorAll('svg.graph .node[data-node]')) {
  new MutationObserver(() => { const name = box.dataset.node;
    if (!window.__seen[name] && (box.classList.contains('done') || box.classList.contains('failed')))
      window.__seen[name] = Date.now(); }).observe(box, {attributes: true}); } }"""


def _ended_at(run_dir: Path) -> dict[str, float]:
    """Each node's first end in the run's events.jsonl (its own timestamp, ms since the epoch)."""
    ends: dict[str, float] = {}
    for raw in (run_dir / "events.jsonl").read_text().splitlines():
        record = json.loads(raw)
        if record.get("event") == "node.finished" and record["node"] not in ends:
            moment = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
            ends[record["node"]] = moment.timestamp() * 1000
    return ends


def node_latency(root: Path, runs: int = 5) -> None:
    """Real ICICI runs on a real service, each watched in Chromium from its submission: the time from a
    node's ``node.finished`` record (the run's own clock) to its box's class changing (the page's)."""
    from playwright.sync_api import sync_playwright  # lazy: a dev dependency, for this part only

    from tests.integration.service.harness import (  # lazy: the tests' serve harness
        Service,
        free_port,
    )
    env = {**os.environ, "SBX_RUNS_DIR": str(root / "runs"), "SBX_PARSERS_DIR": str(root / "parsers"),
           "SBX_DATA_DIR": str(PROJECT_ROOT / "data"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
           "SBX_PARALLEL_RUNS": "1"}
    root.mkdir(parents=True)
    service = Service(root, env, free_port())
    service.start()
    samples: list[float] = []
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            for _ in range(runs):
                run_id = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, timeout=60).json()["id"]
                page.goto(f"{service.url}/runs/{run_id}")
                page.evaluate(WATCH)
                opened = time.time() * 1000
                while page.text_content("#run-status") not in ("passed", "failed", "error"):
                    time.sleep(0.05)
                seen = page.evaluate("window.__seen")
                samples += [seen[node] - at for node, at in _ended_at(root / "runs" / run_id).items()
                            if node in seen and at > opened]
            browser.close()
    finally:
        service.stop(signal.SIGTERM)
    print(f"  a node's end on an open run page   median {statistics.median(samples):6.1f} ms, "
          f"max {max(samples):6.1f} ms over {len(samples)} node ends of {runs} runs   (goal <= 100 ms)")


def main() -> int:
    print("==> console (issue 30): server-side rendering and live updates")
    with tempfile.TemporaryDirectory() as folder:
        runs_page(Path(folder) / "list")
        big_run(Path(folder) / "big")
        if Path(CHROMIUM).exists():
            node_latency(Path(folder) / "live")
        else:
            print(f"  a node's end on an open run page   not measured: {CHROMIUM} is missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
