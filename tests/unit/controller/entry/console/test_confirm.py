"""Destroying asks first: Cancel and Forget are a confirmation form (no script needed, CSRF-guarded).

Issue 43: one click cancelled a run or forgot a target's history, and a stale Cancel on a run that
had ended meanwhile answered a bare "Conflict" page. Now the button leads to a question page whose
form posts ``confirm=yes`` with the CSRF token; a POST without it only asks; a run that has ended
shows its own page saying nothing was cancelled. Errors are styled as errors, not as notices.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.controller.entry.console.conftest import Console

STYLES = Path(__file__).parents[5] / "controller" / "entry" / "console" / "static" / "console.css"


def _rule(selector: str) -> str:
    found = re.search(r"(?m)^" + re.escape(selector) + r" \{([^}]*)\}", STYLES.read_text())
    assert found, selector
    return found.group(1)


@pytest.mark.parametrize("page, question", [("/runs/run-q", "/runs/run-q/cancel"),
                                             ("/targets/bank_parser/icici", "/targets/bank_parser/icici/forget")])
def test_the_button_is_a_link_to_a_question_not_a_one_click_form(console: Console, page: str, question: str):
    console.run("run-q", status="queued")
    html = console.client.get(page).text
    assert f'href="{question}"' in html and f'action="{question}"' not in html


class TestCancel:
    def test_the_question_is_a_csrf_guarded_form_and_cancels_nothing(self, console: Console):
        console.run("run-q", status="queued")
        response = console.client.get("/runs/run-q/cancel")
        assert response.status_code == 200 and "Cancel run run-q?" in response.text
        form = response.text[response.text.index("<form method=\"post\" action=\"/runs/run-q/cancel\""):]
        assert 'name="csrf"' in form and 'name="confirm" value="yes"' in form and 'href="/runs/run-q"' in form
        assert console.store.get("run-q").status == "queued"

    def test_a_post_without_confirm_only_asks(self, console: Console):
        console.run("run-q", status="queued")
        response = console.client.post("/runs/run-q/cancel", data={"csrf": console.csrf("/submit")})
        assert response.status_code == 200 and "Cancel run run-q?" in response.text
        assert console.store.get("run-q").status == "queued"

    def test_confirmed_it_cancels(self, console: Console):
        console.run("run-q", status="queued")
        response = console.client.post("/runs/run-q/cancel", data={"csrf": console.csrf("/submit"), "confirm": "yes"},
                                       follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/runs/run-q"
        assert console.store.get("run-q").status == "cancelled"

    def test_a_stale_cancel_shows_the_run_page_with_a_clear_message(self, console: Console):
        """The run ended between the question and the answer: its page, saying nothing was cancelled."""
        console.run("run-p", status="passed")
        response = console.client.post("/runs/run-p/cancel", data={"csrf": console.csrf("/submit"), "confirm": "yes"})
        assert response.status_code == 200 and response.url.path == "/runs/run-p"
        assert "Conflict" not in response.text and "<h1>Run" in response.text
        assert "had already ended (passed) when Cancel was sent: nothing was cancelled" in response.text
        assert console.store.get("run-p").status == "passed"

    def test_the_question_of_an_ended_run_is_its_page(self, console: Console):
        console.run("run-p", status="failed")
        response = console.client.get("/runs/run-p/cancel")
        assert response.url.path == "/runs/run-p" and "had already ended (failed)" in response.text


class TestForget:
    def test_the_question_then_the_confirmed_form_forgets(self, console: Console):
        console.run("run-old", status="failed")
        question = console.client.get("/targets/bank_parser/icici/forget")
        assert question.status_code == 200 and "Forget the lessons and ended service runs of icici" in question.text
        assert 'name="confirm" value="yes"' in question.text and console.store.get("run-old") is not None
        unconfirmed = console.client.post("/targets/bank_parser/icici/forget", data={"csrf": console.csrf("/submit")})
        assert unconfirmed.status_code == 200 and console.store.get("run-old") is not None
        done = console.client.post("/targets/bank_parser/icici/forget",
                                   data={"csrf": console.csrf("/submit"), "confirm": "yes"}, follow_redirects=False)
        assert done.status_code == 303 and "forgotten=" in done.headers["location"]
        assert console.store.get("run-old") is None

    def test_a_confirmed_forget_without_csrf_is_refused(self, console: Console):
        console.run("run-old", status="failed")
        response = console.client.post("/targets/bank_parser/icici/forget", data={"confirm": "yes"})
        assert response.status_code == 403 and console.store.get("run-old") is not None

    def test_a_viewer_who_is_not_admin_gets_no_question(self, console: Console):
        console.sign_in(console.token("bob"))
        assert console.client.get("/targets/bank_parser/icici/forget").status_code == 403


class TestErrorsLookLikeErrors:
    def test_a_failed_runs_error_is_a_problem_not_a_notice(self, console: Console):
        console.run("run-f", status="failed")
        html = console.client.get("/runs/run-f").text
        assert re.search(r'<p id="run-notice" class="problem"', html)

    def test_a_queued_runs_notice_stays_a_notice(self, console: Console):
        console.run("run-q", status="queued")
        assert '<p id="run-notice" class="notice"' in console.client.get("/runs/run-q").text

    def test_problems_have_the_error_colours_and_notices_do_not(self):
        assert "var(--bad-bg)" in _rule(".problem") and "var(--bad)" in _rule(".problem")
        assert "var(--run-bg)" in _rule(".notice") and "var(--bad" not in _rule(".notice")
