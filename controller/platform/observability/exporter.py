"""``python -m controller serve``: a long-running exporter of the run history.

One-shot runs cannot be scraped (they are gone before Prometheus comes by), so each run
appends itself to the history and this process, which stays up, turns the history into
counters and histograms on every scrape (``/metrics``), next to its own live process
metrics. ``/healthz`` answers 200 when the history can be read (or does not exist yet: no
run so far) and 503 when it cannot.
"""

from __future__ import annotations

import json
import signal
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import structlog
from prometheus_client import CollectorRegistry, Gauge, make_wsgi_app
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from agents.ports.errors import ConfigError
from controller.platform.observability.history import HistoryError, HistoryStore
from controller.platform.observability.metrics import BUILD_INFO, HistoryCollector, KnownLabels

log = structlog.get_logger("sandloop.exporter")
WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass(frozen=True)
class Exporter:
    """The registry the exporter serves and the history it reads."""

    registry: CollectorRegistry
    store: HistoryStore
    collector: HistoryCollector

    def health(self) -> tuple[bool, dict[str, object]]:
        """Whether the history can be read, with what a person needs to know if not."""
        try:
            runs = self.store.count_runs()
        except HistoryError as exc:
            return False, {"status": "error", "history": str(self.store.path), "error": exc.one_line()}
        state = "ok" if self.store.exists() else "ok (no run recorded yet)"
        return True, {"status": state, "history": str(self.store.path), "runs": runs}


def build_exporter(store: HistoryStore, known: KnownLabels, *, process_metrics: bool = True) -> Exporter:
    """A fresh registry (never the global one) with the history collector and live metrics."""
    registry = CollectorRegistry(auto_describe=True)
    collector = HistoryCollector(store, known)
    registry.register(collector)
    Gauge(BUILD_INFO, "Version of sandloop serving these metrics (always 1).", ("version",),
          registry=registry).labels(_version()).set(1)
    if process_metrics:
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
    return Exporter(registry, store, collector)


def make_app(exporter: Exporter) -> WSGIApp:
    """The WSGI app: ``/metrics``, ``/healthz`` and a short index at ``/``."""
    metrics = make_wsgi_app(exporter.registry)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            served: Iterable[bytes] = metrics(environ, start_response)
            return served
        if path == "/healthz":
            ok, body = exporter.health()
            start_response("200 OK" if ok else "503 Service Unavailable",
                           [("Content-Type", "application/json")])
            return [json.dumps(body).encode()]
        if path == "/":
            start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"sandloop exporter: /metrics (Prometheus), /healthz\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found: try /metrics or /healthz\n"]

    return app


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    """Request lines go to the structured log at debug level, not raw to stderr."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("http.request", client=self.client_address[0], request=format % args)


def bind(host: str, port: int, app: WSGIApp) -> WSGIServer:
    """Listen on ``host:port`` (IPv4 or IPv6).

    Raises:
        ConfigError: the address cannot be bound (in use, not local, not allowed).
    """
    server_class: type[_ThreadingServer] = _ThreadingServer6 if ":" in host else _ThreadingServer
    try:
        return make_server(host, port, app, server_class=server_class, handler_class=_QuietHandler)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                          hint="set SBX_OBSERVABILITY__SERVE_HOST / SBX_OBSERVABILITY__SERVE_PORT") from exc


def serve_until_stopped(server: WSGIServer, exporter: Exporter) -> None:
    """Serve until SIGTERM or SIGINT; SIGTERM is handled too (PID 1 in a container ignores it otherwise)."""
    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    host, port = str(server.server_address[0]), server.server_address[1]
    ok, health = exporter.health()
    log.info("exporter.listening", url=f"http://{host}:{port}/metrics", healthy=ok, **health)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.shutdown()
        server.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.info("exporter.stopped")


def _version() -> str:
    try:
        return metadata.version("sandloop")
    except metadata.PackageNotFoundError:
        return "unknown"
