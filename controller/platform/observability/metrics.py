"""Prometheus metrics: names, buckets, bounded label values, and the collector that derives
counters and histograms from the run history on every scrape.

Naming follows Prometheus' conventions: the ``sbx_`` prefix, base units (seconds), ``_total``
on counters, histograms for durations, and label values from bounded sets only (agent,
target folder, status, failure reason, node, image repository, outcome; never a run id).
Series that are known to exist are exported as 0 before their first event, so ``increase()``
sees the first one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import structlog
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from agents.ports.errors import INFRA_REASONS
from controller.platform.observability.history import (
    POOL_RESULTS,
    STATUSES,
    BucketSet,
    Histogram,
    HistoryError,
    HistorySnapshot,
    HistoryStore,
)

log = structlog.get_logger("sandloop.metrics")

RUNS_TOTAL = "sbx_agent_runs_total"
RETRIES_TOTAL = "sbx_agent_retries_total"
RUN_ATTEMPTS = "sbx_agent_run_attempts"
RUN_DURATION = "sbx_agent_run_duration_seconds"
NODE_DURATION = "sbx_graph_node_duration_seconds"
SANDBOX_EXECUTIONS_TOTAL = "sbx_sandbox_executions_total"
SANDBOX_DURATION = "sbx_sandbox_execution_duration_seconds"
LAST_SUCCESS = "sbx_agent_last_success_timestamp_seconds"
POOL_REQUESTS_TOTAL = "sbx_sandbox_pool_requests_total"
POOL_WARMUP = "sbx_sandbox_pool_warmup_seconds"
INFRA_RETRIES_TOTAL = "sbx_sandbox_infra_retries_total"
BUILD_INFO = "sbx_build_info"
HISTORY_READ_ERRORS = "sbx_exporter_history_read_errors_total"

#: Sandbox outcomes (agents.ports.sandbox.Outcome); engine_error is a raised SandboxError.
SANDBOX_OUTCOMES = ("ok", "nonzero_exit", "timeout", "oom", "engine_error")

#: client_python's default buckets stop at 10 s; these fit a loop, a node and a sandbox.
BUCKETS = BucketSet(
    attempts=(1, 2, 3, 4, 5, 8, 13, 20, 50),
    run_seconds=(1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600),
    node_seconds=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
    sandbox_seconds=(0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600),
)


def image_label(ref: str) -> str:
    """The image's repository without tag or digest: a bounded label for an image reference.

    ``sandloop/python-parser:f87ca541ef49`` → ``sandloop/python-parser``; the content-hash
    tag changes with every rebuild and would grow the series count without bound.
    """
    name = ref.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


@dataclass(frozen=True)
class KnownLabels:
    """Label values known before any run, exported as zero series.

    Attributes:
        agents: Agent names (e.g. ``bank_parser``).
        targets: Target folder names (from ``data/``).
        reasons: Failure kinds an attempt can end with.
        nodes: Node names per agent.
        images: Image labels (repositories) the sandboxes use.
    """

    agents: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    nodes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    images: tuple[str, ...] = ()


class HistoryCollector(Collector):
    """Reads the history on every scrape and yields counters, histograms and gauges from it.

    If the history cannot be read, the scrape carries no derived series (Prometheus then
    shows gaps instead of wrong numbers) and ``sbx_exporter_history_read_errors_total`` grows.
    """

    def __init__(self, store: HistoryStore, known: KnownLabels) -> None:
        self.store = store
        self.known = known
        self.read_errors = 0
        self.last_error = ""

    def describe(self) -> Iterable[Metric]:
        """Nothing to describe up front: series depend on the history (avoids a read at registration)."""
        return []

    def collect(self) -> Iterator[Metric]:
        """The derived families, plus the read-error counter."""
        try:
            snapshot = self.store.snapshot(BUCKETS)
        except HistoryError as exc:
            self.read_errors += 1
            self.last_error = exc.one_line()
            log.error("history.read_failed", error=self.last_error, path=str(self.store.path))
            snapshot = None
        if snapshot is not None:
            self.last_error = ""
            yield from history_families(snapshot, self.known)
        yield CounterMetricFamily(HISTORY_READ_ERRORS, "Scrapes whose run-history read failed.",
                                  value=self.read_errors)


#: The one ``target`` label of every target that is not a folder of ``data/`` (an upload's, or one
#: removed since): a name a tenant chose never reaches ``/metrics``, and the label stays bounded.
UPLOADED = "uploaded"


def bounded_targets(snapshot: HistorySnapshot, known: KnownLabels) -> HistorySnapshot:
    """``snapshot`` with every target outside ``known.targets`` counted under :data:`UPLOADED`.

    So the ``target`` label has at most ``len(data/) + 1`` values, whatever tenants upload
    (issue 42: 22 uploaded names had made 10,299 series, each name readable by anyone).
    """
    names = set(known.targets)

    def key(parts: tuple[str, ...]) -> tuple[str, ...]:
        return (parts[0], parts[1] if parts[1] in names else UPLOADED, *parts[2:])

    def counts(values: Mapping[tuple[str, ...], int]) -> dict[tuple[str, ...], int]:
        out: dict[tuple[str, ...], int] = {}
        for parts, value in values.items():
            out[key(parts)] = out.get(key(parts), 0) + value
        return out

    def histograms(values: Mapping[tuple[str, ...], Histogram]) -> dict[tuple[str, ...], Histogram]:
        out: dict[tuple[str, ...], Histogram] = {}
        for parts, value in values.items():
            seen = out.get(key(parts))
            out[key(parts)] = value if seen is None else Histogram(
                seen.buckets, tuple(a + b for a, b in zip(seen.cumulative, value.cumulative, strict=True)),
                seen.count + value.count, seen.total + value.total)
        return out

    last: dict[tuple[str, str], float] = {}
    for (agent, target), when in snapshot.last_success.items():
        label = (agent, target if target in names else UPLOADED)
        last[label] = max(when, last.get(label, when))
    return dataclasses.replace(
        snapshot, runs=counts(snapshot.runs), retries=counts(snapshot.retries),
        attempts=histograms(snapshot.attempts), run_seconds=histograms(snapshot.run_seconds),
        sandbox_runs=counts(snapshot.sandbox_runs), sandbox_seconds=histograms(snapshot.sandbox_seconds),
        pool_requests=counts(snapshot.pool_requests), last_success=last)


def history_families(snapshot: HistorySnapshot, known: KnownLabels) -> Iterator[Metric]:
    """Every metric family derived from one history snapshot, known series filled with 0; targets
    outside ``data/`` under one label (:func:`bounded_targets`)."""
    snapshot = bounded_targets(snapshot, known)
    agents = _union(known.agents, (k[0] for k in snapshot.runs))
    targets = _union(known.targets, (k[1] for k in snapshot.runs))  # bounded: data/'s names and UPLOADED
    yield _counter(RUNS_TOTAL, f"Agent runs by final status ({', '.join(STATUSES)}).",
                   ("agent", "target", "status"), snapshot.runs, _product(agents, targets, STATUSES))
    reasons = _union(known.reasons, (k[2] for k in snapshot.retries))
    yield _counter(RETRIES_TOTAL, "Attempts that failed and were retried, by failure reason.",
                   ("agent", "target", "reason"), snapshot.retries, _product(agents, targets, reasons))
    pairs = _product(agents, targets)
    yield _histogram(RUN_ATTEMPTS, "Attempts a run used.", ("agent", "target"),
                     snapshot.attempts, pairs, BUCKETS.attempts)
    yield _histogram(RUN_DURATION, "Wall time of a run, start to summary.", ("agent", "target"),
                     snapshot.run_seconds, pairs, BUCKETS.run_seconds)
    nodes = sorted({(a, n) for a, names in known.nodes.items() for n in names} | set(snapshot.node_seconds))
    yield _histogram(NODE_DURATION, "Wall time of one graph node execution.", ("agent", "node"),
                     snapshot.node_seconds, nodes, BUCKETS.node_seconds)
    images = _union(known.images, (k[2] for k in snapshot.sandbox_runs))
    yield _counter(SANDBOX_EXECUTIONS_TOTAL, "Sandbox executions of agent runs by image and outcome.",
                   ("agent", "target", "image", "outcome"), snapshot.sandbox_runs,
                   _product(agents, targets, images, SANDBOX_OUTCOMES))
    yield _histogram(SANDBOX_DURATION, "Sandbox execution time end to end (create to remove).",
                     ("agent", "target", "image"), snapshot.sandbox_seconds,
                     _product(agents, targets, images), BUCKETS.sandbox_seconds)
    yield _counter(POOL_REQUESTS_TOTAL, "Poolable sandbox executions: served warm (hit) or cold (miss).",
                   ("agent", "target", "image", "result"), snapshot.pool_requests,
                   _product(agents, targets, images, POOL_RESULTS))
    yield _histogram(POOL_WARMUP, "Create-and-start time of the warm containers that served executions.",
                     ("image",), snapshot.pool_warmup_seconds, [(i,) for i in images], BUCKETS.warmup_seconds)
    yield _counter(INFRA_RETRIES_TOTAL, "Sandbox executions the infrastructure lost (container gone, engine "
                   "unreachable, Pod evicted, ...) and ran again, by image and reason; never the program's doing.",
                   ("image", "reason"), snapshot.infra_retries, _product(images, INFRA_REASONS))
    last = GaugeMetricFamily(LAST_SUCCESS, "Unix time the last passing run of a target ended.",
                             labels=("agent", "target"))
    for key, value in sorted(snapshot.last_success.items()):
        last.add_metric(key, value)
    yield last


def _union(known: Iterable[str], seen: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(known) | set(seen)))


def _product(*axes: Iterable[str]) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = [()]
    for axis in axes:
        keys = [key + (value,) for key in keys for value in axis]
    return keys


def _counter(name: str, doc: str, labels: tuple[str, ...], values: Mapping[tuple[str, ...], int],
             known: Iterable[tuple[str, ...]]) -> CounterMetricFamily:
    family = CounterMetricFamily(name, doc, labels=labels)
    for key in sorted(set(known) | set(values)):
        family.add_metric(key, values.get(key, 0))
    return family


def _histogram(name: str, doc: str, labels: tuple[str, ...], values: Mapping[tuple[str, ...], Histogram],
               known: Iterable[tuple[str, ...]], bounds: tuple[float, ...]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=labels)
    for key in sorted(set(known) | set(values)):
        hist = values.get(key) or Histogram.empty(bounds)
        buckets = [(floatToGoString(b), c) for b, c in zip(hist.buckets, hist.cumulative, strict=True)]
        family.add_metric(list(key), buckets + [("+Inf", hist.count)], hist.total)
    return family
