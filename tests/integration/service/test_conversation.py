"""An intake conversation over the real service: ``python -m controller serve`` in a subprocess,
each question read from the run's SSE stream and each reply posted to ``/v1/runs/{id}/input``,
to ``passed``; a run waiting for a reply outlives its service (``kill -9``, a new service on the
same store, the reply, the end); the new endpoints' tenancy over real HTTP; and an admin's
``DELETE /v1/history`` removing what it reports.

The intake agent runs nothing in a sandbox, so these runs start no container.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agents.lessons import LESSONS_FILE, ExecutionHistory, FailedAttempt, RunOutcome
from controller.entry.service.client import parse_sse
from controller.platform.settings import PROJECT_ROOT
from tests.integration.service.harness import Service, free_port, wait_for
from tests.integration.service.test_service import add_token

pytestmark = pytest.mark.usefixtures("no_leftovers")
EXAMPLE = "intake-cross-node"
TIMEOUT = httpx.Timeout(30.0, read=300.0)


def script() -> list[str]:
    lines = (PROJECT_ROOT / "data" / EXAMPLE / "replies.txt").read_text().splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    data = tmp_path / "data"
    shutil.copytree(PROJECT_ROOT / "data" / EXAMPLE, data / EXAMPLE)
    (data / EXAMPLE / "replies.txt").unlink()  # the replies come over HTTP
    env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(tmp_path / "runs"),
           "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
           "SBX_LOG_FORMAT": "json", "SBX_PARALLEL_RUNS": "1", "SBX_SERVICE__POLL_SECONDS": "0.2"}
    svc = Service(tmp_path, env, free_port())
    yield svc
    if svc.proc is not None:
        svc.stop(signal.SIGTERM)


def submit(service: Service, headers: dict[str, str]) -> dict:
    accepted = httpx.post(f"{service.url}/v1/runs", json={"target": EXAMPLE, "interactive": True},
                          headers=headers, timeout=60)
    assert accepted.status_code == 202, accepted.text
    return accepted.json()


def converse(service: Service, run_id: str, headers: dict[str, str], replies: list[str]) -> list[tuple[str, dict]]:
    """Follow the run's stream, answering each question with the next reply, until its end."""
    events: list[tuple[str, dict]] = []
    pending = iter(replies)
    with httpx.stream("GET", f"{service.url}/v1/runs/{run_id}/events", headers=headers, timeout=TIMEOUT) as stream:
        assert stream.status_code == 200
        for kind, data in parse_sse(stream.iter_lines()):
            events.append((kind, data))
            if kind == "question":
                posted = httpx.post(f"{service.url}{data['reply']}", json={"reply": next(pending)},
                                    headers=headers, timeout=60)
                assert posted.status_code == 202, posted.text
            if kind == "end":
                break
    return events


def status(service: Service, run_id: str, headers: dict[str, str]) -> str:
    return str(httpx.get(f"{service.url}/v1/runs/{run_id}", headers=headers, timeout=30).json()["status"])


def test_an_intake_conversation_over_http_passes(service: Service):
    """Questions stream as events, replies go to /input, the run waits between them and passes;
    the client without a terminal says how to reply and exits 75, leaving the run waiting."""
    auth = add_token(service, "alice")
    service.start()
    client = service.cli("run", "--server", service.url, "--target", EXAMPLE, "--interactive",
                         SBX_TOKEN=auth["Authorization"][7:])
    assert client.returncode == 75, client.stdout + client.stderr
    run_id = client.stdout.splitlines()[0].split("accepted as run ")[1].split()[0]
    assert "waits for reply 1" in client.stdout and f"/v1/runs/{run_id}/input" in client.stdout
    assert status(service, run_id, auth) == "waiting"

    events = converse(service, run_id, auth, script())
    questions = [data for kind, data in events if kind == "question"]
    assert [q["turn"] for q in questions] == list(range(1, len(script()) + 1))
    assert questions[0]["question"] == "How old are you?"
    end = events[-1][1]
    assert (end["status"], end["exit_code"], end["summary"]["status"]) == ("passed", 0, "passed"), end
    assert end["summary"]["attempts"] == len(script())
    graph = httpx.get(f"{service.url}/v1/runs/{run_id}/artefacts/graph.json", headers=auth).json()
    assert "Porto" in json.dumps(graph)
    history = httpx.get(f"{service.url}/v1/history", params={"agent": "intake"}, headers=auth).json()["runs"]
    assert [(r["id"], r["status"], r["attempts"]) for r in history] == [(run_id, "passed", len(script()))]
    posted = httpx.post(f"{service.url}/v1/runs/{run_id}/input", json={"reply": "late"}, headers=auth)
    assert posted.status_code == 409 and posted.headers["content-type"] == "application/problem+json"


def test_a_waiting_run_survives_a_restart_of_its_service(service: Service):
    """kill -9 while the run waits (it holds no worker and no lease); a new service on the same
    store still has it waiting, takes the reply and resumes it from its checkpoint to the end."""
    service.start()
    run = submit(service, {})
    wait_for(lambda: status(service, run["id"], {}) == "waiting", "the run to wait for reply 1", 120)
    service.stop(signal.SIGKILL)

    service.start()
    row = httpx.get(f"{service.url}/v1/runs/{run['id']}", timeout=30).json()
    assert (row["status"], row["takeovers"]) == ("waiting", 0)
    events = converse(service, run["id"], {}, script())
    end = events[-1][1]
    assert (end["status"], end["exit_code"]) == ("passed", 0), end
    console = (service.root / "runs" / run["id"] / "console.txt").read_text()
    assert console.count(f"resuming run {run['id']}") == len(script())


def test_tenancy_and_an_admins_delete(service: Service):
    alice, bob = add_token(service, "alice"), add_token(service, "bob")
    made = service.cli("tokens", "add", "ops", "--admin")
    admin = {"Authorization": f"Bearer {made.stdout.splitlines()[0]}"}
    lessons = ExecutionHistory(service.root / "runs" / LESSONS_FILE)
    lessons.record(RunOutcome("blueprint", EXAMPLE, "b-1", "offline", "failed", 1,
                             (FailedAttempt(1, "too_short", "too short", ("write at least 300 words",)),)))
    service.start()
    run = submit(service, alice)
    wait_for(lambda: status(service, run["id"], alice) == "waiting", "the run to wait", 120)

    reply = httpx.post(f"{service.url}/v1/runs/{run['id']}/input", json={"reply": "34"}, headers=bob)
    assert reply.status_code == 404 and reply.headers["content-type"] == "application/problem+json"
    assert httpx.post(f"{service.url}/v1/runs/{run['id']}/input", json={"reply": "34"}).status_code == 401
    assert httpx.post(f"{service.url}/v1/runs/{run['id']}/cancel", headers=alice).json()["status"] == "cancelled"
    assert [r["id"] for r in httpx.get(f"{service.url}/v1/history", headers=alice).json()["runs"]] == [run["id"]]
    assert httpx.get(f"{service.url}/v1/history", headers=bob).json()["runs"] == []
    shared = httpx.get(f"{service.url}/v1/lessons", params={"agent": "blueprint", "target": EXAMPLE}, headers=bob)
    assert [les["text"] for les in shared.json()["lessons"]] == ["write at least 300 words"]

    refused = httpx.delete(f"{service.url}/v1/history", params={"target": EXAMPLE}, headers=alice)
    assert refused.status_code == 403 and refused.headers["content-type"] == "application/problem+json"
    deleted = httpx.delete(f"{service.url}/v1/history", params={"target": EXAMPLE}, headers=admin)
    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    assert (body["lessons_runs"], body["lessons_failures"], body["service_runs"]) == (1, 1, 1)
    assert httpx.get(f"{service.url}/v1/history", headers=admin).json()["runs"] == []
    assert httpx.get(f"{service.url}/v1/lessons", params={"agent": "blueprint", "target": EXAMPLE},
                     headers=admin).json()["lessons"] == []
    assert lessons.lessons("blueprint", EXAMPLE) == []
    assert (service.root / "runs" / run["id"] / "run.json").is_file()  # the run's folder stays
