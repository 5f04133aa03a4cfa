"""Who sees what: the API's tenancy on every page, and the no-token console on loopback only.

Without tokens the console is the local admin's, so it must refuse anything that is not a
loopback request: a client elsewhere, or a loopback client whose page came from another name
(DNS rebinding: evil.example resolving to 127.0.0.1 would be same-origin with the console).
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from controller.entry.console.viewer import is_loopback_host
from tests.unit.controller.entry.console.conftest import Console


class TestLocalMode:
    def test_loopback_with_a_loopback_host_is_the_local_admin(self, console: Console):
        response = console.client.get("/")
        assert response.status_code == 200 and "local · admin" in response.text

    @pytest.mark.parametrize("host", ["evil.example:9466", "evil.example", "10.0.0.5:9466", "127.0.0.1.evil.example"])
    def test_another_host_name_is_refused(self, console: Console, host: str):
        """A loopback client reaching the console under another name (DNS rebinding) gets 403."""
        response = console.client.get("/", headers={"Host": host})
        assert response.status_code == 403 and "loopback" in response.text

    def test_a_client_elsewhere_is_refused(self, console: Console):
        remote = TestClient(console.client.app, base_url="http://127.0.0.1:9466", client=("192.0.2.7", 4000))
        assert remote.get("/").status_code == 403

    @pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.5.5.5", True), ("[::1]", True),
                                                 ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False),
                                                 ("example.com", False), ("", False)])
    def test_loopback_hosts(self, host: str, loopback: bool):
        assert is_loopback_host(host) is loopback


class TestTenancy:
    def test_another_tenants_run_is_404_like_a_missing_one(self, console: Console):
        """Bob gets the same 404 page for Alice's run as for a run that does not exist."""
        console.token("alice")
        console.run("run-alice", owner="alice", lines="secret line\n")
        console.sign_in(console.token("bob"))
        for path in ("/runs/run-alice", "/runs/run-alice/attempts/1", "/runs/run-alice/files/console.txt",
                     "/runs/run-alice/live", "/checks/run-alice", "/compare?a=run-alice"):
            response = console.client.get(path)
            assert response.status_code == 404, path
            assert "secret line" not in response.text
        missing = console.client.get("/runs/run-nobody")
        assert missing.status_code == 404

    def test_the_runs_list_shows_only_the_viewers_runs_and_an_admin_all(self, console: Console):
        console.token("alice")
        console.run("run-alice", owner="alice")
        console.run("run-bob", owner="bob")
        console.sign_in(console.token("bob"))
        page = console.client.get("/").text
        assert "run-bob" in page and "run-alice" not in page
        console.sign_in(console.token("root", admin=True))
        page = console.client.get("/").text
        assert "run-bob" in page and "run-alice" in page

    def test_only_an_admin_may_forget_a_target(self, console: Console):
        console.sign_in(console.token("bob"))
        token = console.csrf("/submit")
        assert "Forget this target" not in console.client.get("/targets/bank_parser/icici").text
        response = console.client.post("/targets/bank_parser/icici/forget", data={"csrf": token})
        assert response.status_code == 403
