"""A real ``serve`` process for the service's integration tests: start it, wait for /readyz, stop it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests import waiting


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: Callable[[], bool], what: str, deadline: float = 300.0) -> None:
    """:func:`tests.waiting.wait_for` at a real process's pace: 300 s at most, every 0.2 s."""
    waiting.wait_for(condition, what, deadline, interval=0.2)


@dataclass
class Service:
    """A service process and what it needs."""

    root: Path
    env: dict[str, str]
    port: int
    proc: subprocess.Popen[str] | None = None
    #: The module run as ``python -m``, with its arguments before the port.
    program: list[str] = field(default_factory=lambda: ["controller", "serve", "--host", "127.0.0.1", "--port"])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cli(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "controller", *args], cwd=self.root, env={**self.env, **extra},
                              capture_output=True, text=True, timeout=900, check=False)

    def start(self, deadline: float = 120.0) -> None:
        log = (self.root / "service.log").open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", *self.program, str(self.port)],
            cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            wait_for(self._ready, "the service's /readyz", deadline)
        except BaseException:  # a fixture that fails here never reaches its teardown: stop the service now
            if self.proc.poll() is None:
                self.stop(signal.SIGTERM)
            raise

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            pytest.fail(f"the service exited: {(self.root / 'service.log').read_text()[-3000:]}")
        try:
            return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=120)
        self.proc = None
        return code
