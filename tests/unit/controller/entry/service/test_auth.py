"""Who may do what: every endpoint without a token, with a garbage token, with another tenant's
token, with the owner's and with an admin's."""

from __future__ import annotations

import pytest

from tests.unit.controller.entry.service.conftest import Service

RUN = "r-alice"
#: (method, path, JSON body) of every endpoint that needs a token, on alice's run.
PER_RUN = [
    ("GET", f"/v1/runs/{RUN}", None),
    ("POST", f"/v1/runs/{RUN}/cancel", None),
    ("POST", f"/v1/runs/{RUN}/resume", None),
    ("GET", f"/v1/runs/{RUN}/events", None),
    ("GET", f"/v1/runs/{RUN}/artefacts", None),
    ("GET", f"/v1/runs/{RUN}/artefacts/summary.json", None),
]
ALL = [*PER_RUN, ("GET", "/v1/runs", None), ("POST", "/v1/runs", {"target": "icici"}), ("GET", "/v1/stats", None)]
OPEN = ["/healthz", "/readyz"]
#: The API's documents: open while no token exists, then behind a token like the API (issue 31).
DOCUMENTS = ["/openapi.json", "/docs"]


@pytest.fixture
def tenants(service: Service) -> dict[str, dict[str, str]]:
    """alice (owns the run), bob (another tenant), root (admin); alice's run has ended."""
    headers = {"alice": service.token("alice"), "bob": service.token("bob"),
               "root": service.token("root", admin=True)}
    service.run(RUN, "alice")
    return headers


def call(service: Service, method: str, path: str, body: object, headers: dict[str, str]):
    return service.client.request(method, path, json=body, headers=headers)


@pytest.mark.parametrize(("method", "path", "body"), ALL)
@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "Bearer sbx_garbage"}, {"Authorization": "Basic YWxpY2U6eA=="},
    {"Authorization": "Bearer"}, {"Authorization": "Bearer " + "x" * 5000},
], ids=["none", "garbage", "basic", "empty", "huge"])
def test_without_a_valid_token_every_endpoint_is_401(service, tenants, method, path, body, headers):
    response = call(service, method, path, body, headers)
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert service.store.counts() == {"passed": 1}  # nothing was submitted


@pytest.mark.parametrize(("method", "path", "body"), PER_RUN)
def test_another_tenants_run_is_404_like_no_run(service, tenants, method, path, body):
    response = call(service, method, path, body, tenants["bob"])
    assert response.status_code == 404
    absent = call(service, method, path.replace(RUN, "r-nobody"), body, tenants["bob"])
    assert absent.status_code == 404
    assert response.json()["detail"].replace(RUN, "ID") == absent.json()["detail"].replace("r-nobody", "ID")


@pytest.mark.parametrize("who", ["alice", "root"])
@pytest.mark.parametrize(("method", "path", "body"), PER_RUN)
def test_the_owner_and_an_admin_see_the_run(service, tenants, who, method, path, body):
    response = call(service, method, path, body, tenants[who])
    expected = 409 if path.endswith(("/cancel", "/resume")) else 200  # it passed: nothing to cancel or resume
    assert response.status_code == expected


def test_listings_show_only_ones_own_runs_but_all_to_an_admin(service, tenants):
    service.run("r-bob", "bob")
    def ids(who: str) -> set[str]:
        return {r["id"] for r in service.client.get("/v1/runs", headers=tenants[who]).json()["runs"]}
    assert (ids("alice"), ids("bob"), ids("root")) == ({RUN}, {"r-bob"}, {RUN, "r-bob"})


def test_a_submitted_run_belongs_to_its_token(service, tenants):
    body = service.client.post("/v1/runs", json={"target": "icici"}, headers=tenants["bob"]).json()
    assert body["owner"] == "bob"
    assert service.client.post(f"/v1/runs/{body['id']}/cancel", headers=tenants["alice"]).status_code == 404
    assert service.client.post(f"/v1/runs/{body['id']}/cancel", headers=tenants["bob"]).json()["status"] == "cancelled"


@pytest.mark.parametrize("path", OPEN)
def test_health_needs_no_token(service, tenants, path):
    assert service.client.get(path).status_code == 200


@pytest.mark.parametrize("path", DOCUMENTS)
def test_the_api_documents_need_a_token_once_tokens_exist(service, tenants, path):
    assert service.client.get(path).status_code == 401
    assert service.client.get(path, headers=tenants["bob"]).status_code == 200


@pytest.mark.parametrize("path", DOCUMENTS)
def test_the_api_documents_are_open_while_no_token_exists(service, path):
    assert service.client.get(path).status_code == 200


def test_health_shows_no_server_path(service, tmp_path):
    from fastapi.testclient import TestClient

    from controller.entry.service.app import create_app
    from controller.platform.observability.exporter import build_exporter
    from controller.platform.observability.history import HistoryStore
    from controller.platform.observability.metrics import KnownLabels

    exporter = build_exporter(HistoryStore(tmp_path / "runs" / "history.sqlite"), KnownLabels((), (), (), {}, ()),
                              process_metrics=False)
    body = TestClient(create_app(service.state, exporter)).get("/healthz").text
    assert str(tmp_path) not in body and "history.sqlite" not in body


def test_a_removed_token_no_longer_works(service, tenants):
    service.store.remove_token("alice")
    assert service.client.get(f"/v1/runs/{RUN}", headers=tenants["alice"]).status_code == 401


def test_without_any_token_the_local_user_is_admin(tmp_path):
    from tests.unit.controller.entry.service.conftest import make_service

    service = make_service(tmp_path)
    service.run("r-1", "someone")
    assert service.client.get("/v1/runs/r-1").status_code == 200


def test_metrics_need_no_token(tmp_path):
    from fastapi.testclient import TestClient

    from controller.entry.service.app import create_app
    from controller.platform.observability.exporter import build_exporter
    from controller.platform.observability.history import HistoryStore
    from controller.platform.observability.metrics import KnownLabels
    from tests.unit.controller.entry.service.conftest import make_service

    service = make_service(tmp_path)
    service.token("alice")
    exporter = build_exporter(HistoryStore(tmp_path / "history.sqlite"), KnownLabels(), process_metrics=False)
    client = TestClient(create_app(service.state, exporter))
    response = client.get("/metrics")
    assert response.status_code == 200 and "sbx_build_info" in response.text
    assert client.get("/v1/runs").status_code == 401


def test_the_api_documents_open_to_a_console_sign_in(service, tenants):
    from tests.unit.controller.entry.console.conftest import CSRF

    token = service.token("carol")
    csrf = CSRF.search(service.client.get("/sign-in").text).group(1)
    signed_in = service.client.post("/sign-in", data={"token": token["Authorization"][7:], "csrf": csrf, "next": "/"},
                                    follow_redirects=False)
    assert signed_in.status_code in (302, 303), signed_in.text
    assert service.client.get("/docs").status_code == 200
    assert service.client.get("/v1/runs").status_code == 401  # the cookie authorises no API call


def test_a_token_named_local_inherits_no_run_made_before_tokens_existed(tmp_path):
    """Issue 31: runs submitted while no token existed belonged to "local", so a later non-admin
    token named local could read, cancel and resume all of them; now they belong to ~local."""
    from tests.unit.controller.entry.service.conftest import make_service

    service = make_service(tmp_path)
    before = service.client.post("/v1/runs", json={"target": "icici"}).json()
    local = service.token("local")
    assert service.client.get(f"/v1/runs/{before['id']}", headers=local).status_code == 404
    assert service.client.post(f"/v1/runs/{before['id']}/cancel", headers=local).status_code == 404
    assert service.client.get("/v1/runs", headers=local).json()["runs"] == []
    admin = service.token("ops", admin=True)
    assert service.client.get(f"/v1/runs/{before['id']}", headers=admin).json()["owner"] == "~local"
