"""``/docs`` and ``/openapi.json`` under the API's own rule: once a token exists, a caller needs one.

FastAPI serves both without any check; they are mounted here instead behind the same rule as
every run endpoint: a bearer token (:func:`~controller.entry.service.auth.principal`), or, for a
browser, the console's sign-in (its session cookie; these are pages to read, so the cookie that
never authorises an API call may show them). Swagger UI's "Try it out" then sends the token the
reader gives it under "Authorize".
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from fastapi import Request

from controller.entry.console.sessions import session_token
from controller.entry.service.auth import Principal, principal
from controller.entry.service.state import ServiceState


def reader(request: Request) -> Principal:
    """Who reads the API's documents: the console's signed-in user, else the bearer token's."""
    state: ServiceState = request.app.state.service
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
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} - API")
