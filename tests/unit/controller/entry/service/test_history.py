"""GET /v1/history, GET /v1/lessons and DELETE /v1/history without an engine.

Tenancy: the history is of the caller's own runs (an admin's: everyone's); lessons are per agent
and target and shared by every tenant (the agents read the same rows before every run);
forgetting is for admins only and removes exactly what it reports, keeping run folders and open
runs.
"""

from __future__ import annotations

from agents.lessons import LESSONS_FILE, ExecutionHistory, FailedAttempt, RunOutcome
from controller.platform.store import NewRun
from tests.unit.controller.entry.service.conftest import Service
from tests.unit.controller.entry.service.test_app import assert_problem


def ended(service: Service, run_id: str, owner: str, *, target: str = "icici", status: str = "passed",
          failures: list[str] | None = None) -> None:
    service.store.submit(NewRun(run_id, owner, "bank_parser", target), quota=99, queue_limit=99)
    service.store.claim("w", 30.0)
    summary = {"status": status, "attempts": 1 + len(failures or []), "max_attempts": 3,
               "failures": failures or [], "coder": "offline"}
    service.store.finish(run_id, "w", status, exit_code=0 if status == "passed" else 1, summary=summary)
    (service.runs_dir / run_id).mkdir(parents=True, exist_ok=True)


def lessons_store(service: Service) -> ExecutionHistory:
    return ExecutionHistory(service.runs_dir / LESSONS_FILE)


def learn(service: Service, run_id: str, target: str, *lessons: str, agent: str = "blueprint") -> None:
    failures = tuple(FailedAttempt(i + 1, "too_short", f"attempt {i + 1} too short", (text,))
                     for i, text in enumerate(lessons))
    lessons_store(service).record(RunOutcome(agent, target, run_id, "offline", "failed", len(lessons), failures))


class TestHistory:
    def test_own_ended_runs_newest_first_with_outcome_attempts_and_failure_kinds(self, service: Service):
        alice, bob, admin = service.token("alice"), service.token("bob"), service.token("ops", admin=True)
        ended(service, "r-1", "alice", failures=["mismatch"])
        ended(service, "r-2", "bob", status="failed", failures=["mismatch", "timeout"])
        ended(service, "r-3", "alice", target="sbi")
        service.store.submit(NewRun("r-4", "alice", "bank_parser", "icici"), quota=99, queue_limit=99)  # queued
        mine = service.client.get("/v1/history", headers=alice).json()
        assert [r["id"] for r in mine["runs"]] == ["r-3", "r-1"] and mine["next_cursor"] is None
        first = mine["runs"][1]
        assert (first["status"], first["attempts"], first["max_attempts"], first["failures"], first["coder"]) == (
            "passed", 2, 3, ["mismatch"], "offline")
        assert first["duration_seconds"] is not None and first["duration_seconds"] >= 0
        assert [r["id"] for r in service.client.get("/v1/history", headers=bob).json()["runs"]] == ["r-2"]
        everyone = service.client.get("/v1/history", headers=admin).json()["runs"]
        assert [r["id"] for r in everyone] == ["r-3", "r-2", "r-1"]

    def test_pages_and_filters(self, service: Service):
        for n in range(5):
            ended(service, f"r-{n}", "local", target="icici" if n % 2 else "sbi")
        page = service.client.get("/v1/history", params={"limit": 2}).json()
        assert [r["id"] for r in page["runs"]] == ["r-4", "r-3"]
        rest = service.client.get("/v1/history", params={"limit": 2, "cursor": page["next_cursor"]}).json()
        assert [r["id"] for r in rest["runs"]] == ["r-2", "r-1"]
        icici = service.client.get("/v1/history", params={"target": "icici", "agent": "bank_parser"}).json()
        assert [r["id"] for r in icici["runs"]] == ["r-3", "r-1"]
        assert service.client.get("/v1/history", params={"agent": "intake"}).json()["runs"] == []

    def test_bad_parameters_are_422_and_no_token_401(self, service: Service):
        for query in ({"limit": 0}, {"limit": 101}, {"cursor": "x"}, {"target": "t" * 129}):
            assert_problem(service.client.get("/v1/history", params=query), 422)
        service.token("alice")
        assert_problem(service.client.get("/v1/history"), 401)


class TestLessons:
    def test_the_lessons_the_next_run_is_given_and_the_patterns(self, service: Service):
        learn(service, "b-1", "acme-research", "write at least 300 words", "add a Risks section")
        learn(service, "b-2", "acme-research", "write at least 300 words")
        learn(service, "b-3", "other", "unrelated")
        body = service.client.get("/v1/lessons", params={"agent": "blueprint", "target": "acme-research"}).json()
        given = lessons_store(service).lessons("blueprint", "acme-research")  # what the agent reads
        assert [(les["text"], les["seen"]) for les in body["lessons"]] == [(les.text, les.seen) for les in given]
        assert {les["text"] for les in body["lessons"]} == {"write at least 300 words", "add a Risks section"}
        assert body["failure_patterns"] == [{"kind": "too_short", "attempts": 3, "runs": 2, "fixed_runs": 0,
                                             "last_seen": body["failure_patterns"][0]["last_seen"]}]
        assert body["runs"] == {"failed": 2}
        assert "- write at least 300 words (too_short, seen 2 times)" in body["lessons_markdown"]

    def test_shared_by_every_tenant(self, service: Service):
        learn(service, "b-1", "acme-research", "write at least 300 words")
        bob = service.token("bob")
        body = service.client.get("/v1/lessons", params={"agent": "blueprint", "target": "acme-research"},
                                  headers=bob).json()
        assert [les["text"] for les in body["lessons"]] == ["write at least 300 words"]

    def test_none_yet(self, service: Service):
        body = service.client.get("/v1/lessons", params={"agent": "bank_parser", "target": "icici"}).json()
        assert (body["lessons"], body["failure_patterns"], body["runs"]) == ([], [], {})
        assert not (service.runs_dir / LESSONS_FILE).exists()

    def test_bad_parameters_are_422(self, service: Service):
        body = assert_problem(service.client.get("/v1/lessons", params={"agent": "nope", "target": "x"}), 422)
        assert "unknown agent 'nope'" in body["detail"]
        assert_problem(service.client.get("/v1/lessons", params={"agent": "blueprint"}), 422)
        assert_problem(service.client.get("/v1/lessons", params={"target": "x"}), 422)

    def test_an_unreadable_lessons_file_is_503(self, service: Service):
        service.runs_dir.mkdir(parents=True, exist_ok=True)
        (service.runs_dir / LESSONS_FILE).write_bytes(b"garbage" * 200)
        assert_problem(service.client.get("/v1/lessons", params={"agent": "blueprint", "target": "x"}), 503)


class TestForget:
    def test_only_an_admin_may_and_a_target_is_needed(self, service: Service):
        alice, admin = service.token("alice"), service.token("ops", admin=True)
        ended(service, "r-1", "alice")
        learn(service, "b-1", "icici", "a lesson", agent="bank_parser")
        body = assert_problem(service.client.delete("/v1/history", params={"target": "icici"}, headers=alice), 403)
        assert body["detail"] == "only an admin token may delete history"
        assert_problem(service.client.delete("/v1/history", headers=admin), 422)
        assert_problem(service.client.delete("/v1/history", params={"target": "icici"}), 401)
        assert service.store.get("r-1") is not None and lessons_store(service).lessons("bank_parser", "icici")

    def test_an_admin_removes_the_lessons_and_ended_runs_and_keeps_the_rest(self, service: Service):
        ended(service, "r-1", "alice")
        ended(service, "r-2", "bob", status="failed", failures=["mismatch"])
        ended(service, "r-3", "bob", target="sbi")
        service.store.submit(NewRun("r-4", "alice", "bank_parser", "icici"), quota=99, queue_limit=99)
        learn(service, "l-1", "icici", "header rows kept as data", agent="bank_parser")
        learn(service, "l-2", "icici", "write more", "and more")
        learn(service, "l-3", "sbi", "another target", agent="bank_parser")
        response = service.client.delete("/v1/history", params={"target": "icici"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["lessons_runs"], body["lessons_failures"], body["service_runs"]) == (2, 3, 2)
        assert service.store.get("r-1") is None and service.store.get("r-2") is None
        assert service.store.get("r-3") is not None and service.store.get("r-4").status == "queued"
        assert (service.runs_dir / "r-1").is_dir()  # run folders are kept
        assert service.client.get("/v1/history", params={"target": "icici"}).json()["runs"] == []
        for agent in ("bank_parser", "blueprint"):
            assert service.client.get("/v1/lessons", params={"agent": agent, "target": "icici"}).json()["lessons"] == []
        assert lessons_store(service).lessons("bank_parser", "sbi") != []

    def test_forget_removes_what_the_runs_kept_of_their_uploads(self, service: Service):
        """Issue 43: the code and expected frames kept with an ended run (kept/) go with it."""
        ended(service, "r-1", "alice")
        ended(service, "r-2", "alice", target="sbi")
        for run_id in ("r-1", "r-2"):
            (service.runs_dir / run_id / "kept" / "_submissions").mkdir(parents=True)
            (service.runs_dir / run_id / "kept" / "_submissions" / "p.py").write_text("def parse(p): ...\n")
            (service.runs_dir / run_id / "summary.json").write_text("{}")
        assert service.client.delete("/v1/history", params={"target": "icici"}).json()["service_runs"] == 1
        assert not (service.runs_dir / "r-1" / "kept").exists()
        assert (service.runs_dir / "r-1" / "summary.json").is_file()  # the rest of the folder stays
        assert (service.runs_dir / "r-2" / "kept" / "_submissions" / "p.py").is_file()  # another target's

    def test_one_agent_only(self, service: Service):
        learn(service, "l-1", "icici", "parser lesson", agent="bank_parser")
        learn(service, "l-2", "icici", "blueprint lesson")
        body = service.client.delete("/v1/history", params={"target": "icici", "agent": "blueprint"}).json()
        assert (body["lessons_runs"], body["agent"]) == (1, "blueprint")
        assert [les.text for les in lessons_store(service).lessons("bank_parser", "icici")] == ["parser lesson"]
