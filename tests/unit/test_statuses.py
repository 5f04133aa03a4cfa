"""Every list of run statuses is the one table's (agents/ports/status.py, issue 41).

A ``no-go`` verdict crashed the run history because its list of statuses was written out by hand.
Each test reads one place that enumerates statuses and compares it with the table; the last one
greps the source for a hand-written list of three or more statuses outside the table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from agents.ports import status as statuses
from agents.ports.outcome import RunSummary

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_defines_no_go_as_a_verdict_that_exits_1() -> None:
    assert "no-go" in statuses.VERDICTS
    assert statuses.EXIT_CODES["no-go"] == 1
    assert statuses.stored_status("no-go") == "no-go"
    assert "no-go" in statuses.TERMINAL and "no-go" in statuses.RUN_STATUSES
    assert "no-go" not in statuses.SUCCESS | statuses.FAILURE  # a decision, not a failure of the work
    assert statuses.stored_status("something new") == "error"


@pytest.mark.parametrize("name", statuses.FINAL)
def test_summary_exit_code_follows_the_table(name: str) -> None:
    summary = RunSummary("r", "a", "t", name, 1, 3, "", "", 0.0, 0.0, "offline")
    assert summary.exit_code == statuses.EXIT_CODES[name]


@pytest.mark.parametrize("name", statuses.FINAL)
def test_the_run_history_records_and_counts_every_final_status(name: str, tmp_path: Path) -> None:
    from controller.platform.observability.history import STATUSES, HistoryStore, RunRecord
    from controller.platform.observability.metrics import (
        BUCKETS,
        RUNS_TOTAL,
        KnownLabels,
        history_families,
    )

    assert tuple(STATUSES) == statuses.FINAL
    store = HistoryStore(tmp_path / "history.sqlite")
    store.record(RunRecord("r1", "blueprint", "t", name, 1, 3, 0.0, 1.0, 1.0))
    families = {f.name: f for f in history_families(store.snapshot(BUCKETS), KnownLabels())}
    runs = families[RUNS_TOTAL.removesuffix("_total")]
    counted = {s.labels["status"]: s.value for s in runs.samples if s.name.endswith("_total")}
    assert counted.get(name) == 1.0
    assert set(counted) >= set(statuses.FINAL)  # the zero series of every status too


def test_the_pushgateway_gauges_name_every_final_status() -> None:
    from controller.platform.observability.history import RunRecord
    from controller.platform.observability.push import LAST_RUN_STATUS, run_registry

    registry = run_registry(RunRecord("r1", "blueprint", "t", "no-go", 0, 3, 0.0, 1.0, 1.0), None)
    values = {s.labels["status"]: s.value for m in registry.collect() if m.name == LAST_RUN_STATUS
              for s in m.samples}
    assert set(values) == set(statuses.FINAL) and values["no-go"] == 1


def test_the_store_and_the_api_use_the_tables_run_statuses() -> None:
    from controller.entry.service.history import HistoryEntry
    from controller.entry.service.schemas import RunOut
    from controller.platform.store import OPEN, TERMINAL, RunStatus
    from controller.platform.store.sql import ENDED, OPEN_ROWS

    assert get_args(RunStatus) == statuses.RUN_STATUSES
    assert set(ENDED) == set(TERMINAL) == statuses.TERMINAL
    assert set(OPEN_ROWS) == set(OPEN) == statuses.OPEN
    schema = RunOut.model_json_schema()
    assert set(schema["properties"]["status"]["enum"]) == set(statuses.RUN_STATUSES)  # the OpenAPI enum
    assert "no-go" in HistoryEntry.model_json_schema()["properties"]["status"]["description"]


@pytest.mark.parametrize("name", statuses.VERDICTS)
def test_the_service_stores_each_verdict_as_the_table_says(name: str) -> None:
    from controller.entry.service import client
    from controller.runner.dispatch import child

    stored = child.status_of(statuses.EXIT_CODES[name], {"status": name, "last_problem": "why"})
    assert stored == statuses.BY_NAME[name].stored_as
    assert client.exit_code({"status": stored, "exit_code": statuses.EXIT_CODES[name]}) == statuses.EXIT_CODES[name]
    assert child.end_line(stored, 1, {"status": name, "last_problem": "why"}, "") == ("why" if name == "no-go" else "")


def test_the_batch_table_and_the_target_page_use_the_table() -> None:
    from controller.entry import batch
    from controller.entry.console.views import target_page

    assert set(statuses.VERDICTS) == batch.VERDICTS
    assert batch.outcome("t", 1, {"status": "no-go"}, 1.0).status == "no-go"
    assert target_page.SUCCESS == statuses.SUCCESS
    assert target_page.VERDICTS == statuses.SUCCESS | statuses.FAILURE


def test_the_console_has_a_badge_and_a_filter_for_every_status() -> None:
    from controller.entry.console.views.run_rows import STATUSES

    assert STATUSES == statuses.RUN_STATUSES
    css = (ROOT / "controller/entry/console/static/console.css").read_text(encoding="utf-8")
    coloured = set(re.findall(r"\.s-([a-z-]+)", css))
    missing = [s.name for s in statuses.STATUSES if s.name not in coloured]
    assert not missing, f"no badge colour in console.css for {missing}"


def test_the_dashboards_success_rate_counts_the_tables_statuses() -> None:
    text = (ROOT / "deploy/grafana/dashboards/sandloop-agent-runs.json").read_text(encoding="utf-8")
    exprs = [t["expr"] for panel in json.loads(text)["panels"] for t in panel.get("targets", [])]
    regexes = {frozenset(m.split("|")) for e in exprs if "sbx_agent_runs_total" in e
               for m in re.findall(r'status=~"([^"]+)"', e)}
    assert regexes == {statuses.SUCCESS, statuses.SUCCESS | statuses.FAILURE}


#: Hand-written lists that are not lists of run statuses, each checked to hold known names only.
ALLOWED = {
    "agents/bank_parser/report.py",  # the bank parser's own verdict lines: a subset of its verdicts
    "agents/bank_parser/state.py",  # the bank parser's FinalStatus: the verdicts it can reach
    "controller/entry/batch.py",  # STATUS_BY_EXIT: the status of a child that left no summary.json
    "controller/platform/store/migrations/versions/r0002_journal_keys_uploads.py",  # history, frozen
}
_QUOTED = re.compile(r"""["']([a-z-]+)["']""")
_GROUP = re.compile(r"[\[({][^\[\](){}]*[\])}]")


def test_no_other_module_writes_out_a_list_of_statuses() -> None:
    names = set(statuses.BY_NAME)
    found: dict[str, set[str]] = {}
    for root in ("agents", "controller"):
        for path in (ROOT / root).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative == "agents/ports/status.py":
                continue
            for group in _GROUP.finditer(path.read_text(encoding="utf-8")):
                listed = set(_QUOTED.findall(group.group())) & names
                if len(listed) >= 3:
                    found.setdefault(relative, set()).update(listed)
    assert set(found) <= ALLOWED, f"derive these from agents/ports/status.py: {sorted(set(found) - ALLOWED)}"
    assert all(listed <= names for listed in found.values())
