"""Every PromQL expression of the Grafana dashboard, evaluated by a real Prometheus (Debian's
2.42) that scraped the real exporter while a known mix of runs was made (see conftest.py).

Instant panels are evaluated at T with ``$__range`` = T - T0 (sample-aligned, so exact);
time-series panels as range queries over the window with ``$__interval`` = 1 s.
"""

from __future__ import annotations

import math

import pytest

from agents.registry import AGENTS
from controller.platform.observability.history import STATUSES
from controller.platform.observability.metrics import BUCKETS
from tests.integration.observability import mix
from tests.integration.observability.conftest import SCRAPE_SECONDS, Scenario
from tests.integration.observability.prom import (
    has_number,
    load_dashboard,
    panel_queries,
    query_of,
    values,
)

DASHBOARD = load_dashboard()
QUERIES = list(panel_queries(DASHBOARD))


def instant(scenario: Scenario, title: str, ref_id: str = "A", **variables: str) -> list[dict]:
    query = query_of(DASHBOARD, title, ref_id)
    assert query.instant, f"{title} is a time series panel"
    expr = query.render(range_ms=scenario.range_ms, interval_s=SCRAPE_SECONDS, **variables)
    return scenario.api.instant(expr, at=scenario.t)


def series(scenario: Scenario, title: str, ref_id: str = "A", **variables: str) -> list[dict]:
    """A range panel over [T0 + 2 s, T] (aligned to end at T; the offset stays inside the window)."""
    query = query_of(DASHBOARD, title, ref_id)
    expr = query.render(range_ms=scenario.range_ms, interval_s=SCRAPE_SECONDS, **variables)
    steps = math.floor(scenario.t - scenario.t0) - 2
    return scenario.api.range(expr, scenario.t - steps * SCRAPE_SECONDS, scenario.t, SCRAPE_SECONDS)


def scalar(result: list[dict]) -> float:
    assert len(result) == 1, result
    return float(result[0]["value"][1])


class TestEveryQuery:
    @pytest.mark.parametrize("query", QUERIES, ids=[f"{q.panel}[{q.ref_id}]" for q in QUERIES])
    def test_returns_data(self, scenario, query):
        """Each panel target, rendered as Grafana would, returns at least one number from Prometheus."""
        expr = query.render(range_ms=scenario.range_ms, interval_s=SCRAPE_SECONDS)
        if query.instant:
            result = scenario.api.instant(expr, at=scenario.t)
        else:
            result = scenario.api.range(expr, scenario.t0, scenario.t, SCRAPE_SECONDS)
        assert has_number(result), f"{query.panel}: {expr} returned {result}"

    def test_variables_list_the_agents_and_targets(self, scenario):
        """The agent and target variables' label_values queries find every agent and target."""
        agent_var, target_var = DASHBOARD["templating"]["list"]
        assert agent_var["query"]["query"] == "label_values(sbx_agent_runs_total, agent)"
        agents = scenario.api.label_values("agent", "sbx_agent_runs_total")
        # The mix's agents, plus the platform's known agents exported as zero series.
        assert {"bank_parser", "toy"} <= set(agents) <= {*AGENTS, "toy"}
        targets = scenario.api.label_values("target", 'sbx_agent_runs_total{agent=~".*"}')
        assert targets == sorted(mix.TARGETS)


class TestSuccessRates:
    def test_overall_in_range_is_exact(self, scenario):
        """Overall success rate over the range is passed / (passed + failed) of the runs made in it."""
        expected = mix.success_rate(scenario.window)
        assert scalar(instant(scenario, "Success rate (selected range)")) == float(expected)

    def test_overall_all_time_counts_runs_before_scraping(self, scenario):
        """The all-time panel also counts the runs recorded before Prometheus ever scraped."""
        expected = mix.success_rate(scenario.all_runs)
        assert expected != mix.success_rate(scenario.window)
        assert scalar(instant(scenario, "Success rate (all recorded runs)")) == float(expected)

    def test_by_agent_and_target_is_exact(self, scenario):
        """Each (agent, target) with verified runs shows its exact fraction; unverified-only targets show none."""
        result = instant(scenario, "Success rate by target and agent (selected range)")
        got = values(result, "agent", "target")
        assert got == mix.rates_by_agent_target(scenario.window)
        assert ("bank_parser", "delta") not in got
        assert got[("bank_parser", "alpha")] == 0.75

    @pytest.mark.parametrize("variables", [{"target": "alpha"}, {"agent": "toy"}, {"target": "beta|gamma"}])
    def test_variables_filter(self, scenario, variables):
        """Choosing an agent or targets narrows the overall rate to exactly their runs."""
        chosen = [r for r in scenario.window
                  if all(getattr(r, k) in v.split("|") for k, v in variables.items())]
        expected = mix.success_rate(chosen)
        assert scalar(instant(scenario, "Success rate (selected range)", **variables)) == float(expected)

    def test_over_time_ends_at_the_all_time_rate_per_target(self, scenario):
        """The cumulative per-target series ends at each target's all-time rate and stays in [0, 1]."""
        result = series(scenario, "Success rate over time by target (all recorded runs)")
        last = {r["metric"]["target"]: float(r["values"][-1][1]) for r in result}
        for target in ("alpha", "beta", "gamma", "icici"):
            assert last[target] == float(mix.success_rate(scenario.all_runs, target=target))
        assert all(0 <= float(v) <= 1 for r in result for _, v in r["values"])


class TestCounts:
    def test_runs_by_status(self, scenario):
        """Runs by status over the range are the exact counts of the window's runs."""
        got = values(instant(scenario, "Runs by status (selected range)"), "status")
        expected = mix.status_counts(scenario.window)
        assert got == {(s,): float(expected.get(s, 0)) for s in STATUSES}  # every known status, at 0 too

    def test_runs_per_interval_add_up(self, scenario):
        """The per-interval bars of each status add up to that status's count in the window."""
        result = series(scenario, "Runs per interval by status")
        sums = {r["metric"]["status"]: sum(float(v) for _, v in r["values"]) for r in result}
        expected = mix.status_counts(scenario.window)
        assert {s: v for s, v in sums.items() if v} == {s: float(n) for s, n in expected.items()}

    def test_retries_by_failure_type(self, scenario):
        """Retries count each failed attempt that another attempt followed, by failure kind."""
        got = values(instant(scenario, "Retries by failure type (selected range)"), "reason")
        expected = mix.retry_counts(scenario.window)
        assert {k[0]: v for k, v in got.items() if v} == {k: float(v) for k, v in expected.items()}
        assert ("no_code",) in got and got[("no_code",)] == 0

    def test_mean_attempts_per_run(self, scenario):
        """Mean attempts per (agent, target) is exact."""
        got = values(instant(scenario, "Attempts per run (mean, selected range)"), "agent", "target")
        assert got == pytest.approx(mix.mean_attempts(scenario.window), rel=1e-12)

    def test_attempts_distribution(self, scenario):
        """The cumulative attempts buckets count the runs with at most N attempts."""
        got = values(instant(scenario, "Attempts per run (distribution, selected range)"), "le")
        attempts = [r.attempts for r in scenario.window]
        for bound in BUCKETS.attempts:
            assert got[(f"{float(bound)}",)] == sum(a <= bound for a in attempts)
        assert got[("+Inf",)] == len(attempts)

    def test_sandbox_outcomes(self, scenario):
        """Sandbox executions by outcome, including engine errors, are exact."""
        got = values(instant(scenario, "Sandbox executions by outcome (selected range)"), "outcome")
        expected = mix.sandbox_outcomes(scenario.window)
        assert got == {(o,): float(expected.get(o, 0))
                       for o in ("ok", "nonzero_exit", "timeout", "oom", "engine_error")}

    def test_timeouts_and_oom_kills(self, scenario):
        """The timeout and OOM stats equal the sandbox executions killed at those limits."""
        expected = mix.sandbox_outcomes(scenario.window)
        assert scalar(instant(scenario, "Sandbox timeouts and OOM kills (selected range)", "A")) == expected["timeout"]
        assert scalar(instant(scenario, "Sandbox timeouts and OOM kills (selected range)", "B")) == expected["oom"]

    def test_timeouts_and_oom_kills_over_time_add_up(self, scenario):
        """The per-interval timeout and OOM bars add up to the window's counts."""
        result = series(scenario, "Sandbox timeouts and OOM kills over time")
        sums = {r["metric"]["outcome"]: sum(float(v) for _, v in r["values"]) for r in result}
        expected = mix.sandbox_outcomes(scenario.window)
        assert sums == {"timeout": expected["timeout"], "oom": expected["oom"]}


class TestDurations:
    @pytest.mark.parametrize(("ref_id", "q"), [("A", 0.5), ("B", 0.9), ("C", 0.99)])
    def test_run_duration_percentiles(self, scenario, ref_id, q):
        """Run duration percentiles equal histogram_quantile over the window's run durations."""
        got = scalar(instant(scenario, "Run duration percentiles (selected range)", ref_id))
        durations = [r.duration_seconds for r in scenario.window]
        assert got == pytest.approx(mix.histogram_quantile(q, durations, BUCKETS.run_seconds), rel=1e-9)

    @pytest.mark.parametrize(("ref_id", "q"), [("A", 0.5), ("B", 0.9), ("C", 0.99)])
    def test_sandbox_duration_percentiles(self, scenario, ref_id, q):
        """Sandbox duration percentiles equal histogram_quantile over the window's executions."""
        got = scalar(instant(scenario, "Sandbox duration percentiles (selected range)", ref_id))
        durations = [s.seconds for r in scenario.window for s in r.sandbox]
        assert got == pytest.approx(mix.histogram_quantile(q, durations, BUCKETS.sandbox_seconds), rel=1e-9)

    def test_node_duration_p95(self, scenario):
        """Each node's p95 equals histogram_quantile over that node's executions in the window."""
        got = values(instant(scenario, "Node duration p95 (selected range)"), "node")
        for node in ("analyze", "execute", "finalize"):
            observed = [n.seconds for r in scenario.window for n in r.nodes if n.node == node]
            assert got[(node,)] == pytest.approx(mix.histogram_quantile(0.95, observed, BUCKETS.node_seconds), rel=1e-9)

    def test_time_since_last_success(self, scenario):
        """Time since last success is T minus the end of each target's last passing run."""
        got = values(instant(scenario, "Time since last success"), "agent", "target")
        last: dict[tuple[str, str], float] = {}
        for run in scenario.all_runs:
            if run.status == "passed":
                key = (run.agent, run.target)
                last[key] = max(last.get(key, 0.0), run.finished_at)
        assert got.keys() == last.keys()
        for key, finished in last.items():
            assert got[key] == pytest.approx(scenario.t - finished, abs=1e-3)


class TestPushgateway:
    def test_last_run_panel_shows_the_pushed_result(self, scenario):
        """The CLI run pushed its result; the Pushgateway panel shows icici's last run as passed (1)."""
        got = values(instant(scenario, "Last run per target (Pushgateway)"), "agent", "target")
        assert got == {("bank_parser", "icici"): 1.0}

    def test_pushed_group_has_bounded_labels(self, scenario):
        """The pushed series carry job, agent and target (honor_labels), never a run id or instance."""
        (series_,) = scenario.api.instant("sbx_agent_last_run_success", at=scenario.t)
        labels = series_["metric"]
        assert labels["job"] == "sbx_agent_run"
        assert (labels["agent"], labels["target"]) == ("bank_parser", "icici")
        assert "run_id" not in labels and labels.get("instance", "") == ""
        run = scenario.window[-1]
        (stamp,) = scenario.api.instant('sbx_agent_last_run_timestamp_seconds{job="sbx_agent_run"}', at=scenario.t)
        assert float(stamp["value"][1]) == pytest.approx(run.finished_at, abs=1e-3)
