"""A run's summary.json as the run page shows it: the published artefact named as its agent names it
(issue 41: a blueprint run's summary said "parser: runs/…/report.md")."""

from __future__ import annotations

from controller.entry.console.views.summary import summary_facts

SUMMARY = {"status": "passed", "attempts": 2, "max_attempts": 3, "parser_path": "runs/r/report.md", "coder": "offline"}


def test_a_blueprint_runs_artefact_is_its_report():
    facts = dict(summary_facts(SUMMARY, "blueprint"))
    assert facts["report"] == "runs/r/report.md" and "parser" not in facts


def test_a_bank_parser_runs_artefact_is_its_parser():
    assert dict(summary_facts({**SUMMARY, "parser_path": "custom_parsers/x.py"}, "bank_parser"))["parser"] == \
        "custom_parsers/x.py"


def test_an_unknown_agent_says_artefact():
    assert "artefact" in dict(summary_facts(SUMMARY, "gone"))
