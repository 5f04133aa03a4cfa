"""The workers' warm sandboxes at /metrics: the counts of the live pool, read at each scrape."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from controller.platform.sandbox.warm_metrics import WarmSandboxCollector
from tests.unit.controller.platform.sandbox.test_worker_sandboxes import sandboxes


def test_each_scrape_reads_the_live_counts(tmp_path: Path):
    pool = sandboxes(tmp_path)
    registry = CollectorRegistry()
    registry.register(WarmSandboxCollector(pool))
    assert "sbx_service_warm_sandboxes_handed_total 0.0" in generate_latest(registry).decode()
    pool.handed, pool.taken = 3, 2
    text = generate_latest(registry).decode()
    assert "sbx_service_warm_sandboxes_handed_total 3.0" in text
    assert "sbx_service_warm_sandboxes_taken_total 2.0" in text
    assert "sbx_service_warm_sandboxes_idle 0.0" in text and "# TYPE sbx_service_warm_sandboxes_idle gauge" in text
