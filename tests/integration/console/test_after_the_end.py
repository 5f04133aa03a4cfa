"""What a page needs after its run ended (issue 43), in Chromium against a real service.

The service removes a run's upload when the run ends; a teacher reading a class's check, or a
person reading the diff of the statement they uploaded, comes later. Each test waits until the
upload is gone, then opens the pages: every verdict of a class zip (names with ``/``), a single
uploaded parser's verdict, an uploaded target's diff. Each page is checked by axe (conftest.py).
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest

from tests.integration.console.conftest import Browser
from tests.integration.console.test_console import (
    run_id_of,
    submit_upload,
    wait_status,
    wrong_result,
)
from tests.integration.service.harness import Service, wait_for

pytestmark = pytest.mark.usefixtures("no_leftovers")
STUDENTS = ("alice", "bob")


def parser_of(who: str) -> str:
    """A parser that fails at once, with a line only its author wrote."""
    return f"# written by {who}\ndef parse(pdf_path):\n    raise ValueError('unfinished: {who}')\n"


def class_zip(tmp_path: Path) -> Path:
    """class.zip: each student's folder with their icici_parser.py (a class, not submission folders)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for who in STUDENTS:
            archive.writestr(f"{who}/icici_parser.py", parser_of(who))
    path = tmp_path / "class.zip"
    path.write_bytes(buffer.getvalue())
    return path


def check_of(browser: Browser, field: str, upload: Path) -> str:
    """Start a check on icici from the Submit page; its id."""
    page = browser.open("/submit")
    page.select_option("#check-target", "icici")
    page.set_input_files(f"#check-{field}", str(upload))
    page.click("#check button[type=submit]")
    page.wait_for_url(re.compile(r".*/checks/[^/]+$"))
    return run_id_of(browser)


def ended_and_removed(browser: Browser, service: Service, run_id: str, *statuses: str) -> None:
    """Until the run ended and the service removed its upload (what the pages read before issue 43)."""
    wait_status(browser, *statuses)
    upload = service.root / "runs" / "uploads" / run_id
    wait_for(lambda: not upload.exists(), "the upload removed")


class TestAfterTheEnd:
    def test_every_verdict_of_a_class_zip_opens_with_its_code(self, alice: Browser, service: Service,
                                                               tmp_path: Path):
        check_id = check_of(alice, "submission", class_zip(tmp_path))
        ended_and_removed(alice, service, check_id, "failed")
        page = alice.open(f"/checks/{check_id}")
        links = page.eval_on_selector_all("#verdicts a", "links => links.map(a => a.getAttribute('href'))")
        assert len(links) == len(STUDENTS), links
        for href, who in zip(sorted(links), STUDENTS, strict=True):
            assert f"/verdicts/{who}%2Ficici_parser.py" in href  # a name with "/", one path segment
            response = page.goto(alice.base + href)
            assert response is not None and response.status == 200, href
            assert f"written by {who}" in page.text_content("main")
            assert f"unfinished: {who}" in page.text_content("main")
            alice.look(f"verdict-class-{who}")

    def test_a_single_uploaded_parsers_verdict_shows_its_code(self, alice: Browser, service: Service,
                                                              tmp_path: Path):
        parser = tmp_path / "mine_parser.py"
        parser.write_text(parser_of("carol"))
        check_id = check_of(alice, "parser", parser)
        ended_and_removed(alice, service, check_id, "failed")
        alice.page.reload()
        alice.page.click("#verdicts a")
        alice.page.wait_for_url(re.compile(r".*/verdicts/mine_parser\.py$"))
        assert "written by carol" in alice.page.text_content("#code-h ~ div")
        assert "in the check's upload" not in alice.page.text_content("main")
        alice.look("verdict-single-ended")

    def test_an_uploaded_targets_diff_is_shown_after_the_end(self, alice: Browser, service: Service,
                                                            tmp_path: Path):
        run_id = submit_upload(alice, "icici-mine", wrong_result(tmp_path), 1)
        ended_and_removed(alice, service, run_id, "failed")
        page = alice.open(f"/runs/{run_id}/attempts/1")
        frame = page.text_content("#frame")
        assert "row(s) differ" in frame and "was removed" not in frame
        first = page.query_selector("#d1")
        assert first is not None and "99999.99" in first.inner_text()
        alice.look("attempt-diff-uploaded-ended")
