"""`python -m controller serve` as a user runs it: serves the history until SIGTERM, exits 0;
a bad port is one line on stderr and exit 2; no token, no listening beyond loopback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from controller.platform.observability.history import HistoryStore
from tests.unit.controller.platform.observability.records import run


def serve(tmp_path: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "SBX_RUNS_DIR": str(tmp_path / "runs"), "SBX_DATA_DIR": str(tmp_path / "data"),
           "SBX_LOG_FORMAT": "json", **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "controller", "serve", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str, deadline: float = 30.0) -> str:
    end = time.monotonic() + deadline
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


def children(pid: int) -> dict[int, str]:
    """``pid``'s child processes and their command lines, read from /proc."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[1]) == pid:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_text().replace("\0", " ")
        except OSError:
            continue  # ended meanwhile
    return found


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting for its new parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


class TestServe:
    @pytest.mark.parametrize(("args", "first", "last"), [
        ((), "service.workers_started", "service.stopped"),
        (("--metrics-only",), "exporter.listening", "exporter.stopped"),
    ], ids=["service", "metrics-only"])
    def test_serves_the_history_and_stops_on_sigterm(self, tmp_path, args, first, last):
        """/metrics shows recorded runs, target folders appear as zero series, a target that is no
        folder of data/ (an upload's) only as "uploaded"; SIGTERM ends it with exit 0."""
        for name in ("sbi", "icici"):
            (tmp_path / "data" / name).mkdir(parents=True)
        HistoryStore(tmp_path / "runs" / "history.sqlite").record(run("failed", target="icici"))
        HistoryStore(tmp_path / "runs" / "history.sqlite").record(run("passed", target="acme-takeover-of-globex"))
        port = free_port()
        proc = serve(tmp_path, "--port", str(port), *args)
        try:
            body = get(f"http://127.0.0.1:{port}/metrics")
            assert 'sbx_agent_runs_total{agent="bank_parser",status="failed",target="icici"} 1.0' in body
            assert 'sbx_agent_runs_total{agent="bank_parser",status="passed",target="sbi"} 0.0' in body
            assert 'sbx_agent_runs_total{agent="bank_parser",status="passed",target="uploaded"} 1.0' in body
            assert "acme-takeover-of-globex" not in body
            assert json.loads(get(f"http://127.0.0.1:{port}/healthz"))["runs"] == 2
        finally:
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=15)
        assert proc.returncode == 0, stderr
        events = [json.loads(line)["event"] for line in stderr.splitlines()]
        assert (events[0], events[-1]) == (first, last)

    def test_sigterm_while_warming_up_leaves_no_process_behind(self, tmp_path):
        """SIGTERM as soon as the service answers, its warm parent still importing: that parent is
        gone when the service has exited (it no longer finishes its imports first, holding the
        service's stderr), and every other process it started ends too."""
        port = free_port()
        proc = serve(tmp_path, "--port", str(port))
        try:
            get(f"http://127.0.0.1:{port}/healthz")
            started = children(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
        warm_parent = [pid for pid, command in started.items() if "multiprocessing.forkserver" in command]
        assert warm_parent, f"the service started no warm parent: {started}"
        assert [pid for pid in warm_parent if running(pid)] == []
        _, stderr = proc.communicate(timeout=15)
        assert proc.returncode == 0, stderr
        deadline = time.monotonic() + 3.0  # multiprocessing's resource tracker ends on its pipe's EOF
        while (left := [pid for pid in started if running(pid)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == []

    def test_port_out_of_range_is_one_line(self, tmp_path):
        """--port 70000 is refused with one error line and exit 2."""
        proc = serve(tmp_path, "--port", "70000")
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 2
        assert stderr.strip().splitlines() == ["error: --port 70000 is not a TCP port (use 1-65535)"]

    def test_port_in_use_is_one_line(self, tmp_path):
        """A port another process holds is one error line naming the setting, exit 2."""
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]
            proc = serve(tmp_path, "--port", str(port))
            _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 2
        (line,) = stderr.strip().splitlines()
        assert line.startswith(f"error: cannot listen on 127.0.0.1:{port}") and "SERVE_PORT" in line

    def test_no_listening_beyond_loopback_without_a_token(self, tmp_path):
        """0.0.0.0 with no token: one line, exit 2, nothing listens."""
        proc = serve(tmp_path, "--host", "0.0.0.0", "--port", str(free_port()))
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 2
        (line,) = stderr.strip().splitlines()
        assert line.startswith("error: refusing to listen on 0.0.0.0 without a token")
