"""What a one-shot run pushes: gauges about its own result, in a fresh registry, no run id."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from controller.platform.observability.push import push_run, run_registry
from tests.unit.controller.platform.observability.records import run


def pushed(record, last_success) -> dict[tuple[str, tuple], float]:
    text = generate_latest(run_registry(record, last_success)).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


class TestRunRegistry:
    def test_a_failed_run_pushes_its_result_and_keeps_the_last_success(self):
        """A failed run pushes success 0, its status, time, duration and attempts, and the last success time."""
        record = run("failed", attempts=3, seconds=12.5, finished_at=2000.0)
        samples = pushed(record, last_success=1500.0)
        assert samples[("sbx_agent_last_run_success", ())] == 0
        assert samples[("sbx_agent_last_run_status", (("status", "failed"),))] == 1
        assert samples[("sbx_agent_last_run_status", (("status", "passed"),))] == 0
        assert samples[("sbx_agent_last_run_timestamp_seconds", ())] == 2000.0
        assert samples[("sbx_agent_last_run_duration_seconds", ())] == 12.5
        assert samples[("sbx_agent_last_run_attempts", ())] == 3
        assert samples[("sbx_agent_last_success_timestamp_seconds", ())] == 1500.0

    def test_no_last_success_gauge_when_never_passed(self):
        """Without any passing run there is no last-success gauge (not a 0 from 1970)."""
        assert not [k for k in pushed(run("failed"), None) if k[0] == "sbx_agent_last_success_timestamp_seconds"]

    def test_no_counters_and_no_run_id(self):
        """Only gauges are pushed (the Pushgateway is no aggregator), and no run id as a label."""
        record = run()
        text = generate_latest(run_registry(record, None)).decode()
        assert "# TYPE" in text and "counter" not in text and record.run_id not in text


class TestPushErrors:
    def test_unreachable_pushgateway_raises_oserror(self):
        """A Pushgateway that does not answer is an OSError the caller can log and move past."""
        with pytest.raises(OSError):
            push_run("http://127.0.0.1:9", run(), None, timeout=2)
