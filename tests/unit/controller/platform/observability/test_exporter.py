"""The exporter's HTTP surface, served for real on a loopback port."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from agents.ports.errors import ConfigError
from controller.platform.observability.exporter import bind, build_exporter, make_app
from controller.platform.observability.history import HistoryStore
from controller.platform.observability.metrics import KnownLabels
from tests.unit.controller.platform.observability.records import run


@pytest.fixture
def serve(tmp_path):
    """Start an exporter on 127.0.0.1:<free port> for a history path; yield its base URL."""
    servers = []

    def start(path) -> str:
        exporter = build_exporter(HistoryStore(path), KnownLabels(agents=("bank_parser",), targets=("icici",)),
                                  process_metrics=False)
        server = bind("127.0.0.1", 0, make_app(exporter))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class TestEndpoints:
    def test_metrics_serve_the_history(self, serve, tmp_path):
        """/metrics carries the history's counters and the build info."""
        store = HistoryStore(tmp_path / "h.sqlite")
        store.record(run("passed"))
        status, body = get(f"{serve(store.path)}/metrics")
        assert status == 200
        assert 'sbx_agent_runs_total{agent="bank_parser",status="passed",target="icici"} 1.0' in body
        assert "sbx_build_info{version=" in body

    def test_healthz_ok_before_any_run(self, serve, tmp_path):
        """/healthz is 200 when no history exists yet (nothing ran)."""
        status, body = get(f"{serve(tmp_path / 'absent.sqlite')}/healthz")
        assert status == 200 and json.loads(body)["runs"] == 0

    def test_healthz_503_when_the_history_is_unreadable(self, serve, tmp_path):
        """/healthz is 503 with the reason when the history cannot be read."""
        path = tmp_path / "h.sqlite"
        path.write_bytes(b"garbage" * 200)
        status, body = get(f"{serve(path)}/healthz")
        assert status == 503 and "cannot read the run history" in json.loads(body)["error"]

    def test_unknown_path_is_404(self, serve, tmp_path):
        """Anything but /, /metrics and /healthz is 404."""
        assert get(f"{serve(tmp_path / 'h.sqlite')}/nope")[0] == 404


class TestBind:
    def test_port_in_use_is_a_config_error(self, serve, tmp_path):
        """A port that is taken gives one clear ConfigError naming the setting."""
        port = int(serve(tmp_path / "h.sqlite").rsplit(":", 1)[1])
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}") as info:
            bind("127.0.0.1", port, make_app(build_exporter(HistoryStore(tmp_path / "x"), KnownLabels(),
                                                            process_metrics=False)))
        assert "SBX_OBSERVABILITY__SERVE_PORT" in info.value.one_line()
