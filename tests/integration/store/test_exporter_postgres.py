"""Issue 34: ``serve --metrics-only`` on a PostgreSQL store exports the store's run history (every
replica's runs), as a user runs it, and writes no SQLite file; a conversation log in the store."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from controller.platform.memory_sql import SqlMemoryStores
from controller.platform.observability.history import HistoryStore
from controller.platform.store.postgres import PostgresStore
from tests.unit.controller.entry.test_serve_command import free_port, get, serve
from tests.unit.controller.platform.observability.records import run


def test_the_exporter_reads_the_store_s_history(tmp_path: Path, postgres_dsn: str):
    store = PostgresStore(postgres_dsn)  # the service made the schema and recorded two runs
    history = HistoryStore.in_store(store.engine)
    history.record(run("failed", target="icici"))
    history.record(run("passed", target="icici"))
    store.engine.dispose()
    (tmp_path / "data" / "icici").mkdir(parents=True)  # /metrics names only data/'s targets (issue 42)
    port = free_port()
    proc = serve(tmp_path, "--metrics-only", "--port", str(port),
                 env_extra={"SBX_SERVICE__STORE": "postgres", "SBX_SERVICE__POSTGRES_DSN": postgres_dsn})
    try:
        metrics, health = get(f"http://127.0.0.1:{port}/metrics"), get(f"http://127.0.0.1:{port}/healthz")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0, stderr
    for status in ("failed", "passed"):
        assert f'sbx_agent_runs_total{{agent="bank_parser",status="{status}",target="icici"}} 1.0' in metrics
    assert json.loads(health)["runs"] == 2
    assert not list(tmp_path.rglob("*.sqlite*"))


def test_a_conversation_log_in_the_store(postgres_dsn: str):
    store = PostgresStore(postgres_dsn)
    stores = SqlMemoryStores(store.engine)
    log = stores.conversation("run-1")
    log.put("turns", 1, '{"reply": "34"}', "t1")
    log.put("turns", 1, '{"reply": "35"}', "t2")
    log.put("snapshots", 0, "{}", "t1", name="Personal", replace=True)
    log.put("snapshots", 0, '{"age": 35}', "t2", name="Personal", replace=True)
    assert log.get("turns", 1) == '{"reply": "34"}' and log.get("snapshots", 0, "Personal") == '{"age": 35}'
    assert stores.read_conversation("run-2", "turns", 5) == []
    store.engine.dispose()
