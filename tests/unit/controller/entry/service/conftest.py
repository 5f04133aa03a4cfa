"""A service app over a temporary store, with no engine and no workers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.types import ASGIApp

from agents.ports.errors import EngineUnavailable
from controller.entry.service.app import create_app
from controller.entry.service.state import ServiceState
from controller.platform.settings import PROJECT_ROOT, Settings
from controller.platform.store import NewRun, RunRow
from controller.platform.store.sqlite import SqliteStore
from controller.platform.store.tokens import new_token, token_hash


@dataclass
class Service:
    """The app, its state and helpers to make runs and tokens."""

    client: TestClient
    state: ServiceState
    store: SqliteStore
    runs_dir: Path

    def token(self, name: str, *, admin: bool = False) -> dict[str, str]:
        token = new_token()
        self.store.add_token(name, token_hash(token), admin=admin)
        return {"Authorization": f"Bearer {token}"}

    def run(self, run_id: str, owner: str, *, ended: bool = True) -> RunRow:
        """A run row (finished unless ``ended`` is False) with a folder of files."""
        self.store.submit(NewRun(run_id, owner, "bank_parser", "icici"), quota=99, queue_limit=99)
        run_dir = self.runs_dir / run_id
        (run_dir / "attempts" / "1").mkdir(parents=True)
        (run_dir / "attempts" / "1" / "parser.py").write_text("def parse(p):\n    return None\n")
        (run_dir / "summary.json").write_text(json.dumps({"status": "passed"}))
        (run_dir / "console.txt").write_text("==> run x: icici\n  [attempt 1] compare   passed\n")
        (run_dir / "events.jsonl").write_text(
            json.dumps({"event": "node.started", "node": "compare"}) + "\nnot json\n"
            + json.dumps({"event": "node.finished", "node": "compare", "attempt": 1, "outcome": "passed",
                          "duration_seconds": 0.5, "detail": "equal"}) + "\n")
        self.store.append_events(run_id, [  # what a worker journals of such a run's process
            ("line", {"text": "==> run x: icici"}), ("node_started", {"node": "compare", "attempt": 1}),
            ("node", {"node": "compare", "attempt": 1, "outcome": "passed", "seconds": 0.5, "detail": "equal"}),
            ("line", {"text": "  [attempt 1] compare   passed"})])
        if ended:
            self.store.claim("w", 30.0)
            self.store.finish(run_id, "w", "passed", exit_code=0, summary={"status": "passed"})
        row = self.store.get(run_id)
        assert row is not None
        return row


LOCAL = "http://127.0.0.1:9466"


def local_client(app: ASGIApp) -> TestClient:
    """A client on the service's machine: from 127.0.0.1 to a loopback Host, as the no-token service
    requires (the default ``testclient``/``testserver`` names are refused like any foreign name)."""
    return TestClient(app, base_url=LOCAL, client=("127.0.0.1", 50000))


def make_settings(tmp_path: Path, **service: object) -> Settings:
    return Settings(_env_file=None, data_dir=PROJECT_ROOT / "data", runs_dir=tmp_path / "runs",  # type: ignore[call-arg]
                    parsers_dir=tmp_path / "custom_parsers", service=service)


def make_service(tmp_path: Path, engine_up: bool = True, **service: object) -> Service:
    settings = make_settings(tmp_path, **service)
    store = SqliteStore(tmp_path / "runs" / "service.sqlite")

    def probe() -> None:
        if not engine_up:
            raise EngineUnavailable("no Docker engine is reachable (test)")

    state = ServiceState(settings, store, engine_probe=probe)
    return Service(local_client(create_app(state)), state, store, settings.runs_dir)


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return make_service(tmp_path, quota_per_token=2, queue_limit=4, upload_bytes=4096)
