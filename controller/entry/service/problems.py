"""RFC 9457 problem details: every error the service answers is one of these.

The ``detail`` is the same one line the CLI prints after ``error:``; a request never gets a
traceback, and bad input never a 500.
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from agents.ports.errors import (
    ConfigError,
    EngineUnavailable,
    EnvironmentFault,
    PlatformError,
    UsageError,
)
from controller.platform.store import QueueFull, QuotaExceeded, StorageFull, StoreError

log = structlog.get_logger("sandloop.service")
PROBLEM_JSON = "application/problem+json"


class Problem(Exception):
    """An error answered as a problem document."""

    def __init__(self, status: int, detail: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def problem_response(status: int, detail: str, instance: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The problem document for ``status`` with ``detail`` (one line)."""
    body: dict[str, Any] = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
                            "detail": detail.splitlines()[0][:1000] if detail else HTTPStatus(status).phrase,
                            "instance": instance}
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def status_of(exc: PlatformError) -> int:
    """The HTTP status of a platform error (the CLI's exit code, said the HTTP way)."""
    if isinstance(exc, QuotaExceeded):
        return 429
    if isinstance(exc, QueueFull):
        return 503
    if isinstance(exc, StorageFull):
        return 507
    if isinstance(exc, ConfigError):
        return 422
    if isinstance(exc, UsageError):  # TargetError and the rest: the request names something wrong
        return 422
    if isinstance(exc, (EngineUnavailable, StoreError, EnvironmentFault)):
        return 503
    return 500


def validation_line(errors: Sequence[Any]) -> str:
    """One line for the first field that did not validate, like the CLI's invalid setting line."""
    if not errors:
        return "the request is not valid"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "request"
    return f"invalid {where}: {first.get('msg', 'not valid')}"


def install(app: FastAPI) -> None:
    """Answer every error the app can raise as problem+json."""

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem_response(exc.status, exc.detail, request.url.path, exc.headers)

    @app.exception_handler(PlatformError)
    async def _platform(request: Request, exc: PlatformError) -> JSONResponse:
        status = status_of(exc)
        headers = {"Retry-After": "10"} if status in (429, 503) else None
        return problem_response(status, exc.one_line(), request.url.path, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return problem_response(422, validation_line(exc.errors()), request.url.path)

    @app.exception_handler(ValidationError)
    async def _model(request: Request, exc: ValidationError) -> JSONResponse:
        return problem_response(422, validation_line(exc.errors()), request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return problem_response(exc.status_code, detail, request.url.path, dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("service.bug", path=request.url.path, error_type=type(exc).__name__, exc_info=exc)
        return problem_response(500, f"unexpected {type(exc).__name__}: a bug in sandloop, please report it",
                                request.url.path)


def refuse_while_draining(draining: bool, what: str) -> None:
    """A shutting-down service accepts nothing new: 503 with a Retry-After.

    Raises:
        Problem: 503 while ``draining``.
    """
    if draining:
        raise Problem(503, f"the service is shutting down and accepts no {what}", headers={"Retry-After": "30"})
