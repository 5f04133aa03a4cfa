"""Every page over a store and run folders made by hand: filters, refusals next to their fields,
hostile text inert, the frame diff of a failed attempt, an intake run's memory, the headers."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from agents.ports.memory import ConflictWrite, FieldWrite, MemoryWrite
from controller.entry.console.headers import CSP
from controller.platform.memory_sql import SqliteMemoryStores
from controller.runner.agent_runner import RUN_RECORD_VERSION
from tests.unit.controller.entry.console.conftest import Console

FIELD_ERRORS = re.compile(r'id="([\w-]+)-error" role="alert">([^<]*)<')


def errors(html: str) -> dict[str, str]:
    return dict(FIELD_ERRORS.findall(html))


class TestRunsList:
    def test_filters_search_and_paging(self, console: Console):
        for n in range(30):
            console.run(f"run-{n:02d}", target="icici" if n % 3 else "sbi", status="failed" if n % 2 else "passed")
        assert console.client.get("/").text.count("data-row") == 25
        failed = console.client.get("/?status=failed&target=icici").text
        assert "run-29" in failed and "run-28" not in failed and "run-27" not in failed
        assert "run-07" in console.client.get("/?q=RUN-07").text
        older = re.search(r'href="(\?cursor=\d+)" rel="next"', console.client.get("/").text)
        assert older and "run-00" in console.client.get("/" + older.group(1)).text

    @pytest.mark.parametrize("query", ["status=nope", "agent=nope", "cursor=abc"])
    def test_a_bad_filter_is_a_page_with_the_line(self, console: Console, query: str):
        response = console.client.get(f"/?{query}")
        assert response.status_code == 422 and 'class="problem"' in response.text


class TestSubmit:
    def test_an_unknown_target_is_refused_next_to_the_target(self, console: Console):
        response = console.client.post("/submit/run", data={"target": "nope", "csrf": console.csrf("/submit")})
        assert response.status_code == 422
        assert errors(response.text)["run-target"].startswith("unknown target &#39;nope&#39;")

    def test_a_bad_number_is_refused_next_to_its_field(self, console: Console):
        response = console.client.post("/submit/run", data={"target": "icici", "max_attempts": "99",
                                                            "csrf": console.csrf("/submit")})
        assert "less than or equal to 50" in errors(response.text)["run-max_attempts"]
        assert 'value="99"' in response.text  # what was typed is kept

    def test_a_non_pdf_is_refused_next_to_the_statement(self, console: Console):
        response = console.client.post("/submit/upload", data={"csrf": console.csrf("/submit")},
                                       files={"statement": ("s.pdf", b"not a pdf")})
        assert "is not a PDF" in errors(response.text)["upload-statement"]
        assert not list((console.runs_dir / "uploads").glob("*/*")) if (console.runs_dir / "uploads").exists() else True

    def test_a_check_without_parsers_and_a_broken_zip(self, console: Console):
        token = console.csrf("/submit")
        response = console.client.post("/submit/check", data={"csrf": token, "target": "icici"})
        assert errors(response.text)["check-parser"].startswith("a check needs parser files")
        response = console.client.post("/submit/check", data={"csrf": token, "target": "icici"},
                                       files={"submission": ("class.zip", b"PK not a zip")})
        assert "not a zip archive" in errors(response.text)["check-submission"]

    def test_an_accepted_run_opens_its_page(self, console: Console):
        response = console.client.post("/submit/run", data={"target": "icici", "csrf": console.csrf("/submit")},
                                       follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/runs/")
        assert console.store.get(response.headers["location"].rsplit("/", 1)[1]).status == "queued"


class TestRunPage:
    def test_hostile_lines_are_text_with_anchors(self, console: Console):
        console.run("run-1", lines="==> run\n  [attempt 1] execute   failed  <script>alert(1)</script>\n")
        html = console.client.get("/runs/run-1").text
        assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert 'id="L2" data-node="execute"' in html and 'href="#L2"' in html

    def test_a_live_run_renders_its_journal_and_names_its_stream_after_it(self, console: Console):
        """A running run's lines come from its journal up to its newest event N, and the stream starts
        after N: what the page shows and what the stream sends neither overlap nor leave a gap."""
        console.run("run-2", lines="a\n")
        console.run("run-1", status="queued")
        console.store.claim("w", 30.0)
        last = console.store.append_events("run-1", [("line", {"text": "one"}), ("node_started", {"node": "analyze"}),
                                                     ("line", {"text": "two <b>"})], holder="w")
        html = console.client.get("/runs/run-1").text
        assert f'data-stream="/runs/run-1/live?after={last}"' in html and 'data-lines="2"' in html
        assert '<span>one</span>' in html and '<span>two &lt;b&gt;</span>' in html
        assert "data-stream" not in console.client.get("/runs/run-2").text  # ended: nothing to follow
        assert "data-stream" not in console.client.get("/runs/run-1?lines=1").text  # an earlier page

    def test_the_live_stream_starts_after_the_id_the_page_gave(self, console: Console):
        console.run("run-1", status="queued")
        console.store.claim("w", 30.0)
        console.store.append_events("run-1", [("line", {"text": f"line {n}"}) for n in range(5)], holder="w")
        console.store.finish("run-1", "w", "passed", exit_code=0, summary={"status": "passed"})
        first = console.client.get("/runs/run-1/live?after=0").text
        # 1, 2: statuses; 3-7: lines
        later = console.client.get("/runs/run-1/live", headers={"Last-Event-ID": "5"}).text
        assert first.count("event: line") == 5 and later.count("event: line") == 2
        assert "line 2" not in later and "line 3" in later and "event: end" in later

    def test_the_frame_diff_of_a_failed_attempt_marks_the_first_difference(self, console: Console, tmp_path):
        data = tmp_path / "data" / "icici"
        data.mkdir(parents=True)
        (data / "result.csv").write_text("Date,Balance\n01-08-2024,10.5\n02-08-2024,20\n")
        console.run("run-1", status="failed")
        console.write("run-1", "run.json", {"data_dir": str(tmp_path / "data")})
        console.write("run-1", "attempts/1/result.json", {"columns": ["Date", "Balance"], "data": [
            ["01-08-2024", 10.5], ["02-08-2024", 27.0]]})
        html = console.client.get("/runs/run-1/attempts/1").text
        assert "1 row(s) differ" in html and 'id="d1"' in html
        assert '<td class="cell-diff" title="differs from the right side"><mark>20</mark></td>' in html
        assert '<td class="cell-diff" title="differs from the left side"><mark>27</mark></td>' in html
        assert "<td>02-08-2024</td>" in html and "02-08-2024 | " not in html  # columns, not "a | b" text
        only = console.client.get("/runs/run-1/attempts/1?only=1").text
        assert 'class="frame only-diff"' in only

    def test_output_is_paged_never_whole(self, console: Console):
        console.run("run-1")
        console.write("run-1", "attempts/1/stdout.txt", "".join(f"out {n}\n" for n in range(5000)))
        page = console.client.get("/runs/run-1/attempts/1/stdout?lines=2500").text
        assert page.count("<li id=") == 1000 and "out 2499" in page and "out 3500" not in page

    def test_a_download_is_an_attachment_inside_the_run_only(self, console: Console):
        console.run("run-1")
        console.write("run-1", "attempts/1/parser.py", "<script>alert(1)</script>")
        response = console.client.get("/runs/run-1/files/attempts/1/parser.py")
        assert response.headers["content-disposition"].startswith("attachment")
        assert response.headers["content-type"] == "application/octet-stream"
        assert console.client.get("/runs/run-1/files/..%2F..%2Fservice.sqlite").status_code == 404


class TestIntakePage:
    def test_the_memory_and_the_pending_question(self, console: Console):
        console.run("run-1", agent="intake", target="intake-cross-node", status="queued")
        console.store.claim("w", 30.0)
        console.store.wait("run-1", "w")
        console.write("run-1", "question.json", {"turn": 2, "question": "Where <b>do</b> you live?"})
        console.write("run-1", "run.json", {"schema_version": RUN_RECORD_VERSION, "agent": "intake",
                                            "target": "intake-cross-node"})
        store = SqliteMemoryStores(console.runs_dir).for_run("run-1")  # what the agent writes, through the port
        store.commit(MemoryWrite("run-1", 1, "2026-11-25T10:00:00", fields=(
            FieldWrite("Personal", "age", 34, reasoning="said so"),)))
        store.commit(MemoryWrite("run-1", 2, "2026-11-25T10:01:00", fields=(
            FieldWrite("Personal", "age", 35, reasoning="corrected", correction=True),),
            conflicts=(ConflictWrite("Personal", "age", 34, 35, resolved=True, resolution="the newer reply wins"),)))
        store.close()
        db = sqlite3.connect(console.runs_dir / "run-1" / "conversation.sqlite")
        db.executescript("""
            CREATE TABLE turns (turn INTEGER PRIMARY KEY, question TEXT, reply TEXT, resolution TEXT, at TEXT);
            INSERT INTO turns VALUES (1, '{"text": "How old are you?"}', 'I am 34 <script>alert(1)</script>', '{}',
                                      '2026-11-25T10:00:00');
        """)
        db.commit()
        db.close()
        html = console.client.get("/runs/run-1").text
        assert "Where &lt;b&gt;do&lt;/b&gt; you live?" in html and 'name="reply"' in html
        assert "I am 34 &lt;script&gt;" in html and "the newer reply wins" in html and "was 34" in html
        assert "How old are you?" in html and "correction" in html

    def test_the_turns_come_from_the_run_s_log_through_the_port(self, console: Console):
        console.run("run-1", agent="intake", target="intake-cross-node", status="queued")
        console.write("run-1", "run.json", {"schema_version": RUN_RECORD_VERSION, "agent": "intake",
                                            "target": "intake-cross-node"})
        log = SqliteMemoryStores(console.runs_dir).conversation("run-1")  # what the agent writes
        log.put("turns", 1, json.dumps({"question": {"text": "Where <i>now</i>?"}, "reply": "Porto",
                                        "resolution": {}}), "2026-11-25T10:00:00")
        log.close()
        html = console.client.get("/runs/run-1").text
        assert "Where &lt;i&gt;now&lt;/i&gt;?" in html and "Porto" in html

    def test_a_waiting_run_says_it_waits_for_a_reply_not_running_listen(self, console: Console):
        """Issue 43: the listen node had started and not ended, so the page said "Running: listen"."""
        console.run("run-1", agent="intake", target="intake-cross-node", status="queued")
        console.store.claim("w", 30.0)
        console.store.wait("run-1", "w")
        console.write("run-1", "events.jsonl", '{"event": "node.started", "node": "listen"}\n')
        html = console.client.get("/runs/run-1").text
        note = html[html.index('<span id="running-note"'):]
        note = note[:note.index("</p>")]
        assert '<span id="node-waiting">Waiting for a reply' in note and '<span id="node-running" hidden>' in note
        assert '<span id="running-note" data-ends hidden>' not in note

    def test_a_reply_to_a_run_that_does_not_wait_is_refused_in_the_page(self, console: Console):
        console.run("run-1", agent="intake", target="intake-cross-node")
        response = console.client.post("/runs/run-1/reply", data={"reply": "34", "csrf": console.csrf("/submit")})
        assert response.status_code == 409 and "not waiting for a reply" in response.text


class TestHeaders:
    @pytest.mark.parametrize("path", ["/", "/submit", "/targets", "/targets/bank_parser/icici", "/compare",
                                      "/sign-in", "/nope"])
    def test_every_page_has_the_strict_policy(self, console: Console, path: str):
        headers = console.client.get(path).headers
        assert headers["content-security-policy"] == CSP
        assert "'unsafe-inline'" not in CSP and "'unsafe-eval'" not in CSP and "frame-ancestors 'none'" in CSP
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "same-origin"

    def test_pages_have_no_inline_script_or_handler(self, console: Console):
        console.run("run-1", lines="x\n")
        for path in ("/", "/runs/run-1", "/submit", "/targets/bank_parser/icici"):
            html = console.client.get(path).text
            assert re.findall(r"<script(?![^>]*\bsrc=)", html) == []
            assert not re.search(r"\son[a-z]+=", html)

    def test_the_api_keeps_its_problems(self, console: Console):
        response = console.client.get("/v1/nope")
        assert response.status_code == 404 and response.headers["content-type"] == "application/problem+json"
        assert json.loads(response.text)["status"] == 404
