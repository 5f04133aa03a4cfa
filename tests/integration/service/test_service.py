"""The service for real: ``python -m controller serve`` on 127.0.0.1 (a free port) in a subprocess,
the real Docker engine, a token, ICICI submitted and followed over SSE until it passes; the
``run --server`` client; and a service killed with ``kill -9`` mid-run whose run is taken over
and resumed after a restart."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller.entry.service.client import parse_sse
from controller.platform.settings import PROJECT_ROOT
from tests.conftest import ICICI
from tests.integration.controller.test_resume import ATTEMPTS, spoil_one_cell
from tests.integration.service.harness import Service, free_port, wait_for

pytestmark = pytest.mark.usefixtures("no_leftovers")


@pytest.fixture
def service(tmp_path: Path, parser_image: str) -> Iterator[Service]:
    data = tmp_path / "data"
    shutil.copytree(ICICI, data / "icici")
    env = {**os.environ, "SBX_DATA_DIR": str(data), "SBX_RUNS_DIR": str(tmp_path / "runs"),
           "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
           "SBX_LOG_FORMAT": "json", "SBX_SANDBOX__TIMEOUT_SECONDS": "120", "SBX_PARALLEL_RUNS": "1",
           "SBX_SERVICE__LEASE_SECONDS": "4", "SBX_SERVICE__RENEW_SECONDS": "1", "SBX_SERVICE__POLL_SECONDS": "0.2"}
    svc = Service(tmp_path, env, free_port())
    yield svc
    if svc.proc is not None:
        svc.stop(signal.SIGTERM)


def add_token(service: Service, name: str) -> dict[str, str]:
    made = service.cli("tokens", "add", name)
    assert made.returncode == 0, made.stderr
    return {"Authorization": f"Bearer {made.stdout.splitlines()[0]}"}


def follow(url: str, headers: dict[str, str]) -> list[tuple[str, dict]]:
    with httpx.stream("GET", url, headers=headers, timeout=httpx.Timeout(30.0, read=600.0)) as response:
        assert response.status_code == 200
        return list(parse_sse(response.iter_lines()))


def test_icici_passes_through_the_service_and_its_client(service: Service):
    auth = add_token(service, "alice")
    service.start()
    assert httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}).status_code == 401

    accepted = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, headers=auth, timeout=60)
    assert accepted.status_code == 202, accepted.text
    run = accepted.json()
    events = follow(f"{service.url}{run['links']['events']}", auth)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "status" and kinds[-1] == "end"
    end = events[-1][1]
    assert (end["status"], end["exit_code"], end["summary"]["status"]) == ("passed", 0, "passed"), end
    nodes = [(data["node"], data["outcome"]) for kind, data in events if kind == "node"]
    assert ("compare", "passed") in nodes and ("finalize", "passed") in nodes
    lines = [data["text"] for kind, data in events if kind == "line"]
    assert (lines[0].startswith(f"==> run {run['id']}: icici")
            and "PASSED: the parser's DataFrame equals result.csv" in lines)
    parser = httpx.get(f"{service.url}/v1/runs/{run['id']}/artefacts/attempts/1/parser.py", headers=auth)
    assert parser.status_code == 200 and "def parse" in parser.text

    client = service.cli("run", "--server", service.url, "--target", "icici", SBX_TOKEN=auth["Authorization"][7:])
    assert client.returncode == 0, client.stdout + client.stderr
    assert "PASSED: the parser's DataFrame equals result.csv" in client.stdout
    assert client.stdout.splitlines()[1].startswith("==> run ")

    assert service.stop(signal.SIGTERM) == 0


def test_a_run_of_a_service_killed_mid_run_is_resumed_after_a_restart(service: Service):
    """kill -9 of the service during attempt 1: its child stops (stdin closed), and the restarted
    service takes the expired lease over and resumes the run from its checkpoint."""
    spoil_one_cell(service.root / "data")  # no parser can pass: the run goes through every attempt
    service.start()
    run = httpx.post(f"{service.url}/v1/runs", json={"target": "icici", "max_attempts": ATTEMPTS}, timeout=60).json()
    console = service.root / "runs" / run["id"] / "console.txt"
    wait_for(lambda: console.is_file() and "[attempt 1] compare" in console.read_text(), "attempt 1's compare")
    service.stop(signal.SIGKILL)

    service.start()
    end = follow(f"{service.url}/v1/runs/{run['id']}/events", {})[-1][1]
    assert (end["status"], end["exit_code"], end["takeovers"]) == ("failed", 1, 1), end
    assert f"resuming run {run['id']}" in console.read_text()
    summary = json.loads((service.root / "runs" / run["id"] / "summary.json").read_text())
    assert summary["attempts"] == ATTEMPTS


def test_sigterm_drains_and_the_next_start_resumes(service: Service):
    """SIGTERM during a run: the service refuses new runs, interrupts the child (its containers
    removed, its checkpoint kept), exits 0 with the run queued again; the next start resumes it."""
    spoil_one_cell(service.root / "data")
    service.start()
    run = httpx.post(f"{service.url}/v1/runs", json={"target": "icici", "max_attempts": ATTEMPTS}, timeout=60).json()
    console = service.root / "runs" / run["id"] / "console.txt"
    wait_for(lambda: console.is_file() and "[attempt 1] compare" in console.read_text(), "attempt 1's compare")
    assert service.stop(signal.SIGTERM) == 0
    log = (service.root / "service.log").read_text()
    assert '"service.run_released"' in log and '"requeued": true' in log

    service.start()
    end = follow(f"{service.url}/v1/runs/{run['id']}/events", {})[-1][1]
    assert (end["status"], end["exit_code"], end["takeovers"]) == ("failed", 1, 0), end
    assert f"resuming run {run['id']}" in console.read_text()


def test_no_answer_names_a_server_folder_and_internal_files_are_not_served(service: Service, tmp_path: Path):
    """Issue 42: before, the SSE ``node`` event of ``save``, ``run.json`` (the upload's folder),
    ``summary.json`` (the run folder) and ``events.jsonl`` (the history file) named the service's
    folders, and ``checkpoints.sqlite`` could be downloaded."""
    service.start()
    pdf, csv = next(ICICI.glob("*.pdf")).read_bytes(), (ICICI / "result.csv").read_bytes()
    plain = httpx.post(f"{service.url}/v1/runs", json={"target": "icici"}, timeout=60)
    uploaded = httpx.post(f"{service.url}/v1/runs", data={"target": "upload-icici"}, timeout=60,
                          files={"statement": ("s.pdf", pdf, "application/pdf"),
                                 "result": ("result.csv", csv, "text/csv")})
    secret = str(tmp_path.resolve())
    for accepted in (plain, uploaded):
        assert accepted.status_code == 202, accepted.text
        run = accepted.json()
        stream = httpx.get(f"{service.url}{run['links']['events']}", timeout=httpx.Timeout(30.0, read=600.0))
        assert "event: end" in stream.text and secret not in stream.text
        listed = httpx.get(f"{service.url}/v1/runs/{run['id']}/artefacts", timeout=30).json()
        names = {entry["path"] for entry in listed}
        assert {"run.json", "summary.json", "events.jsonl"} <= names
        assert not {"checkpoints.sqlite", "claim.json"} & names
        for name in names:
            body = httpx.get(f"{service.url}/v1/runs/{run['id']}/artefacts/{name}", timeout=30)
            assert body.status_code == 200 and secret.encode() not in body.content, name
        for internal in ("checkpoints.sqlite", "claim.json"):
            assert httpx.get(f"{service.url}/v1/runs/{run['id']}/artefacts/{internal}", timeout=30).status_code == 404
        assert secret in (tmp_path / "runs" / run["id"] / "run.json").read_text()  # kept on disk for resume
