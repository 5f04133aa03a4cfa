"""Issue 43 in Chromium: frames as columns, marks only where lines are alike, no server path, own counts.

As in ``test_layout.py``, no engine and no ``serve``: the service's app runs on uvicorn in a
thread over a temporary store with tokens (alice, bob), whose runs are written by the unit
tests' helper. What a user saw in Chromium is measured there:

- an attempt's frame against ``result.csv`` (and two attempts' frames on Compare) is a table of
  columns, each differing cell under its column name, marked by a class, a ``<mark>`` and a title;
- Compare marks the characters of an edited line, and a line replaced by an unrelated one whole;
- the attempt page and a blueprint run's page name the run's files as in the run folder, never
  by the server's path;
- ``/targets`` and a target's page count the signed-in caller's runs only.

Every page opened passes :meth:`Browser.look` (axe: no serious or critical violation).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.platform.observability.history import RunRecord
from controller.platform.shared_state import run_history
from tests.integration.console.conftest import Browser, served, sign_in
from tests.unit.controller.entry.console.conftest import Console, make_console

EXPECTED = "Date,Description,Balance\n01-08-2024,Opening balance,10.5\n02-08-2024,Salary,20\n"
ROWS = [["01-08-2024", "Opening balance", 10.5], ["02-08-2024", "Salary", 27.0]]
EDITED, UNRELATED = ("    return rows", "    return rows[1:]"), \
    ("    rows = statement.rows(path)", "    total = sum(x.amount for x in entries)")
BLUEPRINT = "20261128-090000-acme-research-ab12"


def _code(edited: str, unrelated: str) -> str:
    return f"import pandas as pd\n\n\ndef parse(path):\n{unrelated}\n{edited}\n"


def _blueprint_run(console: Console) -> None:
    folder = console.runs_dir / BLUEPRINT
    console.run(BLUEPRINT, owner="alice", agent="blueprint", target="acme-research", status="passed",
                lines=f"[attempt 1] writer   ok  412 words; runs/{BLUEPRINT}/attempts/1/report.md\n"
                      f"[setup] finish  passed {folder / 'report.md'}\n",
                summary={"status": "passed", "attempts": 1, "max_attempts": 3,
                         "parser_path": str(folder / "report.md")})
    ends = [("writer", "ok", f"412 words; {folder}/attempts/1/report.md"), ("qa", "passed", "built-in checks passed"),
            ("finish", "passed", str(folder / "report.md"))]
    console.write(BLUEPRINT, "events.jsonl", "".join(json.dumps(
        {"event": "node.finished", "node": node, "attempt": 1, "outcome": outcome, "duration_seconds": 0.2,
         "detail": detail}) + "\n" for node, outcome, detail in ends))
    console.write(BLUEPRINT, "attempts/1/report.md", "# Acme\n\nA report.\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Console, dict[str, str]]]:
    root = tmp_path_factory.mktemp("readable")
    console = make_console(root)
    tokens = {name: console.token(name) for name in ("alice", "bob")}
    data = root / "data" / "icici"
    data.mkdir(parents=True)
    (data / "result.csv").write_text(EXPECTED)
    for run_id, (edited, unrelated) in (("run-a", (EDITED[0], UNRELATED[0])), ("run-b", (EDITED[1], UNRELATED[1]))):
        console.run(run_id, owner="alice", status="failed",
                    summary={"status": "failed", "attempts": 1, "max_attempts": 3, "failures": ["mismatch"]})
        console.write(run_id, "run.json", {"data_dir": str(root / "data")})
        console.write(run_id, "attempts/1/parser.py", _code(edited, unrelated))
        rows = ROWS if run_id == "run-a" else [*ROWS[:1], ["02-08-2024", "Salary", 20.0]]
        console.write(run_id, "attempts/1/result.json", {"columns": ["Date", "Description", "Balance"], "data": rows})
    console.run("run-bob", owner="bob", status="passed")
    history, now = run_history(console.state.settings, console.store), time.time()
    for run_id, status in (("run-a", "failed"), ("run-b", "failed"), ("run-bob", "passed")):
        history.record(RunRecord(run_id, "bank_parser", "icici", status, 1, 3, now - 5, now, 5.0,
                                 failures=("mismatch",) if status == "failed" else ()))
    _blueprint_run(console)
    for base in served(console.state):
        yield base, console, tokens


def _browser(chromium, site, screens: Path, who: str) -> Iterator[Browser]:  # noqa: ANN001
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    browser = Browser(context.new_page(), site[0], screens)
    browser.page.on("dialog", lambda dialog: (browser.dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(browser, site[2][who])
    yield browser
    context.close()


@pytest.fixture
def alice(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from _browser(chromium, site, screens, "alice")


@pytest.fixture
def bob(chromium, site, screens: Path) -> Iterator[Browser]:  # noqa: ANN001
    yield from _browser(chromium, site, screens, "bob")


def _left(locator) -> float:  # noqa: ANN001
    return float(locator.evaluate("e => e.getBoundingClientRect().left"))


class TestFrames:
    def test_an_attempt_s_frame_is_columns_with_the_differing_cells_marked(self, alice: Browser):
        """Each cell sits under its column name; the one differing balance is marked on both sides,
        not by colour alone."""
        page = alice.open("/runs/run-a/attempts/1")
        table = page.locator("#frame table.frame")
        heads = table.locator("thead tr").nth(1).locator("th")
        assert [h.strip() for h in heads.all_inner_texts()] == ["row", "Date", "Description", "Balance",
                                                                "row", "Date", "Description", "Balance"]
        assert " | " not in table.inner_text()
        marked = table.locator("td.cell-diff")
        assert marked.all_inner_texts() == ["20", "27"]
        assert marked.first.get_attribute("title") and marked.first.locator("mark").count() == 1
        balance = heads.nth(3)
        assert abs(_left(marked.first) - _left(balance)) < 1, "the differing cell is not under its column"
        assert table.locator("tbody tr").first.locator("td").nth(2).inner_text() == "Opening balance"
        alice.look("frame-columns")

    def test_a_frame_wider_than_the_screen_scrolls_in_a_box_a_keyboard_reaches(self, chromium, site, screens: Path):  # noqa: ANN001
        """At 400 px the frame scrolls inside its box; the box takes the focus (axe: scrollable-region-focusable)."""
        for narrow in _browser(chromium, site, screens, "alice"):
            narrow.page.set_viewport_size({"width": 400, "height": 900})
            page = narrow.open("/runs/run-a/attempts/1")
            box = page.locator("#frame .table-box")
            assert box.evaluate("b => b.scrollWidth > b.clientWidth") and box.get_attribute("tabindex") == "0"
            narrow.look("frame-400px")

    def test_compare_shows_both_frames_as_columns(self, alice: Browser):
        page = alice.open("/compare?a=run-a&b=run-b")
        frames = page.locator("#frames table.frame")
        assert frames.locator("td.cell-diff").all_inner_texts() == ["27", "20"]
        alice.look("compare-frames")


class TestMarks:
    def test_an_edited_line_has_its_edit_marked_and_an_unrelated_one_is_marked_whole(self, alice: Browser):
        page = alice.open("/compare?a=run-a&b=run-b")
        code = page.locator("section:has(#code-h) table.diff")
        unrelated = code.locator("tr.changed", has_text="statement.rows")
        assert unrelated.locator("td.l mark").all_inner_texts() == [UNRELATED[0]]
        assert unrelated.locator("td.r mark").all_inner_texts() == [UNRELATED[1]]
        edited = code.locator("tr.changed", has_text="return rows")
        assert edited.locator("td.l mark").count() == 0 and edited.locator("td.r mark").all_inner_texts() == ["[1:]"]
        alice.look("compare-marks")


class TestNoServerPath:
    @pytest.mark.parametrize("path", [f"/runs/{BLUEPRINT}", f"/runs/{BLUEPRINT}/attempts/1", "/runs/run-a/attempts/1"])
    def test_pages_name_files_as_in_the_run_folder(self, alice: Browser, site, path: str):  # noqa: ANN001
        console: Console = site[1]
        page = alice.open(path)
        seen = page.locator("body").inner_text()
        assert str(console.runs_dir) not in seen and str(console.runs_dir.parent) not in seen, path
        assert f"runs/{BLUEPRINT}" not in seen and "runs/run-a" not in seen, path
        if BLUEPRINT in path:
            assert "attempts/1/report.md" in seen
        alice.look("no-path-" + path.strip("/").replace("/", "-"))


class TestTargetCounts:
    def test_each_token_counts_only_its_own_runs(self, alice: Browser, bob: Browser):
        """Alice: two failed runs; Bob: one passed; on /targets and on the target's page alike."""
        listed = alice.open("/targets").locator("tr", has_text="icici").first.inner_text()
        assert "2 failed" in listed and "passed" not in listed
        page = alice.open("/targets/bank_parser/icici").locator("main").inner_text()
        assert "2 ended run(s) of yours through this service; success rate 0 %" in page
        alice.look("target-alice")
        listed = bob.open("/targets").locator("tr", has_text="icici").first.inner_text()
        assert "1 passed" in listed and "failed" not in listed
        page = bob.open("/targets/bank_parser/icici").locator("main").inner_text()
        assert "1 ended run(s) of yours through this service; success rate 100 %" in page and "mismatch" not in page
        bob.look("target-bob")
