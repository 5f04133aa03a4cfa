"""The web console in Chromium against a real service: sign-in, the runs list, a run followed
live and reloaded mid-run, an intake conversation answered in the page to its end, the diff
of a failed attempt, Cancel, hostile text, tenancy and CSRF — every page checked by axe-core
and photographed (conftest.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from controller.entry.console.filters import duration
from controller.entry.console.views.paths import local_names
from controller.platform.settings import PROJECT_ROOT
from tests.integration.blueprints import NO_GO, NO_GO_REASON
from tests.integration.console.conftest import HOSTILE, Browser
from tests.integration.service.harness import Service, wait_for
from tests.integration.service.test_conversation import script

pytestmark = pytest.mark.usefixtures("no_leftovers")
STATEMENT = PROJECT_ROOT / "data" / "icici" / "icici sample.pdf"
ACME = PROJECT_ROOT / "data" / "acme-research"


def lines_of(browser: Browser) -> list[tuple[str, str]]:
    """The progress lines in the page: (anchor id, text), in order."""
    return browser.page.evaluate(
        "Array.from(document.querySelectorAll('#lines ol.lines li')).map(li => [li.id, li.lastChild.textContent])")


def console_lines(service: Service, run_id: str) -> list[str]:
    return (service.root / "runs" / run_id / "console.txt").read_text().splitlines()


def shown_lines(service: Service, run_id: str) -> list[str]:
    """console.txt as a page shows it: paths named as in the run folder (no server path, issue 43)."""
    lines = [local_names(line, run_id) for line in console_lines(service, run_id)]
    assert not any(f"runs/{run_id}" in line or str(service.root) in line for line in lines)
    return lines


def status_in_page(browser: Browser) -> str:
    return str(browser.page.text_content("#run-status")).strip()


def wait_status(browser: Browser, *wanted: str) -> None:
    """Until the page's status is one of ``wanted``: live updates first, a reload every 10 s besides."""
    last = [time.monotonic()]

    def reached() -> bool:
        if status_in_page(browser) in wanted:
            return True
        if time.monotonic() - last[0] > 10:
            browser.page.reload()
            last[0] = time.monotonic()
        return False

    wait_for(reached, f"status {' or '.join(wanted)}")


def run_id_of(browser: Browser) -> str:
    found = re.search(r"/(?:runs|checks)/([^/?#]+)", browser.page.url)
    assert found, browser.page.url
    return found.group(1)


def submit_upload(browser: Browser, name: str, expected: Path, attempts: int) -> str:
    """Start a run from the Submit page on an uploaded statement; its id."""
    page = browser.open("/submit")
    page.fill("#upload-target", name)
    page.set_input_files("#upload-statement", str(STATEMENT))
    page.set_input_files("#upload-result", str(expected))
    page.fill("#upload-max_attempts", str(attempts))
    page.click("#upload button[type=submit]")
    page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
    return run_id_of(browser)


def start_intake(browser: Browser, subject: str | None = None) -> str:
    """Start an interactive intake run (cross-node) from the Submit page, for ``subject`` if given; its id."""
    page = browser.open("/submit")
    page.select_option("#run-target", "intake-cross-node")
    page.check("#run-interactive")
    if subject is not None:
        page.fill("#run-subject", subject)
    page.click("#run button[type=submit]")
    page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
    return run_id_of(browser)


def wrong_result(tmp_path: Path) -> Path:
    """ICICI's result.csv with one balance changed: every attempt's frame differs in that cell."""
    rows = (PROJECT_ROOT / "data" / "icici" / "result.csv").read_text().splitlines()
    fields = rows[3].split(",")
    fields[-1] = "99999.99"
    rows[3] = ",".join(fields)
    path = tmp_path / "result.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


class TestSignIn:
    def test_a_wrong_token_then_the_right_one_then_sign_out(self, stranger: Browser, service: Service):
        page = stranger.open("/")
        assert page.url.startswith(stranger.base + "/sign-in")
        stranger.look("sign-in")
        page.fill("#token", "sbx_not-a-token")
        page.click("button[type=submit]")
        assert "that token is not valid" in page.text_content("#token-error")
        stranger.look("sign-in-refused")
        page.fill("#token", service.tokens["alice"])
        page.click("button[type=submit]")
        page.wait_for_url(stranger.base + "/")
        assert "alice" in page.text_content(".who")
        page.click("text=Sign out")
        page.wait_for_url(stranger.base + "/sign-in")
        assert stranger.open("/").url.startswith(stranger.base + "/sign-in")


class TestRunFromTheBrowser:
    def test_a_run_started_from_submit_is_followed_live_and_listed(self, alice: Browser, service: Service):
        """ICICI from the Submit page: its lines and running node change without a reload, it passes,
        and the runs list's filters find it."""
        page = alice.open("/submit")
        alice.look("submit")
        page.select_option("#run-target", "icici")
        page.click("#run button[type=submit]")
        page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
        run_id = run_id_of(alice)
        page.evaluate("window.__notReloaded = true")
        seen: set[str] = set()
        deadline = time.monotonic() + 300
        while status_in_page(alice) not in ("passed", "failed", "error") and time.monotonic() < deadline:
            seen.update(page.evaluate("Array.from(document.querySelectorAll('svg.graph .node.running'))"
                                      ".map(n => n.dataset.node)"))
            page.wait_for_timeout(40)
        assert status_in_page(alice) == "passed" and page.evaluate("window.__notReloaded") is True
        assert len(seen) >= 2, f"the running node did not move: {seen}"
        assert [text for _, text in lines_of(alice)] == shown_lines(service, run_id)
        alice.look("run-live-ended")
        page = alice.open(f"/runs/{run_id}")
        alice.look("run")
        page = alice.open("/?status=passed&target=icici")
        assert run_id in page.text_content("#runs")
        alice.look("runs")
        assert alice.open("/?status=failed&target=icici").query_selector(f"#run-{run_id}") is None
        page = alice.open(f"/?q={run_id[-12:]}")
        page.click(f"#run-{run_id} a")  # Enter on a row opens it too: the link is what j/k select
        page.wait_for_url(re.compile(f".*/runs/{run_id}$"))

    def test_the_diff_of_a_failed_attempt_and_compare(self, alice: Browser, service: Service):
        page = alice.open("/submit")
        page.select_option("#run-target", "icici-wrong")
        page.fill("#run-max_attempts", "1")
        page.click("#run button[type=submit]")
        page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
        run_id = run_id_of(alice)
        wait_status(alice, "failed")
        page = alice.open(f"/runs/{run_id}/attempts/1")
        assert "row(s) differ" in page.text_content("#frame")
        first = page.query_selector("#d1")
        assert first is not None and "99999.99" in first.inner_text()
        assert page.query_selector("#d1 mark") is not None
        alice.look("attempt-diff")
        page.click("text=Only differences")
        assert page.query_selector("table.frame.only-diff") is not None
        assert page.evaluate("getComputedStyle(document.querySelector('table.frame tr.same')).display") == "none"
        alice.look("attempt-only-differences")
        alice.open(f"/runs/{run_id}/attempts/1/stdout")
        alice.look("stdout")
        page = alice.open(f"/compare?a={run_id}:1&b={run_id}:1")
        assert "same, line for line" in page.text_content("#code-h + p")
        alice.look("compare")
        page = alice.open("/targets/bank_parser/icici-wrong")
        alice.look("target")
        alice.open("/targets")
        alice.look("targets")

    def test_cancel_ends_a_running_run_and_leaves_no_container(self, alice: Browser, service: Service,
                                                               tmp_path: Path):
        run_id = submit_upload(alice, "icici-long", wrong_result(tmp_path), 30)
        wait_status(alice, "running")
        wait_for(lambda: len(lines_of(alice)) >= 3, "a few lines")
        alice.page.click("text=Cancel run…")  # a question first (issue 43), a form that needs no script
        alice.page.wait_for_url(f"{alice.base}/runs/{run_id}/cancel")
        alice.look("cancel-question")
        alice.page.click("text=Cancel the run")
        wait_status(alice, "cancelled")
        assert "attempt 30" not in " ".join(console_lines(service, run_id))  # stopped long before its end
        alice.look("run-cancelled")


class TestConversation:
    def test_an_intake_conversation_answered_in_the_page_with_a_reload_mid_run(self, alice: Browser,
                                                                               service: Service):
        run_id = start_intake(alice)
        for number, reply in enumerate(script(), start=1):
            wait_for(lambda: alice.page.query_selector("#reply-form") is not None
                     or bool(alice.page.reload()) and False, f"question {number}")
            if number == 1:
                alice.look("intake-question")
            if number == 2:  # a reload mid-run: the page starts again from the server's backlog
                alice.page.reload()
            alice.page.fill("#reply", reply)
            alice.page.click("#reply-form button[type=submit]")
            alice.page.wait_for_url(re.compile(f".*/runs/{run_id}(#conversation)?$"))
        wait_status(alice, "passed")
        assert [text for _, text in lines_of(alice)] == shown_lines(service, run_id)
        ids = [anchor for anchor, _ in lines_of(alice)]
        assert ids == [f"L{n}" for n in range(1, len(ids) + 1)]
        assert alice.page.query_selector("#memory-h") is not None
        alice.look("intake-ended")


def api(service: Service, method: str, path: str, **extra: object) -> httpx.Response:
    """The service's API as alice."""
    return httpx.request(method, f"{service.url}/v1{path}", timeout=60,
                         headers={"Authorization": f"Bearer {service.tokens['alice']}"}, **extra)  # type: ignore[arg-type]


def fact(browser: Browser, label: str) -> str:
    """The text of the run page's fact ``label`` (its <dd>)."""
    return str(browser.page.evaluate(
        "label => Array.from(document.querySelectorAll('dl.facts dt')).find(dt => dt.textContent === label)"
        ".nextElementSibling.textContent.trim()", label))


class TestLivePageEnds:
    """Issue 43: a run page left open to the run's end kept its Cancel button, "Ended —", the
    duration and line count of its load and the attempts of its load, and a "No line yet." under
    the streamed lines. On the stream's ``end`` the page takes those parts from the ended page."""

    def test_a_page_opened_before_the_start_shows_the_end_without_a_reload(self, alice: Browser, service: Service):
        run_id = api(service, "POST", "/runs", json={"target": "icici"}).json()["id"]
        page = alice.open(f"/runs/{run_id}")
        page.evaluate("window.__notReloaded = true")
        empty_at_load = page.query_selector("#lines p.empty") is not None
        assert page.query_selector("a[href$='/cancel']") is not None
        wait_for(lambda: len(lines_of(alice)) >= 1, "a first line", deadline=120)
        if empty_at_load:  # the usual case: the page opened while the run was queued or starting
            assert page.query_selector("#lines p.empty") is None
        wait_for(lambda: status_in_page(alice) in ("passed", "failed", "error"), "the end", deadline=300)
        wait_for(lambda: page.query_selector("#attempts table") is not None, "the attempts table", deadline=30)
        assert page.evaluate("window.__notReloaded") is True
        run = api(service, "GET", f"/runs/{run_id}").json()
        assert status_in_page(alice) == run["status"] == "passed"
        assert fact(alice, "Duration") == duration(run["finished_at"] - run["started_at"])
        assert fact(alice, "Ended") != "—"
        shown = lines_of(alice)
        assert [text for _, text in shown] == [local_names(line, run_id) for line in console_lines(service, run_id)]
        assert page.text_content("#lines .follow > span") == f"{len(shown)} line(s)"
        assert page.query_selector_all("#attempts tbody tr")
        assert page.query_selector("a[href$='/cancel']") is None and "No line yet" not in page.text_content("main")
        assert page.query_selector(f".actions a[href='/compare?a={run_id}']") is not None
        assert page.query_selector("section[aria-labelledby=files-h] a[download]") is not None
        assert not page.is_visible("#running-note")
        alice.look("run-ended-in-place")


class TestWaitingIntake:
    def test_a_waiting_intake_says_so_and_a_stale_cancel_says_the_run_had_ended(self, alice: Browser,
                                                                                service: Service):
        """The intake run waiting for a reply said "Running: listen"; its page (live, then reloaded) says it
        waits for a reply. A Cancel confirmed after the run ended lands on its page saying so, not "Conflict"."""
        run_id = start_intake(alice)
        page = alice.page
        page.evaluate("window.__notReloaded = true")
        wait_for(lambda: status_in_page(alice) == "waiting", "the question, live", deadline=180)
        assert page.evaluate("window.__notReloaded") is True
        for _ in ("live", "reloaded"):
            assert "Waiting for a reply" in page.inner_text("#running-note")
            assert "Running:" not in page.inner_text("#running-note")
            page.reload()
        assert page.query_selector("#reply-form") is not None
        alice.look("intake-waiting")
        page.click("text=Cancel run…")
        page.wait_for_url(f"{alice.base}/runs/{run_id}/cancel")
        assert api(service, "POST", f"/runs/{run_id}/cancel").status_code == 202  # meanwhile, elsewhere
        wait_for(lambda: api(service, "GET", f"/runs/{run_id}").json()["status"] == "cancelled", "the cancel")
        page.click("text=Cancel the run")
        page.wait_for_url(re.compile(f".*/runs/{run_id}\\?cancel=ended$"))
        assert "Conflict" not in page.text_content("main")
        assert "had already ended (cancelled) when Cancel was sent" in page.text_content("#cancel-ended")
        assert page.query_selector("a[href$='/cancel']") is None
        alice.look("stale-cancel")


class TestHostileText:
    def test_a_parser_printing_script_and_a_hostile_report_are_inert(self, alice: Browser, service: Service,
                                                                    tmp_path: Path):
        evil = tmp_path / "evil.py"
        evil.write_text(f"def parse(pdf_path):\n    print({HOSTILE!r})\n    raise ValueError({HOSTILE!r})\n")
        page = alice.open("/submit")
        page.select_option("#check-target", "icici")
        page.set_input_files("#check-parser", str(evil))
        page.click("#check button[type=submit]")
        page.wait_for_url(re.compile(r".*/checks/[^/]+$"))
        page.evaluate("window.__notReloaded = true")
        wait_for(lambda: status_in_page(alice) == "failed", "the check's end", deadline=180)
        wait_for(lambda: page.query_selector("#verdicts") is not None, "the verdicts, swapped in at the end",
                 deadline=30)
        assert page.evaluate("window.__notReloaded") is True and page.query_selector("a[href$='/cancel']") is None
        assert HOSTILE in page.text_content("#verdicts")  # shown as text
        alice.look("check")
        alice.page.click("#verdicts a")
        assert HOSTILE in alice.page.text_content("main")
        alice.look("verdict")
        page = alice.open("/submit")
        page.select_option("#run-target", "hostile-research")
        page.click("#run button[type=submit]")
        page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
        wait_status(alice, "passed", "failed")
        alice.page.reload()
        report = alice.page.inner_html("#report")
        assert "alert(1)" in alice.page.text_content("#report")  # the text is there, as text
        assert alice.page.query_selector("#report script, #report img, #report iframe") is None
        hrefs = alice.page.eval_on_selector_all("#report a", "links => links.map(a => a.getAttribute('href'))")
        assert not [h for h in hrefs if h and not h.startswith(("http:", "https:", "mailto:"))], report
        labels = alice.page.eval_on_selector_all("section[aria-labelledby=summary-h] dt",
                                                 "ts => ts.map(t => t.textContent)")
        assert "parser" not in labels and ("report" in labels or alice.page.text_content("#run-status") == "failed")
        alice.look("blueprint")


class TestNoGo:
    def test_a_no_go_has_its_badge_in_the_list_and_its_reason_on_the_run_page(self, alice: Browser):
        """Issue 41: the manager's no-go ended as error with the crash banner on main. Now the run
        ends no-go, the page says why, and the runs list filters and badges it."""
        page = alice.open("/submit")
        page.select_option("#run-target", NO_GO)
        page.click("#run button[type=submit]")
        page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
        run_id = run_id_of(alice)
        wait_status(alice, "no-go", "failed", "error")
        assert status_in_page(alice) == "no-go"
        page.reload()
        assert page.text_content("#run-notice") == NO_GO_REASON and page.is_visible("#run-notice")
        alice.look("run-no-go")
        page = alice.open("/?status=no-go")
        badge = page.query_selector(f"#run-{run_id} .status.s-no-go")
        assert badge is not None and badge.text_content() == "no-go"
        assert "no-go" in page.eval_on_selector_all("select[name=status] option",
                                                    "options => options.map(o => o.value)")
        alice.look("runs-no-go")


class TestBlueprintEditor:
    def test_a_blueprint_written_in_the_editor_runs_to_a_verdict(self, alice: Browser):
        """Issue 41: a scenario's template fills the editor, a blueprint that does not validate is said
        at its members, then acme-research's blueprint with its files attached runs and passes."""
        page = alice.open("/blueprints/new")
        page.select_option("#bp-scenario", "company_research")
        page.click("#scenario-form button[type=submit]")
        page.wait_for_url(re.compile(r".*/blueprints/new\?scenario=company_research$"))
        assert '"title": "Company overview"' in page.input_value("#bp-blueprint")
        alice.look("blueprint-editor")
        page.click("#blueprint-form button[type=submit]")  # the template as it is: title and subject empty
        errors = page.text_content("#bp-blueprint-errors")
        assert "title: String should have at least 1 character" in errors and "subject:" in errors
        assert page.get_attribute("#bp-blueprint", "aria-invalid") == "true"
        alice.look("blueprint-editor-errors")
        page.fill("#bp-blueprint", (ACME / "blueprint.json").read_text())
        page.fill("#bp-target", "acme-from-editor")
        page.set_input_files("#bp-data", [str(ACME / name) for name in ("company.json", "financials.csv", "news.json")])
        page.click("#blueprint-form button[type=submit]")
        page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
        wait_status(alice, "passed", "failed", "error", "no-go")
        assert status_in_page(alice) == "passed"
        page.reload()
        assert "Acme" in page.text_content("#report")


class TestTenancyAndCsrf:
    def test_another_tenant_gets_404_and_a_post_without_csrf_is_refused(self, alice: Browser, bob: Browser,
                                                                       service: Service):
        accepted = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, timeout=60,
                              headers={"Authorization": f"Bearer {service.tokens['alice']}"})
        run_id = accepted.json()["id"]
        response = bob.page.goto(f"{bob.base}/runs/{run_id}")
        assert response is not None and response.status == 404
        bob.look("not-found")
        refused = alice.page.request.post(f"{alice.base}/runs/{run_id}/cancel", form={"reason": "no token"})
        assert refused.status == 403 and "CSRF" in refused.text()
        wait_for(lambda: httpx.get(f"{service.url}/v1/runs/{run_id}", timeout=30, headers={
            "Authorization": f"Bearer {service.tokens['alice']}"}).json()["status"] == "passed", "the run")


class TestApiDocs:
    def test_swagger_ui_renders_offline_under_its_csp(self, alice: Browser):
        """/docs, opened by a signed-in browser, renders the API's operations from the service's own
        files (this machine reaches no CDN: FastAPI's default page stayed blank here) with no CSP refusal."""
        refused: list[str] = []
        alice.page.on("console", lambda message: refused.append(message.text)
                      if "Content Security Policy" in message.text else None)
        page = alice.open("/docs")
        page.wait_for_selector(".swagger-ui .opblock-summary-path", timeout=30_000)
        paths = page.eval_on_selector_all(".opblock-summary-path", "nodes => nodes.map(n => n.textContent)")
        assert any("/v1/runs" in path for path in paths), paths
        assert not refused, refused


class TestSubject:
    def test_a_conversation_with_a_subject_then_its_page_and_another_tenants_404(self, alice: Browser, bob: Browser):
        """Issue 40: the Subject field on Submit; the subject's page shows its facts; bob cannot see alice's."""
        run_id = start_intake(alice, "Dana Reyes")
        for number, reply in enumerate(script(), start=1):
            wait_for(lambda: alice.page.query_selector("#reply-form") is not None
                     or bool(alice.page.reload()) and False, f"question {number}")
            alice.page.fill("#reply", reply)
            alice.page.click("#reply-form button[type=submit]")
            alice.page.wait_for_url(re.compile(f".*/runs/{run_id}(#conversation)?$"))
        wait_status(alice, "passed")
        response = alice.page.goto(f"{alice.base}/subjects/Dana Reyes")
        assert response is not None and response.status == 200
        facts = alice.page.inner_text("#facts")
        assert "Personal" in facts and "city" in facts
        assert "from '" in alice.page.inner_text("#history")  # each value with the words it was read from
        alice.look("subject")
        other = bob.page.goto(f"{bob.base}/subjects/Dana Reyes")
        assert other is not None and other.status == 404
        # She comes back: her facts are all held, so the conversation opens with them and asks what changed.
        again = start_intake(alice, "Dana Reyes")
        wait_for(lambda: alice.page.query_selector("#reply-form") is not None
                 or bool(alice.page.reload()) and False, "what changed")
        assert "Has anything changed?" in alice.page.inner_text("main")
        alice.page.fill("#reply", "I live in Lisbon now")
        alice.page.click("#reply-form button[type=submit]")
        alice.page.wait_for_url(re.compile(f".*/runs/{again}(#conversation)?$"))
        wait_status(alice, "passed", "failed")
        alice.page.goto(f"{alice.base}/subjects/Dana Reyes")
        assert "Lisbon" in alice.page.inner_text("#facts") and "Porto" in alice.page.inner_text("#history")
        assert "open" not in alice.page.inner_text("#conflicts-h ~ *")  # "now" replaced it: no conflict
