"""A blueprint posted over HTTP runs to a verdict (issue 33): the real service (``python -m controller
serve`` in a subprocess, its worker, the real engine), a data folder that does NOT hold the blueprint's
target, and ``run --server URL --blueprint FILE``, which uploads the blueprint with the files it names.
The blueprint's code tool (candidate-brief's ``match``) runs in a sandbox of the worker's run."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from controller.platform.settings import PROJECT_ROOT
from tests.integration.blueprints import NO_GO, NO_GO_REASON, no_go_target
from tests.integration.service.harness import Service, free_port
from tests.integration.service.test_service import add_token

pytestmark = pytest.mark.usefixtures("no_leftovers", "parser_image")
SOURCE = PROJECT_ROOT / "data" / "candidate-brief"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    (tmp_path / "data").mkdir()  # the service has no folder for the blueprint
    env = {**os.environ, "SBX_DATA_DIR": str(tmp_path / "data"), "SBX_RUNS_DIR": str(tmp_path / "runs"),
           "SBX_PARSERS_DIR": str(tmp_path / "custom_parsers"), "SBX_CACHE_DIR": str(PROJECT_ROOT / ".cache"),
           "SBX_LOG_FORMAT": "json", "SBX_PARALLEL_RUNS": "1", "SBX_SERVICE__POLL_SECONDS": "0.2"}
    svc = Service(tmp_path, env, free_port())
    yield svc
    if svc.proc is not None:
        svc.stop(signal.SIGTERM)


def test_a_blueprint_sent_with_its_files_runs_to_a_verdict(service: Service, tmp_path: Path):
    auth = add_token(service, "alice")
    service.start()
    mine = tmp_path / "mine"  # the user's own folder, outside any data folder
    mine.mkdir()
    document = json.loads((SOURCE / "blueprint.json").read_text())
    (mine / "match.py").write_text(document["tools"][1].pop("code"))
    document["tools"][1]["code_file"] = "match.py"
    (mine / "brief.json").write_text(json.dumps(document))
    for name in ("candidate.json", "job.json"):
        (mine / name).write_bytes((SOURCE / name).read_bytes())

    client = service.cli("run", "--server", service.url, "--blueprint", str(mine / "brief.json"),
                         SBX_TOKEN=auth["Authorization"][7:])

    assert client.returncode == 0, client.stdout + client.stderr
    assert "PASSED: the candidate-brief report passed QA" in client.stdout
    run_id = client.stdout.splitlines()[0].split("accepted as run ")[1].split()[0]
    run = httpx.get(f"{service.url}/v1/runs/{run_id}", headers=auth, timeout=30).json()
    assert (run["agent"], run["status"], run["options"]["blueprint"]) == ("blueprint", "passed", True)
    findings = httpx.get(f"{service.url}/v1/runs/{run_id}/artefacts/findings.json", headers=auth, timeout=30).json()
    match = next(f for f in findings if f["tool"] == "match")
    assert match["ok"] and match["sandboxed"] and match["value"]["match score"] > 0
    assert not (tmp_path / "data" / "candidate-brief").exists()


def test_a_blueprint_whose_required_tool_reads_an_empty_file_ends_no_go(service: Service, tmp_path: Path):
    """Issue 41: the service stored the manager's no-go as failed (its recorder crashed on main: error).
    Now the run's status is no-go over HTTP, its error the reason, and the OpenAPI enum names it."""
    auth = add_token(service, "alice")
    service.start()
    path = no_go_target(tmp_path / "mine")

    client = service.cli("run", "--server", service.url, "--blueprint", str(path), SBX_TOKEN=auth["Authorization"][7:])

    assert client.returncode == 1, client.stdout + client.stderr
    assert f"NO-GO: the {NO_GO} workflow stopped before writing: {NO_GO_REASON}" in client.stdout
    run_id = client.stdout.splitlines()[0].split("accepted as run ")[1].split()[0]
    run = httpx.get(f"{service.url}/v1/runs/{run_id}", headers=auth, timeout=30).json()
    assert (run["status"], run["exit_code"], run["error"]) == ("no-go", 1, NO_GO_REASON)
    assert run["summary"]["status"] == "no-go"
    listed = httpx.get(f"{service.url}/v1/runs", params={"status": "no-go"}, headers=auth, timeout=30).json()
    assert [r["id"] for r in listed["runs"]] == [run_id]
    stats = httpx.get(f"{service.url}/v1/stats", headers=auth, timeout=30).json()["targets"]
    assert [(s["runs"], s["success_rate"]) for s in stats] == [({"no-go": 1}, None)]
    schema = httpx.get(f"{service.url}/openapi.json", headers=auth, timeout=30).json()["components"]["schemas"]
    assert "no-go" in schema["RunOut"]["properties"]["status"]["enum"]
