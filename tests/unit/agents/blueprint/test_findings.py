"""Issue 33's findings on the blueprint agent, one test each: each failed on the code the issue was
filed against and passes now. The manager made no go/no-go decision (a report was written when
every research tool failed); ``scenario`` was a label nothing used; the offline writer repeated
each section's guidance as its text, ignored the blueprint's instructions, computed "trends" over
data that is not a time series and cut tables without saying so.

Sandbox calls go to the test double of tests/unit/agents/blueprint/fakes.py (no code runs).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agents.blueprint import directives
from agents.blueprint.agent import BlueprintAgent
from agents.blueprint.model import Blueprint
from agents.blueprint.research import Finding
from agents.blueprint.scenarios import known
from agents.blueprint.writer import time_column, write_report
from agents.ports.config import AgentConfig
from agents.ports.run import RunContext
from controller.platform.artefacts import RunArtefacts
from controller.platform.settings import PROJECT_ROOT
from tests.unit.agents.blueprint.fakes import Answer, ScriptedCallSandbox

AGENT = BlueprintAgent()


def target(tmp_path: Path, name: str, edit: Any = None, files: dict[str, str] | None = None) -> AgentConfig:
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / name, data / name)
    path = data / name / "blueprint.json"
    document = json.loads(path.read_text())
    if edit is not None:
        edit(document)
    path.write_text(json.dumps(document))
    for file, text in (files or {}).items():
        (data / name / file).write_text(text)
    return AgentConfig(data_dir=data, runs_dir=tmp_path / "runs")


def run(cfg: AgentConfig, name: str, sandbox: Any) -> tuple[Any, Path]:
    plan = AGENT.plan(name, cfg, None)
    run_dir = cfg.runs_dir / "unit"
    summary = AGENT.run(plan, RunContext(run_id="unit", config=cfg, sandbox=sandbox, image="img",
                                         artefacts=RunArtefacts(run_dir), on_event=lambda _e: None))
    return summary, run_dir


class TestGoNoGo:
    def test_every_tool_failing_is_a_no_go_not_a_report(self, tmp_path):
        """candidate-brief with its file tool's input unreadable and its code tool timing out."""
        cfg = target(tmp_path, "candidate-brief", files={"candidate.json": "{not json"})
        summary, run_dir = run(cfg, "candidate-brief", ScriptedCallSandbox({"match": [Answer(timed_out=True)]}))
        assert summary.status == "no-go" and summary.exit_code == 1
        assert summary.lines() == ["", "NO-GO: the candidate-brief workflow stopped before writing: every research "
                                       "tool failed (candidate: candidate.json: " + summary.last_problem.split(
                                           "candidate.json: ", 1)[1]]
        assert not list(run_dir.rglob("report*.md")) and (run_dir / "no-go.txt").is_file()

    def test_an_empty_required_input_stops_before_research(self, tmp_path):
        """A required tool whose file holds no row: no tool is called, no report written."""
        def require(document: dict) -> None:
            document["tools"][1]["required"] = True
        cfg = target(tmp_path, "market-scan", require, {"competitors.csv": "company,country,share_pct,focus\n"})
        sandbox = ScriptedCallSandbox({})
        summary, run_dir = run(cfg, "market-scan", sandbox)
        assert summary.status == "no-go" and "competitors.csv is empty" in summary.last_problem
        assert sandbox.specs == [] and not list(run_dir.rglob("report*.md"))

    def test_no_tool_at_all_is_a_no_go(self, tmp_path):
        def no_tools(document: dict) -> None:
            document["tools"] = []
            for section in document["sections"]:
                section["tools"] = []
        cfg = target(tmp_path, "acme-research", no_tools)
        summary, _ = run(cfg, "acme-research", ScriptedCallSandbox({}))
        assert summary.status == "no-go" and "no research tool" in summary.last_problem


class TestScenario:
    def test_a_scenario_supplies_default_steps(self):
        """scenario was a label nothing used; a blueprint without sections gets the template's."""
        blueprint = Blueprint.model_validate({
            "name": "w", "scenario": "company_research", "title": "T", "subject": "Acme",
            "tools": [{"name": "profile", "files": ["c.json"]}, {"name": "news", "files": ["n.json"]},
                      {"name": "patents", "files": ["p.json"]}]})
        assert [(s.title, s.tools) for s in blueprint.sections] == [
            ("Company overview", ["profile"]), ("Recent developments", ["news"]), ("Other findings", ["patents"])]
        assert blueprint.instructions and set(known()) >= {"custom", "company_research", "job_candidate",
                                                             "market_analysis"}

    def test_an_unknown_scenario_is_one_line(self):
        with pytest.raises(ValueError, match="unknown scenario 'nope' \\(scenarios: custom, company_research"):
            Blueprint.model_validate({"name": "w", "scenario": "nope", "title": "T", "subject": "A",
                                      "sections": [{"title": "S"}]})


ROWS = [{"company": n, "share_pct": s, "country": c} for n, s, c in
        [("Beta", "9.1", "Spain"), ("Alpha", "21.5", "Germany"), ("Gamma", "4.0", "India"), ("Delta", "12.0", "Peru")]]
YEARS = [{"year": str(y), "revenue": str(r)} for y, r in [(2021, 100), (2022, 110), (2023, 121)]]


def finding(tool: str, value: Any) -> Finding:
    return Finding(tool=tool, ok=True, value=value, error="", seconds=0.0, sandboxed=False)


def blueprint(guidance: str, instructions: list[str] | None = None) -> Blueprint:
    return Blueprint.model_validate({
        "name": "w", "title": "T", "subject": "Acme", "instructions": instructions or [],
        "tools": [{"name": "rows", "files": ["r.csv"]}, {"name": "years", "files": ["y.csv"]}],
        "sections": [{"title": "Rows", "tools": ["rows"], "guidance": guidance},
                     {"title": "Years", "tools": ["years"], "guidance": "Revenue by year, the trend over the years."}]})


class TestOfflineWriter:
    def test_guidance_is_followed_not_echoed(self):
        """The section's guidance was its text; now it orders the rows and is not in the report."""
        guidance = "Every competitor with its share, largest share first."
        report = write_report(blueprint(guidance), [finding("rows", ROWS), finding("years", YEARS)], [])
        assert guidance not in report and "Revenue by year" not in report
        rows = [line for line in report.splitlines()
                if line.startswith("| ") and "company" not in line and "---" not in line]
        assert [r.split(" | ")[0] for r in rows[:4]] == ["| Alpha", "| Delta", "| Beta", "| Gamma"]

    def test_instructions_are_followed_not_echoed(self):
        """The blueprint's instructions were ignored (only an LLM writer got them)."""
        notes = [directives.note("Write for an investor who has never heard of the company"),
                 directives.note("Keep every figure as the data states it")]
        facts = finding("rows", {"founded": 1987, "margin": 0.123456})
        report = write_report(blueprint(""), [facts], notes)
        assert "Acme in brief: founded 1987" in report and "0.123456" in report
        assert "never heard" not in report and "as the data states" not in report

    def test_a_trend_only_over_time_ordered_rows(self):
        """Trends were computed over any table (first row to last) in full mode."""
        report = write_report(blueprint("all"), [finding("rows", ROWS), finding("years", YEARS)],
                              [directives.make("detail")])
        assert "Revenue went from 100 in 2021 to 121 in 2023 (+21.0%)." in report
        assert "Share pct went from" not in report
        assert time_column(ROWS, ["company", "share_pct", "country"]) is None
        assert time_column(YEARS, ["year", "revenue"]) == "year"

    def test_a_shortened_table_says_so(self):
        """Tables were cut to 3 rows without saying so."""
        report = write_report(blueprint("The competitors."), [finding("rows", ROWS)], [])
        assert "_1 of 4 rows left out._" in report
