"""Smaller defects of issue 43, each pinned: the compare picker, report headings, the check's status line."""

from __future__ import annotations

import re
import shutil

from controller.entry.console.views.markdown import markdown_html
from tests.unit.controller.entry.console.conftest import Console


def test_the_compare_picker_does_not_offer_the_run_itself(console: Console):
    console.run("run-a")
    console.run("run-b")
    html = console.client.get("/compare?a=run-a").text
    assert "b=run-b" in html and "b=run-a" not in html
    assert '<option value="run-a">' not in html


def test_a_reports_headings_sit_below_its_section():
    """A report's # is an h3 in the page's h2 section, never a second h1; ###### stays h6."""
    html = str(markdown_html("# Acme\n\n## Findings\n\n###### small\n"))
    assert "<h3>Acme</h3>" in html and "<h4>Findings</h4>" in html and "<h6>small</h6>" in html
    assert not re.search(r"<h[12]\b", html)


def test_a_checks_waiting_line_names_the_status_where_the_script_updates_it(console: Console):
    """The line is rendered while queued; console.js rewrites every [data-status-text] on a status event
    (the browser test in tests/integration/console/test_layout.py sees it say running)."""
    console.run("chk-1", status="queued", options={"kind": "check"})
    html = console.client.get("/checks/chk-1").text
    assert "The check is <span data-status-text>queued</span>" in html


def test_an_ended_intake_run_does_not_say_no_attempt_yet(console: Console):
    console.run("run-i", agent="intake", target="intake-cross-node", status="passed")
    shutil.rmtree(console.runs_dir / "run-i" / "attempts")  # a conversation has none
    html = console.client.get("/runs/run-i").text
    assert "No attempt yet" not in html and "a conversation has turns, not attempts" in html


def test_a_run_that_ended_without_an_attempt_says_so(console: Console):
    console.run("run-e", status="error")
    shutil.rmtree(console.runs_dir / "run-e" / "attempts")  # stopped before its first attempt
    html = console.client.get("/runs/run-e").text
    assert "No attempt yet" not in html and "the run ended before its first attempt" in html
