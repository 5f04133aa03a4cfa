"""The FastAPI application: runs, health, readiness, the exporter's /metrics and the web console at /."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from agents.ports.errors import PlatformError
from controller.entry.console.app import console_app
from controller.entry.console.errors import not_local_page
from controller.entry.service import (
    checks,
    conversation,
    docs,
    history,
    problems,
    routes,
    stats,
    subjects,
)
from controller.entry.service.limits import BodyLimit
from controller.entry.service.loopback import LoopbackOnly
from controller.entry.service.state import ServiceState
from controller.platform.observability.exporter import Exporter
from controller.platform.sandbox.factory import sandbox_description

DESCRIPTION = """Submit agent runs to sandloop, follow them live and fetch their artefacts.

Every error is an RFC 9457 problem document (`application/problem+json`) whose `detail` is
the line the command line prints. Once any token exists, every endpoint but `/healthz`,
`/readyz` and `/metrics` needs `Authorization: Bearer TOKEN` (this page and `/openapi.json`
too). While no token exists, only loopback requests are answered: a Host header that is not
`localhost`, `127.0.0.1` or `[::1]` gets 403 (DNS rebinding). See docs/api.md."""


def create_app(state: ServiceState, exporter: Exporter | None = None) -> FastAPI:
    """The service's app over ``state``; ``exporter``'s registry is served at /metrics."""
    app = FastAPI(title="sandloop", version="1", description=DESCRIPTION, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.service = state
    problems.install(app)
    docs.install(app)
    app.include_router(routes.router)
    app.include_router(stats.router)
    app.include_router(conversation.router)
    app.include_router(history.router)
    app.include_router(checks.router)
    app.include_router(subjects.router)
    app.add_middleware(BodyLimit, limit=state.settings.service.upload_bytes)
    app.add_middleware(LoopbackOnly, state=state, page=not_local_page)  # outermost: before anything is read
    if exporter is not None:
        registry = exporter.registry

        @app.get("/metrics", include_in_schema=False)
        def metrics() -> Response:
            """The exporter's metrics of the run history (Prometheus text format)."""
            return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz", tags=["health"], summary="The process answers",
             responses={503: {"description": "The run history cannot be read"}})
    def healthz() -> JSONResponse:
        """200 while the process runs and can read the run history (the exporter's check)."""
        ok, body = exporter.health() if exporter is not None else (True, {})
        body.pop("history", None)  # a path of the server's: nobody's business
        if "error" in body:
            body["error"] = "the run history cannot be read (see the service's log)"
        body = {**body, "status": ("draining" if state.draining.is_set() else "ok") if ok else "error",
                "sandbox": sandbox_description(state.settings)}
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/readyz", tags=["health"], summary="Ready to run: store and engine reachable, images present",
             responses={503: {"description": "Not ready, with the reason per check"}})
    def readyz(request: Request) -> JSONResponse:
        """200 when the store and the sandbox engine answer, the engine has the agents' sandbox
        images (checked at most every few seconds) and the service is not draining."""
        checks = {"store": _check(state.store.ping), "engine": _check(state.engine_probe),
                  "images": _check(state.images_probe),
                  "accepting": "ok" if not state.draining.is_set() else "draining"}
        ready = all(value == "ok" for value in checks.values())
        return JSONResponse({"status": "ready" if ready else "not ready", "checks": checks},
                            status_code=200 if ready else 503)

    app.mount("/", console_app(state))  # last: the web console answers every path the API does not
    return app


def _check(probe: Any) -> str:
    try:
        probe()
    except PlatformError as exc:
        return exc.one_line()
    return "ok"
