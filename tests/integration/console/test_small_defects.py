"""Issue 43's smaller defects in Chromium, each pinned by what a person would see if it came back.

Like test_layout.py, no engine and no ``serve`` process: the service's app runs on uvicorn in a
thread (conftest's ``served``) over a temporary store of runs written by the unit tests' helper,
without tokens, so it answers loopback Host names only. Every page a test opens goes through
:meth:`Browser.look` (axe, no dialog, the console's script only, a screenshot).

- an ended intake run says it has turns, not "No attempt yet";
- the compare picker does not offer the run itself;
- errors are red boxes, not the blue notices;
- one ``<h1>`` per page and none inside a section headed by an ``<h2>`` (a report's ``#`` is an h3);
- the runs page's search field shows its whole placeholder (it showed 'id, target, owner, err' at size=18);
- Cancel and Forget ask first, with a form that works with the script turned off;
- a foreign Host header is refused on every route family (httpx over the real socket).

Two defects of the same list are pinned in the browser by test_layout.py already, so they are not
repeated here: "The check is queued" while the check runs (TestLiveCheck) and single-key
shortcuts that can be turned off and stay off after a reload (TestShortcuts).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page

from tests.integration.console.conftest import Browser, new_browser, served
from tests.unit.controller.entry.console.conftest import Console, make_console

REPORT = "# Acme Research\n\nA company.\n\n## Findings\n\n- one\n\n### Detail\n\nmore\n"
FOREIGN = "attacker.example"
ERROR = "the parser raised ValueError: no rows"
# One path per route family: console pages, a run's files and live stream, static files, the API, its docs, health.
FAMILIES = ["/", "/runs/run-f", "/runs/run-f/files/console.txt", "/runs/run-f/live", "/checks/run-f", "/targets",
            "/submit", "/compare?a=run-f", "/sign-in", "/static/console.css", "/v1/runs", "/v1/runs/run-f",
            "/v1/runs/run-f/artefacts", "/docs", "/openapi.json", "/healthz"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Console]]:
    """The no-token service on a free loopback port over a failed run with an error, compare's runs,
    an ended intake run without attempts, a blueprint run with a report, queued runs to cancel and
    ended runs of a target to forget."""
    root = tmp_path_factory.mktemp("small-defects")
    console = make_console(root)
    console.run("run-f", status="queued", lines="a line\n")  # ended below, with an error, before any other is queued
    claimed = console.store.claim("w", 30.0)
    assert claimed is not None and claimed.id == "run-f"
    console.store.finish("run-f", "w", "failed", exit_code=1, summary={"status": "failed"}, error=ERROR)
    console.run("run-a", status="failed")
    console.run("run-b", status="passed")
    console.run("run-i", agent="intake", target="intake-cross-node", status="passed")
    shutil.rmtree(console.runs_dir / "run-i" / "attempts")  # a conversation has none
    console.run("run-bp", agent="blueprint", target="acme-research", status="passed")
    console.write("run-bp", "report.md", REPORT)
    for n in range(2):
        console.run(f"old-{n}", target="old-target", status="failed")
    for run_id in ("run-c", "run-hold"):
        console.run(run_id, status="queued")
    for base in served(console.state):
        yield base, console


@pytest.fixture
def wide(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from new_browser(chromium, site[0], screens)


@pytest.fixture
def narrow(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from new_browser(chromium, site[0], screens, 400)


@pytest.fixture
def scriptless(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from new_browser(chromium, site[0], screens, script=False)


def _style(page: Page, selector: str) -> dict[str, str]:
    return dict(page.eval_on_selector(selector, "e => { const s = getComputedStyle(e);\n"
                                                "        return {background: s.backgroundColor, color: s.color, "
                                                "border: s.borderLeftColor + ' ' + s.borderLeftWidth}; }"))


class TestRunPages:
    def test_an_ended_intake_run_does_not_say_no_attempt_yet(self, wide: Browser):
        page = wide.open("/runs/run-i")
        attempts = page.text_content("#attempts") or ""
        assert "No attempt yet" not in attempts and "a conversation has turns, not attempts" in attempts, attempts
        wide.look("intake-ended-no-attempts")

    def test_the_compare_picker_does_not_offer_the_run_itself(self, wide: Browser):
        page = wide.open("/compare?a=run-a")
        offered = page.eval_on_selector_all("#recent option", "os => os.map(o => o.value)")
        links = page.eval_on_selector_all("main li a.mono", "as => as.map(a => a.textContent)")
        assert "run-b" in offered and "run-a" not in offered, offered
        assert "run-b" in links and "run-a" not in links, links
        wide.look("compare-picker")


class TestErrorsLookLikeErrors:
    def test_an_error_is_a_red_box_and_a_notice_stays_blue(self, wide: Browser):
        """A failed run's error line and an error page share the error style; a notice has another."""
        page = wide.open("/targets/bank_parser/icici?forgotten=0")
        notice = _style(page, "main p.notice")
        wide.look("notice")
        page = wide.open("/runs/run-f")
        assert page.is_visible("#run-notice") and ERROR in (page.text_content("#run-notice") or "")
        failed = _style(page, "#run-notice")
        wide.look("run-failed-error")
        response = page.goto(wide.base + "/runs/no-such-run")
        assert response is not None and response.status == 404
        missing = _style(page, "main p.problem")
        wide.look("error-page")
        assert failed == missing, (failed, missing)
        assert missing["background"] not in ("rgba(0, 0, 0, 0)", notice["background"]), (missing, notice)
        assert missing["color"] != notice["color"] and missing["border"] != notice["border"], (missing, notice)


class TestOutline:
    @pytest.mark.parametrize("path", ["/runs/run-bp", "/", "/runs/run-f", "/compare?a=run-a&b=run-b", "/targets",
                                      "/submit", "/runs/run-c/cancel"])
    def test_one_h1_and_none_below_an_h2(self, wide: Browser, path: str):
        """A report's headings sit below its h2 section: its # was a second h1, its ## a sibling h2."""
        page = wide.open(path)
        outline = page.evaluate("""() => ({
            h1: document.querySelectorAll('h1').length,
            below: Array.from(document.querySelectorAll('section')).filter(s => s.querySelector(':scope > h2'))
                .flatMap(s => Array.from(s.querySelectorAll('h1, h2')).filter(h => h !== s.querySelector(':scope > h2'))
                .map(h => h.tagName + ' ' + h.textContent.trim()))})""")
        assert outline["h1"] == 1 and outline["below"] == [], (path, outline)

    def test_a_reports_headings_are_h3_and_below(self, wide: Browser):
        page = wide.open("/runs/run-bp")
        levels = page.eval_on_selector_all(".markdown :is(h1, h2, h3, h4, h5, h6)",
                                           "hs => hs.map(h => h.tagName + ' ' + h.textContent)")
        assert levels == ["H3 Acme Research", "H4 Findings", "H5 Detail"], levels
        wide.look("blueprint-report-outline")


class TestSearchPlaceholder:
    @pytest.mark.parametrize("width", [1280, 400])
    def test_the_search_fields_placeholder_is_whole(self, chromium, site, screens: Path, width: int):  # noqa: ANN001
        """The placeholder, typed into the field, fits it without scrolling."""
        for browser in new_browser(chromium, site[0], screens, width):
            page = browser.open("/")
            field = page.locator("input[data-search]")
            placeholder = field.get_attribute("placeholder")
            assert placeholder and "error" in placeholder
            sizes = field.evaluate("""e => { const was = e.value; e.value = e.placeholder;
                const sizes = [e.scrollWidth, e.clientWidth]; e.value = was; return sizes; }""")
            assert sizes[0] <= sizes[1], (width, sizes)
            browser.look(f"search-placeholder-{width}")


class TestAskFirst:
    def test_cancel_asks_then_cancels_without_a_script(self, scriptless: Browser, site):  # noqa: ANN001
        store = site[1].store
        page = scriptless.open("/runs/run-c")
        assert page.locator("a[href='/runs/run-c/cancel']").count() == 1  # a link to a question, not a form
        page.click("a[href='/runs/run-c/cancel']")
        page.wait_for_url(scriptless.base + "/runs/run-c/cancel")
        assert "Cancel run run-c?" in (page.text_content("main") or "")
        assert store.get("run-c").status == "queued"  # asking cancelled nothing
        page.click("main form button[type=submit]")
        page.wait_for_url(scriptless.base + "/runs/run-c")
        assert store.get("run-c").status == "cancelled"

    def test_forget_asks_then_forgets_without_a_script(self, scriptless: Browser, site):  # noqa: ANN001
        store = site[1].store
        page = scriptless.open("/targets/bank_parser/old-target")
        assert page.locator("a[href='/targets/bank_parser/old-target/forget']").count() == 1
        page.click("a[href='/targets/bank_parser/old-target/forget']")
        page.wait_for_url(scriptless.base + "/targets/bank_parser/old-target/forget")
        assert "Forget the lessons and ended service runs of old-target" in (page.text_content("main") or "")
        assert store.get("old-0") is not None  # asking forgot nothing
        page.click("main form button[type=submit]")
        page.wait_for_url(scriptless.base + "/targets/bank_parser/old-target?forgotten=*")
        assert "Forgotten: 2 record(s)" in (page.text_content("main p.notice") or "")
        assert store.get("old-0") is None and store.get("old-1") is None

    def test_the_question_pages_pass_axe(self, wide: Browser):
        for path in ("/runs/run-hold/cancel", "/targets/bank_parser/icici/forget"):
            page = wide.open(path)
            assert page.locator("main form input[name=confirm][value=yes]").count() == 1, path
            assert page.locator("main form input[name=csrf]").count() == 1, path
            wide.look("question-" + path.split("/")[-1])


class TestForeignHost:
    def test_every_route_family_refuses_a_foreign_host(self, site):  # noqa: ANN001
        """DNS rebinding: the no-token service answers loopback names only, before doing anything."""
        base, console = site
        port = base.rsplit(":", 1)[1]
        with httpx.Client(base_url=base, timeout=10) as client:
            for path in FAMILIES:
                assert client.get(path).status_code != 403, path  # the same request with its own Host is served
                refused = client.get(path, headers={"Host": f"{FOREIGN}:{port}"})
                assert refused.status_code == 403, (path, refused.status_code)
                assert "loopback" in refused.text and ERROR not in refused.text and "a line" not in refused.text, path
            for path in ("/runs/run-hold/cancel", "/v1/runs/run-hold/cancel"):
                refused = client.post(path, data={"confirm": "yes"}, headers={"Host": f"{FOREIGN}:{port}"})
                assert refused.status_code == 403, (path, refused.status_code)
            assert client.post("/v1/runs", json={"agent": "bank_parser", "target": "icici"},
                               headers={"Host": FOREIGN}).status_code == 403
        assert console.store.get("run-hold").status == "queued"
