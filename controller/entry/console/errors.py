"""Errors as pages: every refusal is the service's one line, on a page with a way on.

The console's own exceptions (sign-in needed, not local) and the service's
(:class:`~controller.entry.service.problems.Problem`, which the console's routes raise too, and the
platform errors) become HTML pages
with the same status and the same one line the API would answer. A path under ``/v1`` that no
API route matched keeps the API's problem+json.
"""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import quote

import structlog
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request

from agents.ports.errors import PlatformError
from controller.entry.console.headers import HEADERS
from controller.entry.console.templating import page
from controller.entry.console.viewer import NotLocal, SignInRequired
from controller.entry.service.loopback import REFUSAL
from controller.entry.service.problems import Problem, problem_response, status_of, validation_line

log = structlog.get_logger("sandloop.console")


def error_page(request: Request, status: int, detail: str) -> Response:
    """The error page: status, its phrase, and the one line."""
    line = detail.splitlines()[0][:1000] if detail else HTTPStatus(status).phrase
    return page(request, "error.html", status=status, title=HTTPStatus(status).phrase, detail=line)


def not_local_page(request: Request) -> Response:
    """The 403 page of a no-token console asked by a host or client that is not loopback."""
    response = error_page(request, 403, REFUSAL)
    response.headers.update({name.decode(): value.decode() for name, value in HEADERS})  # served outside the console
    return response


def sign_in_redirect(request: Request) -> Response:
    """Send the browser to the sign-in form, coming back here afterwards (GET only)."""
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    target = "/sign-in" + (f"?next={quote(back, safe='')}" if request.method == "GET" and back != "/" else "")
    return RedirectResponse(target, status_code=303)


def install(app: FastAPI) -> None:
    """Answer every error of the console's app as a page (see the module doc)."""

    @app.exception_handler(SignInRequired)
    async def _sign_in(request: Request, exc: SignInRequired) -> Response:
        return sign_in_redirect(request)

    @app.exception_handler(NotLocal)
    async def _not_local(request: Request, exc: NotLocal) -> Response:
        return not_local_page(request)

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> Response:
        return error_page(request, exc.status, exc.detail)

    @app.exception_handler(PlatformError)
    async def _platform(request: Request, exc: PlatformError) -> Response:
        return error_page(request, status_of(exc), exc.one_line())

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        return error_page(request, 422, validation_line(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        if request.url.path.startswith("/v1"):
            return problem_response(exc.status_code, detail, request.url.path, dict(exc.headers or {}))
        if exc.status_code == 404:
            detail = f"there is no page {request.url.path[:200]}"
        return error_page(request, exc.status_code, detail)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> Response:
        log.error("console.bug", path=request.url.path, error_type=type(exc).__name__, exc_info=exc)
        return error_page(request, 500, f"unexpected {type(exc).__name__}: a bug in sandloop, please report it")
