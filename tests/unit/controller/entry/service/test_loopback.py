"""DNS rebinding: while no token exists, the whole app answers loopback Host names only.

A page of another site whose name was made to resolve to 127.0.0.1 reaches the no-token
service from a loopback client, with ``Host: attacker.example:PORT``; being same-origin
there, it could read runs, artefacts and ``/docs``, and cancel or submit runs. Every route
family must refuse it (403: problem+json on the API's paths, the console's page on the
console's) before anything is done. Once a token exists, the tokens decide, whatever the Host.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.entry.service.app import create_app
from controller.entry.service.loopback import is_api_path
from controller.platform.observability.exporter import build_exporter
from controller.platform.observability.history import HistoryStore
from controller.platform.observability.metrics import KnownLabels
from tests.unit.controller.entry.console.conftest import Console, make_console

FOREIGN = "attacker.example:9466"
API_READS = ["/v1/runs", "/v1/runs/run-a", "/v1/runs/run-a/events", "/v1/runs/run-a/artefacts",
             "/v1/runs/run-a/artefacts/console.txt", "/v1/checks/run-a", "/v1/history", "/v1/lessons", "/v1/stats",
             "/v1/subjects/alice", "/docs", "/docs/assets/swagger-ui.css", "/openapi.json", "/metrics", "/healthz",
             "/readyz", "/v1/nowhere"]
CONSOLE_READS = ["/", "/runs/run-a", "/runs/run-a/live", "/runs/run-a/files/console.txt", "/checks/run-a",
                 "/targets", "/submit", "/blueprints/new", "/blueprints/schema.json", "/sign-in",
                 "/static/console.css", "/favicon.ico", "/compare?a=run-a"]


@pytest.fixture
def local(tmp_path: Path) -> Console:
    """The no-token service with a queued run (so a cancel would change it) and /metrics served."""
    console = make_console(tmp_path)
    exporter = build_exporter(HistoryStore(tmp_path / "history.sqlite"), KnownLabels(), process_metrics=False)
    console.client = TestClient(create_app(console.state, exporter),
                                base_url="http://127.0.0.1:9466", client=("127.0.0.1", 50000))
    console.run("run-a", status="queued", lines="a line\n")
    console.write("run-a", "summary.json", {"status": "queued"})
    return console


class TestForeignHostWithoutTokens:
    @pytest.mark.parametrize("path", API_READS)
    def test_every_api_read_is_refused_as_a_problem(self, local: Console, path: str):
        """Runs, events, artefacts, checks, history, subjects, docs, metrics, health: 403 problem+json."""
        response = local.client.get(path, headers={"Host": FOREIGN})
        assert response.status_code == 403, (path, response.text)
        assert response.headers["content-type"] == "application/problem+json"
        assert ("loopback" in response.json()["detail"] and "queued" not in response.text
                and "a line" not in response.text)

    @pytest.mark.parametrize("path", CONSOLE_READS)
    def test_every_console_path_is_refused_with_its_page(self, local: Console, path: str):
        response = local.client.get(path, headers={"Host": FOREIGN}, follow_redirects=False)
        assert response.status_code == 403, (path, response.text)
        assert response.headers["content-type"].startswith("text/html") and "loopback" in response.text
        assert "a line" not in response.text and "queued" not in response.text
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]

    def test_a_cancel_is_not_processed(self, local: Console):
        response = local.client.post("/v1/runs/run-a/cancel", headers={"Host": FOREIGN})
        assert response.status_code == 403
        row = local.store.get("run-a")
        assert row is not None and row.status == "queued"

    def test_a_submission_is_not_processed(self, local: Console):
        """A run (or a blueprint run, the same endpoint) or a check posted under a foreign name creates nothing."""
        for path, body in (("/v1/runs", {"target": "icici"}),
                           ("/v1/runs", {"target": "acme-research", "blueprint": {"name": "x"}}),
                           ("/v1/checks", {"target": "icici"})):
            response = local.client.post(path, json=body, headers={"Host": FOREIGN})
            assert response.status_code == 403, path
        assert [row.id for row in local.store.list_runs(owner=None, target=None, status=None, limit=10,
                                                        cursor=None).runs] == ["run-a"]

    def test_forget_and_a_subject_deletion_are_not_processed(self, local: Console):
        for path in ("/v1/history?target=icici", "/v1/subjects/alice"):
            assert local.client.delete(path, headers={"Host": FOREIGN}).status_code == 403, path
        assert local.store.get("run-a") is not None

    def test_a_console_form_is_not_processed(self, local: Console):
        """Even carrying this browser's CSRF token, a cancel posted under a foreign name changes nothing."""
        token = local.csrf("/submit")
        response = local.client.post("/runs/run-a/cancel", data={"csrf": token, "confirm": "yes"},
                                     headers={"Host": FOREIGN}, follow_redirects=False)
        assert response.status_code == 403
        row = local.store.get("run-a")
        assert row is not None and row.status == "queued"

    @pytest.mark.parametrize("host", ["127.0.0.1:9466", "localhost:9466", "[::1]:9466", "LOCALHOST", "127.0.0.1"])
    def test_loopback_names_still_work(self, local: Console, host: str):
        assert local.client.get("/v1/runs/run-a", headers={"Host": host}).status_code == 200
        assert local.client.get("/runs/run-a", headers={"Host": host}).status_code == 200
        assert local.client.get("/docs", headers={"Host": host}).status_code == 200

    def test_a_client_elsewhere_is_refused_even_with_a_loopback_host(self, local: Console):
        remote = TestClient(local.client.app, base_url="http://127.0.0.1:9466", client=("192.0.2.7", 4000))
        assert remote.get("/v1/runs").status_code == 403
        assert remote.post("/v1/runs/run-a/cancel").status_code == 403


class TestWithTokens:
    def test_the_tokens_decide_whatever_the_host(self, local: Console):
        """A token-protected service may be reached under any name: no token is 401, a valid one is served."""
        token = local.token("alice", admin=True)
        anonymous = local.client.get("/v1/runs", headers={"Host": FOREIGN})
        assert anonymous.status_code == 401
        served = local.client.get("/v1/runs", headers={"Host": FOREIGN, "Authorization": f"Bearer {token}"})
        assert served.status_code == 200 and "run-a" in served.text
        assert local.client.get("/healthz", headers={"Host": FOREIGN}).status_code == 200


@pytest.mark.parametrize("path, api", [("/v1", True), ("/v1/runs", True), ("/docs", True), ("/docs/assets/x", True),
                                       ("/metrics", True), ("/", False), ("/v1x", False), ("/runs/x", False),
                                       ("/static/console.css", False)])
def test_api_paths(path: str, api: bool):
    assert is_api_path(path) is api
