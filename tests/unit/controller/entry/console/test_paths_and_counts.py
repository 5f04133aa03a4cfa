"""Issue 43: no server path in a page, and a target's counts are the caller's own.

- A run writes paths into its node details, its summary and its progress lines (``runs/ID/…``,
  absolute in a service). The attempt page and a blueprint run's page show the run-relative
  names instead: neither the server's runs folder nor ``runs/ID`` appears in the text.
- ``/targets`` counted the caller's runs while a target's page counted every tenant's (the
  shared history). Both now count the caller's own; an admin's are everyone's.
"""

from __future__ import annotations

import json
import re
import time

from fastapi.testclient import TestClient

from controller.platform.observability.history import RunRecord
from controller.platform.shared_state import run_history
from tests.unit.controller.entry.console.conftest import BASE, Console

TAGS = re.compile(r"<[^>]+>")


def text_of(html: str) -> str:
    """What a reader sees: the page without its tags (links' targets are URLs, not paths)."""
    return TAGS.sub(" ", html)


def node_end(node: str, attempt: int, outcome: str, detail: str) -> str:
    return json.dumps({"event": "node.finished", "node": node, "attempt": attempt, "outcome": outcome,
                       "duration_seconds": 0.5, "detail": detail})


class TestNoServerPath:
    def test_a_blueprint_run_and_its_attempt_show_run_relative_names(self, console: Console):
        run_id = "20261128-090000-acme-research-ab12"
        folder = console.runs_dir / run_id
        report = folder / "report.md"
        console.run(run_id, agent="blueprint", target="acme-research", status="passed",
                    lines=f"[attempt 1] writer   ok  412 words; runs/{run_id}/attempts/1/report.md\n"
                          f"[setup] finish  passed {report}\n",
                    summary={"status": "passed", "attempts": 1, "max_attempts": 3, "parser_path": str(report),
                             "run_dir": str(folder)})
        console.write(run_id, "events.jsonl", "\n".join([
            node_end("writer", 1, "ok", f"412 words; {folder}/attempts/1/report.md"),
            node_end("qa", 1, "passed", "built-in checks passed"),
            node_end("finish", 1, "passed", str(report)),
            node_end("partial", 1, "failed",
                     f"3 of 3 attempt(s) used; partial output runs/{run_id}/partial.md")]) + "\n")
        console.write(run_id, "attempts/1/report.md", "# Acme\n")
        for path in (f"/runs/{run_id}", f"/runs/{run_id}/attempts/1"):
            html = console.client.get(path).text
            seen = text_of(html)
            assert str(console.runs_dir) not in html and f"runs/{run_id}" not in seen, path
            assert "attempts/1/report.md" in seen, path
        steps = text_of(console.client.get(f"/runs/{run_id}").text)
        assert "partial output partial.md" in steps and "report.md" in steps


def _client(console: Console, token: str) -> TestClient:
    client = TestClient(console.client.app, base_url=BASE, client=("127.0.0.1", 50001))
    page = client.get("/sign-in").text
    csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page)
    assert csrf
    assert client.post("/sign-in", data={"token": token, "csrf": csrf.group(1), "next": "/"},
                       follow_redirects=False).status_code == 303
    return client


class TestTargetCounts:
    def test_targets_and_a_target_s_page_count_only_the_caller_s_runs(self, console: Console):
        """Alice's pages count her one passed run; Bob's his two failed ones; neither sees the other's."""
        alice, bob = _client(console, console.token("alice")), _client(console, console.token("bob"))
        admin = _client(console, console.token("root", admin=True))
        console.run("a-1", owner="alice", status="passed")
        history = run_history(console.state.settings, console.store)
        now = time.time()
        for n in (1, 2):
            console.run(f"b-{n}", owner="bob", status="failed",
                        summary={"status": "failed", "attempts": 3, "max_attempts": 3, "failures": ["mismatch"] * 3})
        for run_id, status, failures in (("a-1", "passed", ()), ("b-1", "failed", ("mismatch",) * 3),
                                         ("b-2", "failed", ("mismatch",) * 3)):
            history.record(RunRecord(run_id, "bank_parser", "icici", status, 3 if failures else 1, 3, now - 10, now,
                                     10.0, failures=failures))
        listed = text_of(alice.get("/targets").text)
        assert "1 passed" in listed and "failed" not in listed
        page = text_of(alice.get("/targets/bank_parser/icici").text)
        assert "1 ended run(s) of yours through this service; success rate 100 %" in page and "mismatch" not in page
        page = text_of(bob.get("/targets/bank_parser/icici").text)
        assert ("2 ended run(s) of yours through this service; success rate 0 %" in page and "mismatch" in page
                and " 6 " in page)
        assert "2 failed" in text_of(bob.get("/targets").text)
        everyone = text_of(admin.get("/targets/bank_parser/icici").text)
        assert "3 run(s) recorded" in everyone
