"""The stack's files, checked without Docker: the dashboard's JSON model and queries, the
Grafana provisioning, the Prometheus config and the compose files. (The queries' numbers are
checked against a real Prometheus in tests/integration/observability.)"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from controller.platform.observability import metrics, push
from controller.platform.settings import PROJECT_ROOT

DEPLOY = PROJECT_ROOT / "deploy"
DASHBOARD = json.loads((DEPLOY / "grafana" / "dashboards" / "sandloop-agent-runs.json").read_text())
EXPORTED = {getattr(metrics, n) for n in dir(metrics) if n.isupper() and isinstance(getattr(metrics, n), str)
            and getattr(metrics, n).startswith("sbx_")}
PUSHED = {getattr(push, n) for n in dir(push) if n.isupper() and str(getattr(push, n)).startswith("sbx_agent_")}
HISTOGRAMS = {metrics.RUN_ATTEMPTS, metrics.RUN_DURATION, metrics.NODE_DURATION, metrics.SANDBOX_DURATION}
EXPRS = [t["expr"] for p in DASHBOARD["panels"] for t in p["targets"]]


def metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\b(sbx_[a-z_]+)", expr))


def exported_series() -> set[str]:
    series = set(EXPORTED) | PUSHED
    for name in HISTOGRAMS:
        series |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return series


class TestDashboard:
    def test_model_essentials(self):
        """Fixed uid, null id, tags, a schemaVersion Grafana 11 migrates, and no Angular 'graph' panels."""
        assert DASHBOARD["uid"] == "sandloop-agent-runs" and DASHBOARD["id"] is None
        assert 37 <= DASHBOARD["schemaVersion"] <= 42 and DASHBOARD["tags"]
        assert all(p["type"] in {"stat", "timeseries", "table", "bargauge"} for p in DASHBOARD["panels"])
        assert len({p["id"] for p in DASHBOARD["panels"]}) == len(DASHBOARD["panels"])

    def test_every_panel_uses_the_provisioned_data_source(self):
        """Every panel and target refers to the data source uid 'prometheus' that provisioning defines."""
        for panel in DASHBOARD["panels"]:
            assert panel["datasource"] == {"type": "prometheus", "uid": "prometheus"}
            assert all(t["datasource"]["uid"] == "prometheus" for t in panel["targets"])

    @pytest.mark.parametrize("expr", EXPRS)
    def test_every_expression_names_only_exported_metrics(self, expr):
        """Each query uses metrics the exporter or the push produce, and the agent/target variables where they apply."""
        names = metric_names(expr)
        assert names and names <= exported_series(), names - exported_series()
        assert '$agent' in expr

    def test_required_panels_exist(self):
        """The issue's panels: success rates, runs by status over time, attempts, retries, durations, timeouts, OOM."""
        titles = " | ".join(p["title"] for p in DASHBOARD["panels"]).lower()
        for words in ("success rate (selected", "success rate by target and agent", "runs per interval by status",
                      "attempts per run", "retries by failure type", "run duration percentiles",
                      "sandbox duration percentiles", "timeouts and oom"):
            assert words in titles, words

    def test_variables_for_agent_and_target(self):
        """agent and target are multi-value query variables with All = '.*'."""
        variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
        assert set(variables) == {"agent", "target"}
        for variable in variables.values():
            assert variable["multi"] and variable["includeAll"] and variable["allValue"] == ".*"
            assert variable["datasource"]["uid"] == "prometheus"

    def test_panels_do_not_overlap(self):
        """No two panels share a grid cell."""
        cells: set[tuple[int, int]] = set()
        for panel in DASHBOARD["panels"]:
            g = panel["gridPos"]
            mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
            assert g["x"] + g["w"] <= 24 and not (cells & mine), panel["title"]
            cells |= mine


class TestProvisioningAndConfig:
    def test_datasource_and_dashboard_provider(self):
        """The data source has the fixed uid and the scrape interval; the provider points at the dashboards mount."""
        source = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yaml").read_text())
        (ds,) = source["datasources"]
        assert (ds["uid"], ds["type"], ds["url"]) == ("prometheus", "prometheus", "http://prometheus:9090")
        prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
        assert ds["jsonData"]["timeInterval"] == prometheus["global"]["scrape_interval"]
        provider = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/sandloop.yaml").read_text())
        assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"

    def test_prometheus_scrapes_exporter_and_pushgateway_with_honor_labels(self):
        """Jobs sbx and pushgateway exist; only the Pushgateway job honours pushed labels."""
        jobs = {j["job_name"]: j for j in yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["scrape_configs"]}
        assert jobs["sbx"]["static_configs"][0]["targets"] == ["exporter:9466"]
        assert jobs["pushgateway"]["honor_labels"] is True and not jobs["sbx"].get("honor_labels")

    def test_compose_files(self):
        """Official images by default; the Debian override builds Prometheus and the Pushgateway and parks Grafana."""
        base = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
        assert set(base) == {"exporter", "prometheus", "pushgateway", "grafana"}
        assert "prom/prometheus" in base["prometheus"]["image"] and "grafana/grafana" in base["grafana"]["image"]
        assert all(port.startswith("127.0.0.1:") for s in base.values() for port in s.get("ports", []))
        debian = yaml.safe_load((DEPLOY / "docker-compose.debian.yml").read_text())["services"]
        assert debian["prometheus"]["build"]["context"] == "./images/prometheus"
        assert debian["pushgateway"]["build"]["context"] == "./images/pushgateway"
        assert debian["grafana"]["profiles"] == ["grafana"]
