"""The workers' warm sandboxes at ``/metrics`` (issue 32): how many containers this replica
handed to runs, how many the runs took, and how many wait now.

Per replica, read at each scrape from the live :class:`WorkerSandboxes` (no history: they
start at zero with the process, as Prometheus expects of a counter; a restart shows as a reset).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from controller.platform.sandbox.worker_sandboxes import WorkerSandboxes

HANDED_TOTAL = "sbx_service_warm_sandboxes_handed_total"
TAKEN_TOTAL = "sbx_service_warm_sandboxes_taken_total"
IDLE = "sbx_service_warm_sandboxes_idle"


class WarmSandboxCollector(Collector):
    """Reads the counts of ``sandboxes`` at each scrape."""

    def __init__(self, sandboxes: WorkerSandboxes) -> None:
        self.sandboxes = sandboxes

    def collect(self) -> Iterator[Metric]:
        """The three series (a counter's ``_total`` is added by the client library)."""
        yield CounterMetricFamily(HANDED_TOTAL.removesuffix("_total"),
                                  "Warm sandbox containers this replica's workers handed to runs.",
                                  value=self.sandboxes.handed)
        yield CounterMetricFamily(TAKEN_TOTAL.removesuffix("_total"),
                                  "Handed warm containers the runs used for an execution "
                                  "(the rest were removed unused).",
                                  value=self.sandboxes.taken)
        yield GaugeMetricFamily(IDLE, "Warm sandbox containers the workers keep ready now.",
                                value=self.sandboxes.idle())
