"""Push a one-shot run's result to a Pushgateway, as Prometheus recommends for batch jobs.

The Pushgateway is not an aggregator: it keeps the last push of each group and nothing
else. So what is pushed are *gauges about the last run* of one (agent, target) group (did it
pass, when did it end, how long did it take, how many attempts), not counters; success rates
across many runs come from the history-backed exporter instead. The group is
``job="sbx_agent_run"`` with the grouping key ``{agent, target}`` (bounded; no run id, no
instance), and each push replaces the whole group (HTTP PUT).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge, push_to_gateway

from controller.platform.observability.history import STATUSES, RunRecord

PUSH_JOB = "sbx_agent_run"
LAST_RUN_SUCCESS = "sbx_agent_last_run_success"
LAST_RUN_STATUS = "sbx_agent_last_run_status"
LAST_RUN_TIMESTAMP = "sbx_agent_last_run_timestamp_seconds"
LAST_RUN_DURATION = "sbx_agent_last_run_duration_seconds"
LAST_RUN_ATTEMPTS = "sbx_agent_last_run_attempts"
LAST_SUCCESS = "sbx_agent_last_success_timestamp_seconds"


def run_registry(run: RunRecord, last_success: float | None) -> CollectorRegistry:
    """A fresh registry holding the gauges that describe ``run`` (never the global registry)."""
    registry = CollectorRegistry()
    Gauge(LAST_RUN_SUCCESS, "1 if the last run passed, else 0.", registry=registry).set(
        1 if run.status == "passed" else 0)
    status = Gauge(LAST_RUN_STATUS, "1 for the last run's final status, 0 for the others.",
                   ("status",), registry=registry)
    for name in STATUSES:
        status.labels(name).set(1 if name == run.status else 0)
    Gauge(LAST_RUN_TIMESTAMP, "Unix time the last run ended.", registry=registry).set(run.finished_at)
    Gauge(LAST_RUN_DURATION, "Wall time of the last run.", registry=registry).set(run.duration_seconds)
    Gauge(LAST_RUN_ATTEMPTS, "Attempts the last run used.", registry=registry).set(run.attempts)
    if last_success is not None:
        Gauge(LAST_SUCCESS, "Unix time the last passing run of this target ended.",
              registry=registry).set(last_success)
    return registry


def push_run(url: str, run: RunRecord, last_success: float | None, timeout: float) -> None:
    """PUT the run's gauges to the Pushgateway at ``url``, replacing its (agent, target) group.

    Raises:
        OSError: the Pushgateway cannot be reached or refused the push (urllib's errors are
            OSErrors); the caller logs it and the run's result stands.
    """
    push_to_gateway(url, job=PUSH_JOB, registry=run_registry(run, last_success),
                    grouping_key={"agent": run.agent, "target": run.target}, timeout=timeout)
