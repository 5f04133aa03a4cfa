"""``/docs`` and ``/openapi.json`` under the API's own rule: once a token exists, a caller needs one.

Swagger UI's files are the service's own (the ``fastapi-swagger`` package's copy of the current
Swagger UI, which reads OpenAPI 3.1, under
``/docs/assets/``) and its start is a static file, not an inline script: the page works on a
machine without internet access (FastAPI's default page loads them from a CDN) and is sent
with a CSP that allows scripts from the service only.

FastAPI serves both without any check; they are mounted here instead behind the same rule as
every run endpoint: a bearer token (:func:`~controller.entry.service.auth.principal`), or, for a
browser, the console's sign-in (its session cookie; these are pages to read, so the cookie that
never authorises an API call may show them). Swagger UI's "Try it out" then sends the token the
reader gives it under "Authorize".
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.staticfiles import StaticFiles

from controller.entry.console.sessions import session_token
from controller.entry.service.auth import Principal, principal
from controller.entry.service.state import state_of


def reader(request: Request) -> Principal:
    """Who reads the API's documents: the console's signed-in user, else the bearer token's."""
    state = state_of(request)
    signed_in = session_token(state.store, request) if state.store.has_tokens() else None
    return Principal(signed_in.name, signed_in.admin) if signed_in is not None else principal(request)


Caller = Annotated[Principal, Depends(reader)]


def install(app: FastAPI) -> None:
    """Serve the OpenAPI document and Swagger UI behind the token check."""

    @app.get("/openapi.json", include_in_schema=False)
    def openapi(_caller: Caller) -> JSONResponse:
        document: dict[str, Any] = app.openapi()
        return JSONResponse(document)

    @app.get("/docs", include_in_schema=False)
    def swagger(_caller: Caller) -> HTMLResponse:
        return HTMLResponse(PAGE.format(title=html.escape(f"{app.title} - API")),
                            headers={"Content-Security-Policy": CSP})

    app.mount("/docs/assets", StaticFiles(directory=Path(str(files("fastapi_swagger") / "resources"))),
              name="swagger-ui")
    app.mount("/docs/start", StaticFiles(directory=STATIC), name="swagger-start")


STATIC = Path(__file__).parent / "static"
#: Scripts and styles from the service only; Swagger UI sets style attributes, so styles may be inline.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/start/swagger-init.js"></script>
</body>
</html>
"""
