"""A run page's own sections come from what its agent declares (``AgentInfo.sections``), not from
its name (issue 44: the console tested ``agent == "blueprint"`` and read the blueprint's files by
their names, which the import contracts cannot see)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from agents.base import RunSections
from agents.registry import AGENTS
from controller.platform.settings import PROJECT_ROOT
from tests.unit.controller.entry.console.conftest import Console

VIEWS = PROJECT_ROOT / "controller" / "entry" / "console" / "views"


def test_the_console_views_name_no_agent():
    """No string in the console's views is an agent's name: what a page shows of an agent, the agent says."""
    named = {(path.name, node.value) for path in VIEWS.glob("*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and node.value in AGENTS}
    assert named == set()


def _declare(monkeypatch: pytest.MonkeyPatch, agent: str, sections: RunSections | None) -> None:
    info = dataclasses.replace(AGENTS[agent].info, sections=sections)
    monkeypatch.setattr(AGENTS[agent], "info", info)


def test_a_declared_report_and_verdicts_are_shown_for_any_agent(console: Console, monkeypatch: pytest.MonkeyPatch):
    """The bank parser declares no sections; made to declare a report and verdicts, its page shows them."""
    console.sign_in(console.token("alice"))
    console.run("r1", "alice")
    console.write("r1", "attempts/1/notes.md", "# Notes\n\nthe *first* try")
    console.write("r1", "attempts/1/judged.json", {"passed": False, "issues": [{"code": "E1", "message": "too short"}]})
    assert 'id="report"' not in console.client.get("/runs/r1").text
    _declare(monkeypatch, "bank_parser", RunSections(report="notes.md", verdicts="judged.json"))
    page = console.client.get("/runs/r1").text
    assert 'id="report"' in page and "<em>first</em>" in page and "(attempt 1, not final)" in page
    assert "too short" in page and "E1" in page
    assert 'id="steps-h"' not in page and 'id="given-h"' not in page  # not declared: not shown


def test_the_blueprint_declares_its_report_verdicts_steps_and_lessons():
    assert AGENTS["blueprint"].info.sections == RunSections(report="report.md", verdicts="qa.json",
                                                            lessons="lessons.md", steps=True)
    assert {name for name, agent in AGENTS.items() if agent.info.sections is not None} == {"blueprint"}


def test_a_run_of_an_agent_without_sections_reads_no_agents_file(console: Console, tmp_path: Path):
    console.sign_in(console.token("bob"))
    console.run("r2", "bob")
    console.write("r2", "report.md", "# not the bank parser's")
    assert "not the bank parser" not in console.client.get("/runs/r2").text
