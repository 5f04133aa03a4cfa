"""``python -m controller serve``: the service on uvicorn, its workers, and a drain on SIGTERM.

Listens on 127.0.0.1 by default; refuses a non-loopback address while no token exists (one
line, exit 2), since anyone who reaches the port could then run code on the engine. SIGTERM
or SIGINT: the service stops accepting runs (503) and ends its event streams, uvicorn stops,
then the workers drain (see :mod:`controller.runner.dispatch.workers`).
"""

from __future__ import annotations

import ipaddress
import socket
from types import FrameType

import structlog
import uvicorn

from agents.ports.errors import ConfigError
from controller.entry.service.app import create_app
from controller.entry.service.readiness import images_probe
from controller.entry.service.state import ServiceState, engine_probe, require_engine_runtime
from controller.platform import shared_state
from controller.platform.observability.exporter import Exporter
from controller.platform.sandbox.warm_metrics import WarmSandboxCollector
from controller.platform.settings import Settings
from controller.platform.store import RunStore
from controller.runner import dispatch
from controller.runner.dispatch import Command, RunWorkers

log = structlog.get_logger("sandloop.service")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts; other names do not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, store: RunStore) -> None:
    """Refuse to listen beyond loopback while no token protects the service.

    Raises:
        ConfigError: ``host`` is not loopback and no token exists.
    """
    if not is_loopback(host) and not store.has_tokens():
        raise ConfigError(f"refusing to listen on {host} without a token: anyone reaching it could run code",
                          hint="create one with: python -m controller tokens add NAME, or listen on 127.0.0.1")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``.

    Raises:
        ConfigError: it cannot be bound (in use, not local, not allowed).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without
    # it every answer on a kept-alive connection waited ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                          hint="set --host/--port or "
                               "SBX_OBSERVABILITY__SERVE_HOST / SBX_OBSERVABILITY__SERVE_PORT") from exc
    return sock


class DrainingServer(uvicorn.Server):
    """uvicorn's server that marks the service draining the moment a stop signal arrives."""

    def __init__(self, config: uvicorn.Config, state: ServiceState) -> None:
        super().__init__(config)
        self.state = state

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.state.draining.set()
        super().handle_exit(sig, frame)
        # uvicorn raises a captured signal again once it stopped; SIGTERM's default action would
        # then kill the process before the workers drain. The drain after run() is the ending.
        self._captured_signals.clear()


def run_service(settings: Settings, store: RunStore, exporter: Exporter | None, host: str, port: int, *,
                command: Command = dispatch.command) -> None:
    """Serve until SIGTERM/SIGINT, then drain the workers; ``command`` is each run's child."""
    check_exposure(host, store)
    require_engine_runtime(settings)  # SBX_SANDBOX_RUNTIME unknown to the engine: one line, exit 2
    shared_state.adopt_files(settings, store)  # PostgreSQL: an earlier release's history and lessons files
    shared_state.prepare_state(settings, store)
    sock = bind(host, port)
    state = ServiceState(settings, store, engine_probe=engine_probe(settings),
                         images_probe=images_probe(settings))
    pool = RunWorkers(settings, store, wake=state.submitted, command=command, notify=state.signals.notify)
    if exporter is not None and pool.sandboxes is not None:
        exporter.registry.register(WarmSandboxCollector(pool.sandboxes))
    config = uvicorn.Config(create_app(state, exporter), log_config=None, access_log=False,
                            timeout_graceful_shutdown=5, lifespan="off")
    server = DrainingServer(config, state)
    pool.start()
    shown = f"[{host}]" if ":" in host else host
    log.info("service.listening", url=f"http://{shown}:{sock.getsockname()[1]}", worker=pool.worker_id,
             workers=pool.workers, tokens=store.has_tokens())
    print(f"==> sandloop service on http://{shown}:{sock.getsockname()[1]} ({pool.workers} worker(s)); "
          "/docs, /metrics; Ctrl-C or SIGTERM drains", flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        state.draining.set()
        pool.stop(settings.service.drain_seconds)
        sock.close()
        log.info("service.stopped")
