"""The console's application, mounted by the service's :func:`~controller.entry.service.app.create_app` at ``/``.

A sub-application of its own, so that its error pages, its security headers and its static
files stay apart from the API's problem+json: the API's routes are matched first, and
everything else is the console's (a path under ``/v1`` that no route matched still answers
problem+json, see :mod:`controller.entry.console.errors`).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.staticfiles import StaticFiles

from controller.entry.console import errors
from controller.entry.console.headers import SecurityHeaders
from controller.entry.console.routes import ROUTERS
from controller.entry.service.state import ServiceState

STATIC = Path(__file__).parent / "static"


def console_app(state: ServiceState) -> FastAPI:
    """The console over the service's ``state`` (the same store, settings and run signals)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = state
    errors.install(app)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_api_route("/favicon.ico", lambda: RedirectResponse("/static/favicon.svg", status_code=301),
                      include_in_schema=False)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(SecurityHeaders)
    return app
