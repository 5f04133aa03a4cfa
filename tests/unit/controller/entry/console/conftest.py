"""The service app (with its console at /) over a temporary store: no engine, no workers.

Requests come from 127.0.0.1 to a loopback Host, as a browser on the service's machine would
send them; a test that needs another origin or host says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.entry.service.app import create_app
from controller.entry.service.state import ServiceState
from controller.platform.store import LOCAL_OWNER, NewRun, RunRow
from controller.platform.store.sqlite import SqliteStore
from controller.platform.store.tokens import new_token, token_hash
from tests.unit.controller.entry.service.conftest import make_settings

BASE = "http://127.0.0.1:9466"
CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


@dataclass
class Console:
    """A browser on the console: its client (cookies kept), the state and helpers."""

    client: TestClient
    state: ServiceState
    store: SqliteStore
    runs_dir: Path

    def csrf(self, path: str = "/sign-in") -> str:
        """The form token of this browser (read from a page, as a form would carry it)."""
        found = CSRF.search(self.client.get(path).text)
        assert found, f"no CSRF field on {path}"
        return found.group(1)

    def token(self, name: str, *, admin: bool = False) -> str:
        token = new_token()
        self.store.add_token(name, token_hash(token), admin=admin)
        return token

    def sign_in(self, token: str) -> None:
        response = self.client.post("/sign-in", data={"token": token, "csrf": self.csrf(), "next": "/"},
                                    follow_redirects=False)
        assert response.status_code == 303, response.text

    def run(self, run_id: str, owner: str = LOCAL_OWNER, *, agent: str = "bank_parser", target: str = "icici",
            status: str = "passed", lines: str = "", summary: dict | None = None,
            options: dict | None = None) -> RunRow:
        """A run row with a folder (console.txt from ``lines``), ended with ``status`` unless queued
        (``options={"kind": "check"}``: a check)."""
        self.store.submit(NewRun(run_id, owner, agent, target, options or {}), quota=999, queue_limit=999)
        run_dir = self.runs_dir / run_id
        (run_dir / "attempts" / "1").mkdir(parents=True)
        (run_dir / "console.txt").write_text(lines)
        if status != "queued":
            self.store.claim("w", 30.0)
            self.store.finish(run_id, "w", status, exit_code=0 if status == "passed" else 1,
                              summary=summary or {"status": status, "attempts": 1, "max_attempts": 3})
        row = self.store.get(run_id)
        assert row is not None
        return row

    def write(self, run_id: str, relative: str, data: str | bytes | dict) -> Path:
        path = self.runs_dir / run_id / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, dict):
            data = json.dumps(data)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path


def make_console(tmp_path: Path, **service: object) -> Console:
    settings = make_settings(tmp_path, **service)
    store = SqliteStore(tmp_path / "runs" / "service.sqlite")
    state = ServiceState(settings, store, engine_probe=lambda: None)
    client = TestClient(create_app(state), base_url=BASE, client=("127.0.0.1", 50000))
    return Console(client, state, store, settings.runs_dir)


@pytest.fixture
def console(tmp_path: Path) -> Console:
    return make_console(tmp_path)
