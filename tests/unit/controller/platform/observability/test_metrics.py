"""The history collector's exposition, read back with prometheus_client's own parser."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from controller.platform.observability.history import HistoryStore
from controller.platform.observability.metrics import (
    RETRIES_TOTAL,
    RUNS_TOTAL,
    SANDBOX_EXECUTIONS_TOTAL,
    HistoryCollector,
    KnownLabels,
    image_label,
)
from tests.unit.controller.platform.observability.records import run

KNOWN = KnownLabels(agents=("bank_parser",), targets=("icici", "sbi"), reasons=("timeout", "mismatch"),
                    nodes={"bank_parser": ("analyze", "execute")}, images=("sandloop/python-parser",))


def scrape(store: HistoryStore, known: KnownLabels = KNOWN) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} from a fresh registry (no global-registry leakage)."""
    registry = CollectorRegistry()
    registry.register(HistoryCollector(store, known))
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def sample(samples: dict, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


class TestZeroSeries:
    def test_known_series_exist_as_zero_before_any_run(self, tmp_path):
        """With no history, every known (agent, target, status) and retry reason is exported as 0."""
        samples = scrape(HistoryStore(tmp_path / "none.sqlite"))
        for target in ("icici", "sbi"):
            for status in ("passed", "failed", "unverified", "error"):
                assert sample(samples, RUNS_TOTAL, agent="bank_parser", target=target, status=status) == 0
            assert sample(samples, RETRIES_TOTAL, agent="bank_parser", target=target, reason="timeout") == 0
        assert sample(samples, "sbx_agent_run_attempts_count", agent="bank_parser", target="sbi") == 0
        assert sample(samples, "sbx_graph_node_duration_seconds_count", agent="bank_parser", node="execute") == 0
        assert sample(samples, SANDBOX_EXECUTIONS_TOTAL, agent="bank_parser", target="icici",
                      image="sandloop/python-parser", outcome="engine_error") == 0

    def test_no_last_success_series_for_a_target_that_never_passed(self, tmp_path):
        """A 0 timestamp would claim a success in 1970, so that gauge is absent instead."""
        samples = scrape(HistoryStore(tmp_path / "none.sqlite"))
        assert not [k for k in samples if k[0] == "sbx_agent_last_success_timestamp_seconds"]


class TestFromHistory:
    def test_counts_and_histograms_follow_the_history(self, tmp_path):
        """Runs, retries, attempts and sandbox outcomes in /metrics equal what was recorded."""
        store = HistoryStore(tmp_path / "h.sqlite")
        store.record(run("passed", attempts=2, failures=("timeout",), sandbox=(("timeout", 31.0), ("ok", 2.0))))
        store.record(run("failed", target="sbi", attempts=1, failures=("mismatch",)))
        store.record(run("passed", agent="toy", target="new"))
        samples = scrape(store)
        assert sample(samples, RUNS_TOTAL, agent="bank_parser", target="icici", status="passed") == 1
        assert sample(samples, RUNS_TOTAL, agent="bank_parser", target="sbi", status="failed") == 1
        # not a folder of data/: under one label (issue 42)
        assert sample(samples, RUNS_TOTAL, agent="toy", target="uploaded", status="passed") == 1
        assert sample(samples, RUNS_TOTAL, agent="toy", target="icici", status="failed") == 0
        assert sample(samples, RETRIES_TOTAL, agent="bank_parser", target="icici", reason="timeout") == 1
        assert sample(samples, RETRIES_TOTAL, agent="bank_parser", target="sbi", reason="mismatch") == 0
        assert sample(samples, "sbx_agent_run_attempts_bucket", agent="bank_parser", target="icici", le="1.0") == 0
        assert sample(samples, "sbx_agent_run_attempts_bucket", agent="bank_parser", target="icici", le="2.0") == 1
        assert sample(samples, SANDBOX_EXECUTIONS_TOTAL, agent="bank_parser", target="icici",
                      image="sandloop/python-parser", outcome="timeout") == 1

    def test_no_run_id_or_tag_in_any_label(self, tmp_path):
        """Label values stay bounded: neither run ids nor image tags appear."""
        store = HistoryStore(tmp_path / "h.sqlite")
        record = run()
        store.record(record)
        values = {v for _, labels in scrape(store) for _, v in labels}
        assert record.run_id not in values and "sandloop/python-parser:abc" not in values

    def test_unreadable_history_drops_derived_series_and_counts_the_error(self, tmp_path):
        """A corrupt history yields no derived series (gaps, not wrong numbers) and bumps the error counter."""
        path = tmp_path / "h.sqlite"
        path.write_bytes(b"garbage" * 200)
        samples = scrape(HistoryStore(path))
        assert not [k for k in samples if k[0] == RUNS_TOTAL]
        assert sample(samples, "sbx_exporter_history_read_errors_total") == 1


class TestImageLabel:
    def test_tags_and_digests_are_dropped(self):
        """The label is the repository: tag, digest and registry port handled."""
        assert image_label("sandloop/python-parser:f87ca541ef49") == "sandloop/python-parser"
        assert image_label("registry:5000/team/img@sha256:abc") == "registry:5000/team/img"
        assert image_label("registry:5000/team/img") == "registry:5000/team/img"
        assert image_label("debian") == "debian"


class TestWarmPoolMetrics:
    def test_hits_misses_and_warmup_come_from_the_history(self, tmp_path):
        """Pool hits and misses are counted per image; warm-up time is a histogram of the hits."""
        import dataclasses

        from controller.platform.observability.metrics import POOL_REQUESTS_TOTAL, POOL_WARMUP

        store = HistoryStore(tmp_path / "h.sqlite")
        record = run("passed", attempts=2, sandbox=(("ok", 2.0), ("ok", 1.0)))
        first, second = record.sandbox
        store.record(dataclasses.replace(record, sandbox=(
            dataclasses.replace(first, pool="miss"),
            dataclasses.replace(second, pool="hit", warmup_seconds=0.4))))
        samples = scrape(store)
        labels = {"agent": "bank_parser", "target": "icici", "image": "sandloop/python-parser"}
        assert sample(samples, POOL_REQUESTS_TOTAL, **labels, result="hit") == 1
        assert sample(samples, POOL_REQUESTS_TOTAL, **labels, result="miss") == 1
        assert sample(samples, POOL_REQUESTS_TOTAL, agent="bank_parser", target="sbi",
                      image="sandloop/python-parser", result="hit") == 0
        assert sample(samples, f"{POOL_WARMUP}_count", image="sandloop/python-parser") == 1
        assert sample(samples, f"{POOL_WARMUP}_bucket", image="sandloop/python-parser", le="0.25") == 0
        assert sample(samples, f"{POOL_WARMUP}_bucket", image="sandloop/python-parser", le="0.5") == 1

    def test_a_version_1_history_is_migrated(self, tmp_path):
        """A history written before the pool columns existed is upgraded in place, runs kept."""
        import sqlite3

        from controller.platform.observability.metrics import RUNS_TOTAL as RUNS

        path = tmp_path / "h.sqlite"
        HistoryStore(path).record(run("passed"))
        with sqlite3.connect(path) as conn:  # rewind to the v1 layout
            conn.executescript(
                "CREATE TABLE s AS SELECT run_id, image, image_ref, outcome, duration_seconds, exit_code, attempt "
                "FROM sandbox_executions; DROP TABLE sandbox_executions; ALTER TABLE s RENAME TO sandbox_executions;"
                "PRAGMA user_version = 1;")
        store = HistoryStore(path)
        store.record(run("failed"))
        samples = scrape(store)
        assert sample(samples, RUNS, agent="bank_parser", target="icici", status="passed") == 1
        assert sample(samples, RUNS, agent="bank_parser", target="icici", status="failed") == 1


class TestInfraRetryMetrics:
    def test_retries_are_counted_by_image_and_reason_with_known_zeros(self, tmp_path):
        """sbx_sandbox_infra_retries_total{image,reason}: one per lost try; every known pair starts at 0."""
        import dataclasses

        from agents.ports.errors import INFRA_REASONS
        from controller.platform.observability.metrics import INFRA_RETRIES_TOTAL

        store = HistoryStore(tmp_path / "h.sqlite")
        record = run("passed", sandbox=(("ok", 2.0), ("engine_error", 1.0)))
        first, second = record.sandbox
        store.record(dataclasses.replace(record, sandbox=(
            dataclasses.replace(first, infra_retries=("container_gone",)),
            dataclasses.replace(second, infra_retries=("container_gone", "engine_unreachable")))))
        samples = scrape(store)
        image = "sandloop/python-parser"
        assert sample(samples, INFRA_RETRIES_TOTAL, image=image, reason="container_gone") == 2
        assert sample(samples, INFRA_RETRIES_TOTAL, image=image, reason="engine_unreachable") == 1
        assert sample(samples, INFRA_RETRIES_TOTAL, image=image, reason="pod_evicted") == 0
        series = [key for key in samples if key[0] == INFRA_RETRIES_TOTAL]
        assert len(series) == len(INFRA_REASONS)  # bounded: images x reasons, no run id, no message

    def test_a_version_2_history_gains_the_retries_table(self, tmp_path):
        """A history written before infrastructure retries were kept is upgraded in place, runs kept."""
        import dataclasses
        import sqlite3

        from controller.platform.observability.metrics import INFRA_RETRIES_TOTAL

        path = tmp_path / "h.sqlite"
        HistoryStore(path).record(run("passed"))
        with sqlite3.connect(path) as conn:  # rewind to the v2 layout
            conn.executescript("DROP TABLE sandbox_infra_retries; PRAGMA user_version = 2;")
        assert sample(scrape(HistoryStore(path)), RUNS_TOTAL, agent="bank_parser", target="icici",
                      status="passed") == 1  # a v2 file reads (read-only) without the new table
        record = run("failed")
        retried = dataclasses.replace(record.sandbox[0], infra_retries=("container_killed",))
        HistoryStore(path).record(dataclasses.replace(record, sandbox=(retried,)))
        samples = scrape(HistoryStore(path))
        assert sample(samples, INFRA_RETRIES_TOTAL, image="sandloop/python-parser", reason="container_killed") == 1
        assert sample(samples, RUNS_TOTAL, agent="bank_parser", target="icici", status="passed") == 1


class TestTenantsNames:
    """Issue 42: a target name a tenant uploaded never reaches /metrics, and 50 names cost no more
    series than 1 (before, each name added ~445 series, readable by anyone)."""

    def test_uploaded_targets_count_under_one_label(self, tmp_path):
        store = HistoryStore(tmp_path / "h.sqlite")
        store.record(run("passed", target="acme-takeover-of-globex"))
        store.record(run("failed", target="icici"))
        samples = scrape(store)
        assert not [k for k in samples if "acme-takeover-of-globex" in str(k)]
        assert sample(samples, RUNS_TOTAL, agent="bank_parser", target="uploaded", status="passed") == 1
        assert sample(samples, RUNS_TOTAL, agent="bank_parser", target="icici", status="failed") == 1

    def test_fifty_uploaded_names_make_as_many_series_as_one(self, tmp_path):
        one, fifty = HistoryStore(tmp_path / "one.sqlite"), HistoryStore(tmp_path / "fifty.sqlite")
        one.record(run("passed", target="upload-0"))
        for number in range(50):
            fifty.record(run("passed", target=f"upload-{number}", finished_at=1_000_000.0 + number))
        assert len(scrape(fifty)) == len(scrape(one))
        assert sample(scrape(fifty), RUNS_TOTAL, agent="bank_parser", target="uploaded", status="passed") == 50
        assert sample(scrape(fifty), "sbx_agent_run_attempts_count", agent="bank_parser", target="uploaded") == 50
