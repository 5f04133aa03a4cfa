"""``run --server``: the SSE reader, reconnection without repeated lines, exit codes, bad URLs."""

from __future__ import annotations

import io
import json

import httpx
import pytest

from agents.ports.errors import ConfigError
from controller.entry.cli import main
from controller.entry.service import client as remote


def sse(*events: tuple[str, dict]) -> str:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


END = ("end", {"id": "r-1", "status": "passed", "exit_code": 0, "error": ""})


class TestParse:
    def test_events_comments_and_bad_data(self):
        lines = ["event: line", 'data: {"text": "a"}', "", ": keep-alive", "", "event: node", "data: not json", "",
                 'data: {"x": 1}', ""]
        assert list(remote.parse_sse(iter(lines))) == [("line", {"text": "a"}), ("message", {"x": 1})]


class TestFollow:
    def test_a_dropped_stream_is_resumed_without_repeating_lines(self, monkeypatch):
        """The first connection ends after two lines; the second replays them, then goes on to the end."""
        monkeypatch.setattr(remote, "RECONNECT_SECONDS", 0.0)
        bodies = [sse(("status", {}), ("line", {"text": "one"}), ("line", {"text": "two"})),
                  sse(("status", {}), ("line", {"text": "one"}), ("line", {"text": "two"}),
                      ("line", {"text": "three"}), END)]

        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, text=bodies.pop(0), headers={"content-type": "text/event-stream"})

        out = io.StringIO()
        with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client:
            end = remote.follow(client, "r-1", out)
        assert out.getvalue().splitlines() == ["one", "two", "three"]
        assert end["status"] == "passed"

    def test_a_refused_stream_is_the_services_line(self):
        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(404, json={"detail": "no run r-1", "status": 404})

        with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client:
            with pytest.raises(remote.ServiceRefused, match=r"\(404\): no run r-1") as caught:
                remote.follow(client, "r-1", io.StringIO())
        assert caught.value.exit_code == 2


class TestExitCode:
    @pytest.mark.parametrize(("run", "code", "stderr"), [
        ({"status": "passed", "exit_code": 0}, 0, ""),
        ({"status": "failed", "exit_code": 1}, 1, ""),
        ({"status": "error", "exit_code": 2, "error": "unknown target 'x'"}, 2, "error: unknown target 'x'"),
        ({"status": "error", "exit_code": None, "error": "worker died"}, 3, "error: worker died"),
        ({"status": "cancelled", "exit_code": 130, "id": "r"}, 130, "error: run r was cancelled"),
    ])
    def test_as_a_local_run(self, run, code, stderr, capsys):
        assert remote.exit_code(run) == code
        assert capsys.readouterr().err.strip() == stderr


class TestCommandLine:
    @pytest.mark.parametrize(("argv", "line"), [
        (["--server", "ftp://x", "--target", "icici"], "error: --server 'ftp://x' is not an http(s) URL"),
        (["--server", "http://u:p@h", "--target", "icici"], "error: --server must not carry credentials"),
        (["--server", "http://127.0.0.1:9", "--target", "icici", "--model", "m"],
         "error: --model is not sent to a service"),
    ])
    def test_bad_use_is_one_line_exit_2(self, argv, line, capsys):
        assert main(["run", *argv]) == 2
        assert capsys.readouterr().err.startswith(line)

    def test_no_service_is_one_line_exit_2(self, capsys):
        import socket

        with socket.socket() as sock:  # a port nobody listens on
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        assert main(["run", "--server", f"http://127.0.0.1:{port}", "--target", "icici"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: cannot reach the service at http://127.0.0.1:{port}") and err.count("\n") == 1

    def test_base_url(self):
        assert remote._base_url("http://h:1/") == "http://h:1"
        with pytest.raises(ConfigError):
            remote._base_url("h:1")
