"""A small client of Prometheus' HTTP API, and the dashboard's queries as Grafana would send them."""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.platform.settings import PROJECT_ROOT

DASHBOARD = PROJECT_ROOT / "deploy" / "grafana" / "dashboards" / "sandloop-agent-runs.json"


class PrometheusAPI:
    """GETs against ``/api/v1``; every answer must have status ``success``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def get(self, path: str, params: list[tuple[str, str]] | None = None) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.base_url}{path}{query}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/-/ready", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def instant(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = [("query", expr)] + ([("time", _ts(at))] if at is not None else [])
        data = self.get("/api/v1/query", params)
        assert data["resultType"] == "vector", data
        return data["result"]

    def range(self, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        params = [("query", expr), ("start", _ts(start)), ("end", _ts(end)), ("step", f"{step:g}")]
        data = self.get("/api/v1/query_range", params)
        assert data["resultType"] == "matrix", data
        return data["result"]

    def raw_samples(self, selector: str, window: str = "15m") -> list[tuple[float, float]]:
        """The raw (timestamp, value) samples of the first series ``selector`` matches."""
        data = self.get("/api/v1/query", [("query", f"{selector}[{window}]")])
        assert data["resultType"] == "matrix" and data["result"], data
        return [(float(t), float(v)) for t, v in data["result"][0]["values"]]

    def label_values(self, label: str, match: str) -> list[str]:
        return self.get(f"/api/v1/label/{label}/values", [("match[]", match)])


def _ts(seconds: float) -> str:
    return f"{seconds:.3f}"


def values(result: list[dict[str, Any]], *labels: str) -> dict[tuple[str, ...], float]:
    """An instant result as {label values: float}."""
    return {tuple(r["metric"].get(name, "") for name in labels): float(r["value"][1]) for r in result}


def has_number(result: list[dict[str, Any]]) -> bool:
    """Whether an instant or range result holds at least one value that is not NaN."""
    samples = [r["value"] for r in result if "value" in r] + [v for r in result for v in r.get("values", [])]
    return any(not math.isnan(float(v)) for _, v in samples)


@dataclass(frozen=True)
class PanelQuery:
    """One target of one dashboard panel."""

    panel: str
    ref_id: str
    expr: str
    instant: bool

    def render(self, *, range_ms: int, interval_s: int, agent: str = ".*", target: str = ".*") -> str:
        """The expression with Grafana's variables substituted as Grafana would."""
        return (self.expr.replace("$__rate_interval", f"{4 * interval_s}s")
                .replace("$__range", f"{range_ms}ms")
                .replace("$__interval", f"{interval_s}s")
                .replace("$agent", agent).replace("$target", target))


def load_dashboard(path: Path = DASHBOARD) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def panel_queries(dashboard: dict[str, Any]) -> Iterator[PanelQuery]:
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield PanelQuery(panel["title"], target["refId"], target["expr"], bool(target.get("instant")))


def query_of(dashboard: dict[str, Any], title: str, ref_id: str = "A") -> PanelQuery:
    for query in panel_queries(dashboard):
        if query.panel == title and query.ref_id == ref_id:
            return query
    raise KeyError(f"no panel {title!r} target {ref_id}")
