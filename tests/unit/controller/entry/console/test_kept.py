"""A check's verdict pages after its end (issue 43), without an engine: the code is read from
what the check kept (``runs/<id>/kept/``), a name with ``/`` (a parser in a class zip's folder)
routes to its page, and a name cannot reach outside the check's files.
"""

from __future__ import annotations

from urllib.parse import quote

from tests.unit.controller.entry.console.conftest import Console

PATHS = ["_submissions/class", "_submissions/mine_parser.py", "_submissions/carol"]
NAMES = ["alice/icici_parser.py", "mine_parser.py", "carol"]


def ended_check(console: Console) -> None:
    """A failed check of a class zip, a parser file and a submission zip, whose upload is gone."""
    verdicts = [{"name": n, "status": "fail", "rows": None, "seconds": 0.5, "first_difference": f"broke: {n}"}
                for n in NAMES]
    console.run("chk-1", status="failed", options={"kind": "check", "paths": PATHS},
                summary={"status": "failed", "passed": 0, "failed": 3, "unverified": 0, "verdicts": verdicts})
    console.write("chk-1", "kept/_submissions/class/alice/icici_parser.py", "# alice's parser\n")
    console.write("chk-1", "kept/_submissions/mine_parser.py", "# my parser\n")
    console.write("chk-1", "kept/_submissions/carol/custom_parsers/icici_parser.py", "# carol's parser\n")
    console.write("chk-1", "kept/_submissions/carol/helpers.py", "# carol's helpers\n")
    console.write("chk-1", "secret.py", "# not a submission\n")


class TestVerdictPages:
    def test_every_verdict_links_to_a_page_with_its_kept_code(self, console: Console):
        ended_check(console)
        check = console.client.get("/checks/chk-1").text
        for name, code in zip(NAMES, ("alice's parser", "my parser", "carol's parser"), strict=True):
            href = f"/checks/chk-1/verdicts/{quote(name, safe='')}"
            assert f'href="{href}"' in check
            page = console.client.get(href)
            assert page.status_code == 200, (name, page.text[:300])
            assert code in page.text and f"broke: {name}" in page.text

    def test_a_submission_folder_shows_its_files_its_parser_first(self, console: Console):
        ended_check(console)
        html = console.client.get("/checks/chk-1/verdicts/carol").text
        assert html.index("carol/custom_parsers/icici_parser.py") < html.index("carol/helpers.py")
        assert 'id="C1-1"' in html and 'id="C2-1"' in html  # each file's line anchors its own

    def test_a_name_cannot_reach_outside_the_checks_files(self, console: Console):
        ended_check(console)
        for name in ("../secret.py", "..%2Fsecret.py", "class/..%2F..%2Fsecret.py", "%2Fetc%2Fpasswd"):
            assert "not a submission" not in console.client.get(f"/checks/chk-1/verdicts/{name}").text
