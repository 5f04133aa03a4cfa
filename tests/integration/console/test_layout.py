"""The console's layout in Chromium (issue 43): readable code, fixed diff gutters, narrow screens.

No engine and no ``serve`` process: the service's app runs on uvicorn in a thread over a
temporary store whose runs are written by the unit tests' helper (rows, folders, files), so
what is measured is only the pages' HTML and CSS as a real browser lays them out:

- code is coloured by Pygments' classes, in light and in dark (``static/code.css``);
- the line-number gutters of diff and compare tables keep a fixed, narrow width;
- at 400 px wide no page pushes itself sideways; a wide table scrolls inside its own box.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.integration.console.conftest import Browser, new_browser, served
from tests.unit.controller.entry.console.conftest import Console, make_console

PARSER = ("import pandas as pd\n\n\ndef parse(path: str) -> pd.DataFrame:\n    # the statement's rows\n"
          "    return pd.DataFrame({'a': [1]})\n")
OTHER = "import pandas as pd\n\n\ndef parse(path: str) -> pd.DataFrame:\n    return pd.DataFrame({'b': [2, 3]})\n"
LONG = "a-target-with-a-rather-long-name-" * 2


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Console]]:
    """The no-token service on a free loopback port, with runs to lay out."""
    root = tmp_path_factory.mktemp("layout")
    console = make_console(root)
    data = root / "data" / "icici"
    data.mkdir(parents=True)
    (data / "result.csv").write_text("Date,Description,Balance\n01-08-2024,Opening balance carried over,10.5\n"
                                     "02-08-2024,Salary for the month of August,20\n")
    for n in range(12):
        console.run(f"20261128-0900{n:02d}-{LONG}{n}", target=f"{LONG}{n}", status="failed" if n % 2 else "passed")
    for run_id, code in (("run-a", PARSER), ("run-b", OTHER)):
        console.run(run_id, status="failed")
        console.write(run_id, "run.json", {"data_dir": str(root / "data")})
        console.write(run_id, "attempts/1/parser.py", code)
        console.write(run_id, "attempts/1/result.json", {"columns": ["Date", "Description", "Balance"], "data": [
            ["01-08-2024", "Opening balance carried over", 10.5],
            ["02-08-2024", "Salary for the month of August", 27.0]]})
    console.run("chk-live", status="queued", options={"kind": "check"})
    for base in served(console.state):
        yield base, console


@pytest.fixture
def wide(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from new_browser(chromium, site[0], screens)


@pytest.fixture
def dark(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from new_browser(chromium, site[0], screens, scheme="dark")


@pytest.fixture
def narrow(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from new_browser(chromium, site[0], screens, 400)


def _colour(page: Page, selector: str) -> str:
    return str(page.eval_on_selector(selector, "e => getComputedStyle(e).color"))


class TestCode:
    @pytest.mark.parametrize("scheme", ["light", "dark"])
    def test_code_is_coloured_by_its_tokens(self, wide: Browser, dark: Browser, scheme: str):
        """A keyword, a comment and a name each have their colour, and not the text's (light and dark)."""
        browser = wide if scheme == "light" else dark
        page = browser.open("/runs/run-a/attempts/1")
        text = _colour(page, "main p")
        keyword, comment = _colour(page, ".highlight .kn"), _colour(page, ".highlight .c1")
        assert keyword != text and comment != text and keyword != comment, (keyword, comment, text)
        browser.look(f"attempt-code-{scheme}")


class TestGutters:
    @pytest.mark.parametrize("path", ["/compare?a=run-a&b=run-b"])
    def test_line_number_gutters_stay_narrow(self, wide: Browser, path: str):
        """Each gutter is a few characters wide (about 45 % of the table before), the text gets the rest."""
        page = wide.open(path)
        table = page.locator("table.diff:has(th.n)").first
        width = table.evaluate("t => t.getBoundingClientRect().width")
        gutters = table.evaluate("t => Array.from(t.querySelectorAll('thead th.n'))"
                                 ".map(c => c.getBoundingClientRect().width)")
        assert len(gutters) == 2 and all(g < 80 for g in gutters) and sum(gutters) < 0.12 * width, (gutters, width)
        wide.look("gutters-" + path.split("/")[1].split("?")[0])

    def test_a_frame_s_row_number_gutters_stay_narrow(self, wide: Browser):
        """The frame on the attempt page is columns (issue 43): its two row-number gutters are a few characters wide."""
        page = wide.open("/runs/run-a/attempts/1")
        gutters = page.locator("table.frame").evaluate(
            "t => Array.from(t.querySelectorAll('thead th.n')).map(c => c.getBoundingClientRect().width)")
        assert len(gutters) == 2 and all(g < 80 for g in gutters), gutters


class TestNarrow:
    @pytest.mark.parametrize("path", ["/", "/targets", "/runs/run-a", "/runs/run-a/attempts/1",
                                      "/compare?a=run-a&b=run-b", f"/targets/bank_parser/{LONG}1", "/submit",
                                      "/runs/run-a/cancel"])
    def test_nothing_pushes_the_page_sideways_at_400_px(self, narrow: Browser, path: str):
        page = narrow.open(path)
        page.wait_for_load_state("load")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        culprits = page.evaluate("""Array.from(document.querySelectorAll('main *, header *'))
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1
                         && !e.closest('.table-box, .lines-box, pre, .highlight'))
            .slice(0, 5).map(e => e.tagName + '.' + e.className)""")
        assert overflow <= 0, (path, overflow, culprits)

    def test_the_runs_table_scrolls_in_its_own_box(self, narrow: Browser):
        """Attempts, Duration and Started are reachable by scrolling the table, not the page."""
        page = narrow.open("/")
        box = page.locator(".table-box:has(#runs)")
        sizes = box.evaluate("b => [b.scrollWidth, b.clientWidth]")
        assert sizes[0] > sizes[1], sizes
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        started = page.locator("#runs thead th", has_text="Started")
        assert started.is_visible() and started.evaluate("e => e.getBoundingClientRect().right") <= 400
        narrow.look("runs-400px")


class TestLiveCheck:
    def test_the_checks_waiting_line_follows_its_status(self, wide: Browser, site):  # noqa: ANN001
        """Opened while queued, the line said "The check is queued" after the check started (issue 43)."""
        page = wide.open("/checks/chk-live")
        said = page.locator("[data-status-text]")
        assert said.text_content() == "queued"
        page.wait_for_timeout(500)  # the stream is open
        claimed = site[1].store.claim("w", 30.0)
        assert claimed is not None and claimed.id == "chk-live"
        expect(said).to_have_text("running", timeout=15000)  # (not wait_for_function: the CSP forbids its eval)
        expect(page.locator("#run-status")).to_have_text("running")


class TestShortcuts:
    def test_single_key_shortcuts_can_be_turned_off_and_stay_off(self, wide: Browser):
        """WCAG 2.1.4: j selects a row; turned off in the keys dialog, j does nothing, after a reload too."""
        page = wide.open("/")
        page.keyboard.press("j")
        expect(page.locator("tr[data-row].selected")).to_have_count(1)
        page.click("#keys-open")
        page.uncheck("#keys-on")
        page.click("#keys button[type=submit]")
        page.reload()
        page.keyboard.press("j")
        page.keyboard.press("/")
        expect(page.locator("tr[data-row].selected")).to_have_count(0)
        assert page.evaluate("document.activeElement.tagName") != "INPUT"
        page.click("#keys-open")
        expect(page.locator("#keys-on")).not_to_be_checked()
        wide.look("keys-dialog")
        page.check("#keys-on")
        page.click("#keys button[type=submit]")
        page.keyboard.press("j")
        expect(page.locator("tr[data-row].selected")).to_have_count(1)
