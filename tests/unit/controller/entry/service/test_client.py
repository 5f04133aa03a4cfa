"""``run --server``: the SSE reader, reconnection without repeated lines, exit codes, bad URLs."""

from __future__ import annotations

import io
import json

import httpx
import pytest

from agents.ports.errors import ConfigError
from controller.entry.cli import main
from controller.entry.service import client as remote


def sse(*events: tuple[str, dict], first: int = 1) -> str:
    return "".join(f"id: {n}\nevent: {name}\ndata: {json.dumps(data)}\n\n"
                   for n, (name, data) in enumerate(events, first))


END = ("end", {"id": "r-1", "status": "passed", "exit_code": 0, "error": ""})


class TestParse:
    def test_events_comments_and_bad_data(self):
        lines = ["event: line", 'data: {"text": "a"}', "", ": keep-alive", "", "event: node", "data: not json", "",
                 'data: {"x": 1}', ""]
        assert list(remote.parse_sse(iter(lines))) == [("line", {"text": "a"}), ("message", {"x": 1})]


class TestFollow:
    def test_a_dropped_stream_is_resumed_after_the_last_event_it_got(self, monkeypatch):
        """The first connection ends after two lines; the second asks for what came after event 3."""
        monkeypatch.setattr(remote, "RECONNECT_SECONDS", 0.0)
        bodies = [sse(("status", {}), ("line", {"text": "one"}), ("line", {"text": "two"})),
                  sse(("line", {"text": "three"}), END, first=4)]
        asked: list[str | None] = []

        def handler(request: httpx.Request) -> httpx.Response:
            asked.append(request.headers.get("last-event-id"))
            return httpx.Response(200, text=bodies.pop(0), headers={"content-type": "text/event-stream"})

        out = io.StringIO()
        with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client:
            end = remote.follow(client, "r-1", out)
        assert out.getvalue().splitlines() == ["one", "two", "three"]
        assert asked == [None, "3"] and end["status"] == "passed"

    def test_a_submission_is_sent_again_under_one_key_until_it_gets_through(self, monkeypatch):
        """Two refused connections (a restarting service), then accepted: one key for all three."""
        monkeypatch.setattr(remote, "SUBMIT_PAUSE", 0.0)
        keys: list[str] = []

        def handler(request: httpx.Request) -> httpx.Response:
            keys.append(request.headers["idempotency-key"])
            if len(keys) < 3:
                raise httpx.ConnectError("refused")
            return httpx.Response(202, json={"id": "r-1", "status": "queued"})

        with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client:
            assert remote.submit(client, "/v1/runs", json={"target": "icici"}).json()["id"] == "r-1"
        assert len(keys) == 3 and len(set(keys)) == 1 and keys[0].startswith("sbx-client-")

    def test_a_failed_connection_is_said_once_while_it_is_tried_again(self, monkeypatch):
        """The tries take about a minute: the person sees one line saying so, not a silent wait."""
        monkeypatch.setattr(remote, "SUBMIT_PAUSE", 0.0)
        calls, said = [], []

        def handler(request: httpx.Request) -> httpx.Response:
            calls.append(1)
            if len(calls) < 4:
                raise httpx.ConnectError("refused")
            return httpx.Response(202, json={"id": "r-1", "status": "queued"})

        with httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client:
            remote.submit(client, "/v1/runs", said.append, json={"target": "icici"})
        assert len(said) == 1 and said[0].startswith("==> http://svc: no answer (ConnectError); trying again")

    def test_a_refused_submission_is_not_sent_again(self):
        calls = []

        def handler(request: httpx.Request) -> httpx.Response:
            calls.append(1)
            return httpx.Response(422, json={"detail": "unknown target 'x'", "status": 422})

        with (httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client,
              pytest.raises(remote.ServiceRefused, match="unknown target")):
            remote.submit(client, "/v1/runs", json={"target": "x"})
        assert calls == [1]

    def test_a_refused_stream_is_the_services_line(self):
        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(404, json={"detail": "no run r-1", "status": 404})

        with (httpx.Client(transport=httpx.MockTransport(handler), base_url="http://svc") as client,
              pytest.raises(remote.ServiceRefused, match=r"\(404\): no run r-1") as caught):
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
