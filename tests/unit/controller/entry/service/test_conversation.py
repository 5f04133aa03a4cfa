"""Intake replies over the service without an engine: POST /v1/runs/{id}/input, the question
event, the worker parking a run that waits (no worker, no lease) and the client's answers.

The order that matters: a reply is stored in the run folder (once per turn) before the run is
queued again, so the worker that claims it always finds it; a second reply to one turn never
replaces the first.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import httpx
import pytest

from agents.ports.replies import PendingQuestion, read_reply, write_question, write_reply
from controller.entry.service import events
from controller.entry.service.client import LeftWaiting, answer, follow
from controller.platform.store import NewRun, RunRow
from controller.platform.store.sqlite import SqliteStore
from controller.runner.dispatch import child
from controller.runner.dispatch.journal import question_event
from controller.runner.dispatch.workers import RunWorkers
from tests.unit.controller.entry.service.conftest import Service, make_settings
from tests.unit.controller.entry.service.test_app import assert_problem, sse_events
from tests.waiting import wait_for


def waiting_run(service: Service, run_id: str, owner: str, turn: int = 1) -> RunRow:
    """An intake run that stopped on question ``turn``."""
    service.store.submit(NewRun(run_id, owner, "intake", "intake-cross-node", {"interactive": True}),
                         quota=99, queue_limit=99)
    service.store.claim("w", 30.0)
    (service.runs_dir / run_id).mkdir(parents=True)
    service.store.append_events(run_id, [("line",
                                          {"text": f"  [attempt {turn - 1}] ask       field  How old are you?"})])
    write_question(service.runs_dir / run_id, turn, "How old are you?")
    assert service.store.wait(run_id, "w", question_event(run_id, PendingQuestion(turn, "How old are you?")))
    row = service.store.get(run_id)
    assert row is not None
    return row


class TestInput:
    def test_a_reply_is_stored_and_the_run_queued(self, service: Service):
        waiting_run(service, "r-1", "~local", turn=3)
        response = service.client.post("/v1/runs/r-1/input", json={"reply": "I am 41\nyears old"})
        assert response.status_code == 202, response.text
        assert response.json()["status"] == "queued" and service.store.get("r-1").status == "queued"
        assert read_reply(service.runs_dir / "r-1", 3) == "I am 41 years old"
        assert service.state.submitted.is_set()  # an idle worker is woken
        assert_problem(service.client.post("/v1/runs/r-1/input", json={"reply": "again"}), 409)
        assert read_reply(service.runs_dir / "r-1", 3) == "I am 41 years old"

    def test_a_run_that_does_not_wait_is_409(self, service: Service):
        service.run("r-1", "~local")
        body = assert_problem(service.client.post("/v1/runs/r-1/input", json={"reply": "x"}), 409)
        assert body["detail"] == "run r-1 is passed, not waiting for a reply"

    def test_another_tenants_run_is_404_like_none(self, service: Service):
        alice, bob = service.token("alice"), service.token("bob")
        waiting_run(service, "r-1", "alice")
        assert_problem(service.client.post("/v1/runs/r-1/input", json={"reply": "x"}, headers=bob), 404)
        assert_problem(service.client.post("/v1/runs/nope/input", json={"reply": "x"}, headers=bob), 404)
        assert_problem(service.client.post("/v1/runs/r-1/input", json={"reply": "x"}), 401)
        assert service.client.post("/v1/runs/r-1/input", json={"reply": "x"}, headers=alice).status_code == 202

    @pytest.mark.parametrize("body", [{}, {"reply": ""}, {"reply": "x" * 2001}, {"reply": 5},
                                      {"reply": "x", "more": 1}, [1]])
    def test_a_bad_reply_is_422(self, service: Service, body):
        waiting_run(service, "r-1", "~local")
        assert_problem(service.client.post("/v1/runs/r-1/input", json=body), 422)
        assert service.store.get("r-1").status == "waiting"

    def test_a_stored_reply_whose_run_was_not_queued_is_used(self, service: Service):
        """The request that stored it died before queueing the run: the next one queues it, 409."""
        waiting_run(service, "r-1", "~local")
        write_reply(service.runs_dir / "r-1", 1, "first")
        assert_problem(service.client.post("/v1/runs/r-1/input", json={"reply": "second"}), 409)
        assert service.store.get("r-1").status == "queued"
        assert read_reply(service.runs_dir / "r-1", 1) == "first"

    def test_a_waiting_run_is_cancelled_at_once(self, service: Service):
        waiting_run(service, "r-1", "~local")
        assert service.client.post("/v1/runs/r-1/cancel").json()["status"] == "cancelled"

    def test_an_interactive_run_of_an_agent_without_replies_is_422(self, service: Service):
        body = assert_problem(service.client.post("/v1/runs", json={"target": "icici", "interactive": True}), 422)
        assert "takes no replies" in body["detail"]

    def test_an_interactive_intake_run_needs_no_script_and_is_queued_with_the_option(self, service: Service):
        response = service.client.post("/v1/runs", json={"target": "intake-cross-node", "interactive": True})
        assert response.status_code == 202, response.text
        assert response.json()["options"] == {"interactive": True}


class TestQuestionEvent:
    def test_a_waiting_run_streams_its_question_once_and_stays_open(self, service: Service, monkeypatch):
        waiting_run(service, "r-1", "~local", turn=2)
        checks = iter([False, False, True])  # a few polls, then the service drains
        monkeypatch.setattr(events, "POLL_SECONDS", 0.01)

        async def collect() -> str:
            parts = []
            async for part in events.stream(lambda: service.store.get("r-1"),
                                            lambda after: service.store.events("r-1", after=after, limit=99),
                                            lambda row: {"id": row.id}, lambda: next(checks), asyncio.sleep):
                parts.append(part)
            return "".join(parts)

        text = asyncio.run(collect())
        got = sse_events(text)
        assert [kind for kind, _ in got] == ["status", "status", "line", "status", "question", "draining"]
        assert got[4][1] == {"id": "r-1", "turn": 2, "question": "How old are you?", "reply": "/v1/runs/r-1/input"}


FAKE_ASKING_CHILD = r"""
import json, pathlib, sys
run_dir = pathlib.Path(sys.argv[1])
print("  [attempt 0] ask       field   How old are you?", flush=True)
(run_dir / "question.json").write_text(json.dumps({"turn": 1, "question": "How old are you?"}))
print("==> run waiting for reply 1: How old are you?", flush=True)
sys.exit(75)
"""


class TestWorker:
    def test_a_child_that_waits_parks_its_run_without_worker_or_lease(self, tmp_path: Path):
        settings = make_settings(tmp_path, poll_seconds=0.05, renew_seconds=0.5, lease_seconds=2)
        store = SqliteStore(tmp_path / "runs" / "service.sqlite")
        pool = RunWorkers(settings, store, worker_id="me", env={},
                          command=lambda row, run_dir: [sys.executable, "-c", FAKE_ASKING_CHILD, str(run_dir)])
        store.submit(NewRun("r-1", "~local", "intake", "t", {"interactive": True}), quota=9, queue_limit=9)
        pool.start()
        try:
            wait_for(lambda: store.get("r-1").status == "waiting", "the run to wait")
        finally:
            pool.stop(5.0)
        row = store.get("r-1")
        assert (row.worker, row.lease_until, row.exit_code, row.ended) == (None, None, None, False)
        assert "waiting for reply 1" in (settings.runs_dir / "r-1" / "console.txt").read_text()

    def test_exit_75_without_a_question_is_an_error(self, tmp_path: Path):
        assert child.waits(75, tmp_path) is False
        write_question(tmp_path, 1, "q")
        assert child.waits(75, tmp_path) is True and child.waits(1, tmp_path) is False

    def test_an_interactive_run_is_started_to_await_replies(self, tmp_path: Path):
        row = RunRow("r-1", 1, "o", "intake", "t", {"interactive": True}, "running", "w", None, False, 0, 0.0,
                     None, None, None, None, "")
        assert child.command(row, tmp_path / "r-1")[-1] == "--await-replies"
        (tmp_path / "r-1").mkdir()
        (tmp_path / "r-1" / "run.json").write_text("{}")
        assert "--await-replies" not in child.command(row, tmp_path / "r-1")  # resume: run.json says it


SSE_WAITING = ('event: status\ndata: {"id": "r-1", "status": "waiting"}\n\n'
               'event: question\ndata: {"id": "r-1", "turn": 1, "question": "How old?", '
               '"reply": "/v1/runs/r-1/input"}\n\n')
SSE_END = ('event: line\ndata: {"text": "PASSED"}\n\n'
           'event: end\ndata: {"id": "r-1", "status": "passed", "exit_code": 0}\n\n')


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class TestClient:
    def _client(self, posted: list[dict]) -> httpx.Client:
        def handle(request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                posted.append(json.loads(request.content))
                return httpx.Response(202, json={"id": "r-1", "status": "queued"})
            body = SSE_WAITING + (SSE_END if posted else "")
            return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

        return httpx.Client(base_url="http://svc", transport=httpx.MockTransport(handle))

    def test_a_terminal_reply_is_posted_and_the_run_followed_to_its_end(self, monkeypatch):
        monkeypatch.setattr("controller.entry.service.client.RECONNECT_SECONDS", 0)
        posted: list[dict] = []
        out = io.StringIO()
        with self._client(posted) as client:
            end = follow(client, "r-1", out, answer(client, "http://svc", "r-1", out, Tty("41\n")))
        assert posted == [{"reply": "41"}] and end["status"] == "passed"
        assert "  ? How old?" in out.getvalue() and "PASSED" in out.getvalue()

    def test_without_a_terminal_it_says_how_to_reply_and_leaves_the_run_waiting(self):
        posted: list[dict] = []
        out = io.StringIO()
        with self._client(posted) as client, pytest.raises(LeftWaiting) as waiting:
            follow(client, "r-1", out, answer(client, "http://svc", "r-1", out, io.StringIO("41\n")))
        assert posted == [] and waiting.value.exit_code == 75
        assert "curl -X POST http://svc/v1/runs/r-1/input" in waiting.value.one_line()
