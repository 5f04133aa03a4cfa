"""The service's HTTP surface without an engine: submission, listing, cancel, events, artefacts,
health, problem details, limits."""

from __future__ import annotations

import json
import re

import pytest

from tests.unit.controller.entry.service.conftest import Service, make_service

PROBLEM_KEYS = {"type", "title", "status", "detail", "instance"}


def assert_problem(response, status: int) -> dict:
    """A problem+json answer with ``status`` and a one-line detail."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert set(body) == PROBLEM_KEYS and body["status"] == status
    assert body["detail"] and "\n" not in body["detail"] and "Traceback" not in body["detail"]
    return body


def sse_events(text: str) -> list[tuple[str, dict]]:
    return [(event, data) for _, event, data in sse_with_ids(text)]


def sse_with_ids(text: str) -> list[tuple[int | None, str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        events.append((int(lines["id"]) if "id" in lines else None, lines["event"], json.loads(lines["data"])))
    return events


class TestSubmit:
    def test_a_named_target_is_accepted_durably(self, service: Service):
        response = service.client.post("/v1/runs", json={"target": "icici", "max_attempts": 2})
        assert response.status_code == 202
        body = response.json()
        assert body["status"] == "queued" and body["owner"] == "~local" and body["agent"] == "bank_parser"
        assert response.headers["location"] == f"/v1/runs/{body['id']}" == body["links"]["self"]
        stored = service.store.get(body["id"])
        assert stored is not None and stored.options == {"max_attempts": 2}

    def test_run_ids_do_not_collide_within_a_second(self):
        """Many runs of one target in one second (the CLI's 16 random bits collided under load)."""
        from controller.entry.service.submit import service_run_id

        ids = {service_run_id("icici") for _ in range(20_000)}
        assert len(ids) == 20_000

    def test_an_unknown_target_is_the_clis_line(self, service: Service):
        body = assert_problem(service.client.post("/v1/runs", json={"target": "nope"}), 422)
        assert body["detail"].startswith("unknown target 'nope'")
        assert service.store.counts() == {}

    @pytest.mark.parametrize("payload", [
        {"target": "../etc"}, {"target": ""}, {"target": "icici", "max_attempts": 0},
        {"target": "icici", "max_attempts": "many"}, {"target": "icici", "coder": "shell"},
        {"target": "icici", "surprise": 1}, {"target": "icici", "agent": "idris"}, {}, [1, 2],
        # issue 42: a strict integer (these were taken: true as 1 attempt)
        {"target": "icici", "max_attempts": "3"}, {"target": "icici", "max_attempts": True},
        {"target": "icici", "max_attempts": 2.0},
    ])
    def test_bad_input_is_422_never_500(self, service: Service, payload):
        assert_problem(service.client.post("/v1/runs", json=payload), 422)
        assert service.store.counts() == {}

    def test_malformed_json(self, service: Service):
        response = service.client.post("/v1/runs", content=b"{not json", headers={"content-type": "application/json"})
        assert_problem(response, 422)

    def test_a_body_over_the_limit_is_413(self, service: Service):
        response = service.client.post("/v1/runs", content=b"{" + b" " * 5000 + b"}",
                                        headers={"content-type": "application/json"})
        assert_problem(response, 413)

    def test_a_chunked_body_over_the_limit_is_413(self, service: Service):
        def chunks():
            for _ in range(10):
                yield b" " * 1000

        response = service.client.post("/v1/runs", content=chunks(), headers={"content-type": "application/json"})
        assert_problem(response, 413)

    def test_quota_per_token_is_429(self, service: Service):
        alice = service.token("alice")
        for _ in range(2):
            assert service.client.post("/v1/runs", json={"target": "icici"}, headers=alice).status_code == 202
        response = service.client.post("/v1/runs", json={"target": "icici"}, headers=alice)
        assert assert_problem(response, 429)["detail"].startswith("alice has 2 queued or running run(s)")
        assert "retry-after" in response.headers
        bob = service.token("bob")
        assert service.client.post("/v1/runs", json={"target": "icici"}, headers=bob).status_code == 202

    def test_a_full_queue_is_503(self, tmp_path):
        service = make_service(tmp_path, quota_per_token=10, queue_limit=1)
        assert service.client.post("/v1/runs", json={"target": "icici"}).status_code == 202
        assert_problem(service.client.post("/v1/runs", json={"target": "icici"}), 503)

    def test_draining_refuses_new_runs(self, service: Service):
        service.state.draining.set()
        assert_problem(service.client.post("/v1/runs", json={"target": "icici"}), 503)


class TestReadRuns:
    def test_get_and_list(self, service: Service):
        service.run("r-1", "~local")
        service.run("r-2", "~local", ended=False)
        one = service.client.get("/v1/runs/r-1").json()
        assert (one["status"], one["exit_code"], one["summary"]) == ("passed", 0, {"status": "passed"})
        page = service.client.get("/v1/runs", params={"limit": 1}).json()
        assert [r["id"] for r in page["runs"]] == ["r-2"] and page["next_cursor"]
        rest = service.client.get("/v1/runs", params={"limit": 1, "cursor": page["next_cursor"]}).json()
        assert [r["id"] for r in rest["runs"]] == ["r-1"] and rest["next_cursor"] is None
        assert [r["id"] for r in service.client.get("/v1/runs?status=passed").json()["runs"]] == ["r-1"]

    @pytest.mark.parametrize("query", ["limit=0", "limit=101", "status=sleeping", "cursor=abc", "limit=x"])
    def test_bad_listing_parameters_are_422(self, service: Service, query):
        assert_problem(service.client.get(f"/v1/runs?{query}"), 422)

    def test_an_unknown_run_is_404(self, service: Service):
        assert_problem(service.client.get("/v1/runs/nope"), 404)


class TestCancel:
    def test_a_queued_run_is_cancelled(self, service: Service):
        run_id = service.client.post("/v1/runs", json={"target": "icici"}).json()["id"]
        response = service.client.post(f"/v1/runs/{run_id}/cancel")
        assert response.status_code == 202 and response.json()["status"] == "cancelled"

    def test_an_ended_run_is_409(self, service: Service):
        service.run("r-1", "~local")
        assert_problem(service.client.post("/v1/runs/r-1/cancel"), 409)


class TestResume:
    def stopped(self, service: Service, run_id: str, status: str = "error") -> None:
        """A run that stopped after it had started: run.json, no summary.json."""
        service.run(run_id, "~local", ended=False)
        run_dir = service.runs_dir / run_id
        (run_dir / "summary.json").unlink()
        (run_dir / "run.json").write_text("{}")
        service.store.claim("w", 30.0)
        service.store.finish(run_id, "w", status, exit_code=130, summary=None, error="interrupted")

    @pytest.mark.parametrize("status", ["error", "cancelled"])
    def test_a_stopped_run_is_queued_again(self, service: Service, status):
        self.stopped(service, "r-1", status)
        response = service.client.post("/v1/runs/r-1/resume")
        assert response.status_code == 202
        assert (response.json()["status"], response.json()["error"]) == ("queued", "")

    def test_a_finished_or_unstarted_run_does_not_resume(self, service: Service):
        service.run("r-passed", "~local")
        assert "only a run that ended in error" in assert_problem(
            service.client.post("/v1/runs/r-passed/resume"), 409)["detail"]
        self.stopped(service, "r-summary")
        (service.runs_dir / "r-summary" / "summary.json").write_text("{}")
        assert "already finished" in assert_problem(service.client.post("/v1/runs/r-summary/resume"), 409)["detail"]
        self.stopped(service, "r-unstarted")
        (service.runs_dir / "r-unstarted" / "run.json").unlink()
        assert "has no run.json" in assert_problem(service.client.post("/v1/runs/r-unstarted/resume"), 409)["detail"]

    def test_resuming_counts_against_the_quota(self, service: Service):
        self.stopped(service, "r-1")
        for _ in range(2):
            assert service.client.post("/v1/runs", json={"target": "icici"}).status_code == 202
        assert_problem(service.client.post("/v1/runs/r-1/resume"), 429)
        assert service.store.get("r-1").status == "error"


class TestEvents:
    def test_a_finished_run_replays_from_the_start_and_ends(self, service: Service):
        service.run("r-1", "~local")
        response = service.client.get("/v1/runs/r-1/events")
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_with_ids(response.text)
        assert [e[0] for e in events] == list(range(1, 8))  # every event numbered, from 1, no gap
        assert events[0][1:] == ("status", {"status": "queued"})
        assert [e[1:] for e in events if e[1] == "line"] == [
            ("line", {"text": "==> run x: icici"}), ("line", {"text": "  [attempt 1] compare   passed"})]
        assert ("node", {"node": "compare", "attempt": 1, "outcome": "passed", "seconds": 0.5,
                         "detail": "equal"}) in [e[1:] for e in events]
        assert events[-1][1] == "end" and events[-1][2]["status"] == "passed" and events[-1][2]["id"] == "r-1"

    @pytest.mark.parametrize("how", ["header", "query"])
    def test_a_reconnect_gets_exactly_the_events_after_the_last_id(self, service: Service, how):
        """Last-Event-ID (or ?after=) 4: events 5.. and nothing before (the old stream replayed all)."""
        service.run("r-1", "~local")
        everything = sse_with_ids(service.client.get("/v1/runs/r-1/events").text)
        if how == "header":
            reply = service.client.get("/v1/runs/r-1/events", headers={"Last-Event-ID": "4"})
        else:
            reply = service.client.get("/v1/runs/r-1/events?after=4")
        assert sse_with_ids(reply.text) == everything[4:]

    @pytest.mark.parametrize("header", ["abc", "-1", "\u00b2", " ", "x" * 33, "9" * 40, "1" * 5000])
    def test_a_last_event_id_the_service_never_gave_starts_from_the_beginning(self, service: Service, header):
        service.run("r-1", "~local")
        reply = service.client.get("/v1/runs/r-1/events", headers={"Last-Event-ID": header.encode("utf-8")})
        assert sse_with_ids(reply.text)[0][0] == 1

    def test_a_live_run_streams_until_it_ends(self, service: Service):
        """Events journaled while a subscriber follows arrive, then the end event closes the stream."""
        service.run("r-1", "~local", ended=False)
        service.store.claim("w", 30.0)
        seen: list[str] = []
        with service.client.stream("GET", "/v1/runs/r-1/events") as response:
            for line in response.iter_lines():
                seen.append(line)
                if line == "event: status":
                    service.store.append_events("r-1", [("line", {"text": "PASSED: late line"})], holder="w")
                    service.store.finish("r-1", "w", "passed", exit_code=0, summary=None)
        text = "\n".join(seen)
        assert '"PASSED: late line"' in text and text.rstrip().splitlines()[-2] == "event: end"

    def test_an_end_the_run_was_resumed_from_does_not_end_the_stream(self, service: Service):
        """An error run resumed: its first end is sent as a status event, the second ends the stream."""
        service.run("r-1", "~local", ended=False)
        service.store.claim("w", 30.0)
        service.store.finish("r-1", "w", "error", exit_code=3, summary=None, error="engine gone")
        service.store.requeue("r-1", quota=9)
        service.store.claim("w", 30.0)
        service.store.finish("r-1", "w", "passed", exit_code=0, summary=None)
        events = sse_with_ids(service.client.get("/v1/runs/r-1/events").text)
        assert [e[1] for e in events].count("end") == 1 and events[-1][1] == "end"
        assert ("status", {"status": "error", "exit_code": 3, "error": "engine gone"}) in [e[1:] for e in events]

    def test_a_draining_service_ends_the_stream(self, service: Service):
        service.run("r-1", "~local", ended=False)
        service.state.draining.set()
        events = sse_events(service.client.get("/v1/runs/r-1/events").text)
        assert events[-1][0] == "draining"


class TestArtefacts:
    def test_listing_and_a_file(self, service: Service):
        service.run("r-1", "~local")
        listed = {e["path"] for e in service.client.get("/v1/runs/r-1/artefacts").json()}
        assert {"attempts/1/parser.py", "summary.json", "console.txt"} <= listed
        response = service.client.get("/v1/runs/r-1/artefacts/attempts/1/parser.py")
        assert response.status_code == 200 and response.text.startswith("def parse")
        assert response.headers["content-type"].startswith("text/plain")
        assert response.headers["x-content-type-options"] == "nosniff"

    @pytest.mark.parametrize("path", [
        "../service.sqlite", "..%2Fservice.sqlite", "%2e%2e/service.sqlite", "%2E%2E%2Fservice.sqlite",
        "attempts/../../service.sqlite", "/etc/passwd", "%2Fetc%2Fpasswd", "attempts/1/../../../service.sqlite",
        "attempts", "attempts/1/", "a%00b", "attempts\\1\\parser.py", "nope.txt",
    ])
    def test_traversal_is_impossible(self, service: Service, path):
        service.run("r-1", "~local")
        response = service.client.get(f"/v1/runs/r-1/artefacts/{path}")
        assert response.status_code == 404
        assert b"SQLite format" not in response.content and b"root:" not in response.content

    def test_symlinks_are_not_followed(self, service: Service, tmp_path):
        service.run("r-1", "~local")
        secret = tmp_path / "secret"
        secret.mkdir()
        (secret / "key.txt").write_text("TOP SECRET")
        run_dir = service.runs_dir / "r-1"
        (run_dir / "link.txt").symlink_to(secret / "key.txt")
        (run_dir / "linkdir").symlink_to(secret)
        (run_dir / "attempts" / "1" / "up").symlink_to(run_dir.parent)
        for path in ("link.txt", "linkdir/key.txt", "attempts/1/up/service.sqlite"):
            response = service.client.get(f"/v1/runs/r-1/artefacts/{path}")
            assert response.status_code == 404 and b"TOP SECRET" not in response.content
        listed = {e["path"] for e in service.client.get("/v1/runs/r-1/artefacts").json()}
        assert not {"link.txt", "linkdir/key.txt"} & listed


class TestHealth:
    def test_healthz_readyz_and_docs(self, service: Service):
        assert service.client.get("/healthz").json()["status"] == "ok"
        ready = service.client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {"store": "ok", "engine": "ok",
                                                                       "images": "ok", "accepting": "ok"}
        paths = service.client.get("/openapi.json").json()["paths"]
        assert {"/v1/runs", "/v1/runs/{run_id}", "/v1/runs/{run_id}/events", "/v1/runs/{run_id}/cancel",
                "/v1/runs/{run_id}/artefacts/{path}", "/healthz", "/readyz"} <= set(paths)
        assert service.client.get("/docs").status_code == 200

    def test_docs_are_served_by_the_service_itself_under_a_csp_without_inline_scripts(self, service: Service):
        """/docs loads Swagger UI from the service, not a CDN, and has no inline script (before:
        FastAPI's page loaded its files from cdn.jsdelivr.net, so it was blank offline)."""
        page = service.client.get("/docs")
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert "unsafe-inline" not in page.headers["content-security-policy"].split("script-src")[1].split(";")[0]
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(source.startswith("/docs/") for source in sources), sources
        assert re.search(r"<script>(?!</script>)", page.text) is None  # every script is a file
        for source in sources:
            assert service.client.get(source).status_code == 200, source
        assert "SwaggerUIBundle" in service.client.get("/docs/start/swagger-init.js").text

    def test_readyz_says_why_not(self, tmp_path):
        service = make_service(tmp_path, engine_up=False)
        response = service.client.get("/readyz")
        assert response.status_code == 503
        assert response.json()["checks"]["engine"].startswith("no Docker engine is reachable")

    def test_readyz_while_draining(self, service: Service):
        service.state.draining.set()
        assert service.client.get("/readyz").status_code == 503
        assert service.client.get("/healthz").json()["status"] == "draining"


class TestStats:
    def test_success_rates_per_agent_and_target_of_ones_own_runs(self, service: Service):
        alice, bob = service.token("alice"), service.token("bob")
        root = service.token("root", admin=True)
        for number, (owner, status) in enumerate([("alice", "passed"), ("alice", "failed"), ("alice", "error"),
                                                  ("alice", "passed"), ("bob", "failed")]):
            service.run(f"r-{number}", owner, ended=False)
            service.store.claim("w", 30.0)
            service.store.finish(f"r-{number}", "w", status, exit_code=0, summary=None)
        mine = service.client.get("/v1/stats", headers=alice).json()["targets"]
        assert mine == [{"agent": "bank_parser", "target": "icici", "runs": {"passed": 2, "failed": 1, "error": 1},
                         "success_rate": 2 / 3}]
        assert service.client.get("/v1/stats", headers=bob).json()["targets"][0]["success_rate"] == 0.0
        everyone = service.client.get("/v1/stats", headers=root).json()["targets"][0]
        assert everyone["runs"] == {"passed": 2, "failed": 2, "error": 1}
        assert service.client.get("/v1/stats").status_code == 401

    def test_no_verdict_yet(self, service: Service):
        service.run("r-1", "~local", ended=False)
        (row,) = service.client.get("/v1/stats").json()["targets"]
        assert (row["runs"], row["success_rate"]) == ({"queued": 1}, None)
