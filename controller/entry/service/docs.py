"""``/docs`` and ``/openapi.json`` under the API's own rule: once a token exists, a caller needs one.

FastAPI serves both without any check; they are mounted here instead with the same
:func:`~controller.entry.service.auth.principal` dependency as every run endpoint. Swagger UI
in a browser then needs the token too: open ``/docs`` from the console (signed in), or from a
client that sends ``Authorization``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from controller.entry.service.auth import Principal, principal

Caller = Annotated[Principal, Depends(principal)]


def install(app: FastAPI) -> None:
    """Serve the OpenAPI document and Swagger UI behind the token check."""

    @app.get("/openapi.json", include_in_schema=False)
    def openapi(_caller: Caller) -> JSONResponse:
        document: dict[str, Any] = app.openapi()
        return JSONResponse(document)

    @app.get("/docs", include_in_schema=False)
    def swagger(_caller: Caller) -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} - API")
