"""Rendering a page: one Jinja2 environment, autoescaped everywhere, and what every page needs.

Autoescaping is on for every template whatever its name (``autoescape=True``): every value a
template prints is escaped unless it is :class:`markupsafe.Markup`, which only the
highlighting, diff, ANSI, Markdown and SVG builders make, each from text they escaped or
sanitised themselves.
"""

from __future__ import annotations

from typing import Any

import jinja2
from fastapi.responses import HTMLResponse
from starlette.requests import Request

from controller.entry.console import filters, sessions
from controller.entry.console.viewer import state_of
from controller.entry.console.views.paths import local_names

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("controller.entry.console", "templates"),
    autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
)
ENV.filters.update(filters.FILTERS)
ENV.filters["local"] = local_names  # a run's text without server paths: {{ row.error | local(row.id) }}


def _secret(request: Request) -> tuple[str, bool]:
    """The browser's CSRF secret, and whether it is new (a cookie to set with this page)."""
    known = sessions.browser_secret(request)
    if known is not None:
        return known, False
    fresh = getattr(request.state, "fresh_secret", None) or sessions.new_secret()
    request.state.fresh_secret = fresh
    return fresh, True


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """The page ``template`` with ``context``, plus the viewer, the form token and the signed-in flag."""
    context.setdefault("viewer", None)
    context.setdefault("title", "Console")
    secret, fresh = _secret(request)
    signed_in = sessions.cookie(request, sessions.SESSION_COOKIE) is not None
    html = ENV.get_template(template).render(
        request=request, csrf=sessions.csrf_token(secret), signed_in=signed_in,
        local=not state_of(request).store.has_tokens(), path=request.url.path, **context)
    response = HTMLResponse(html, status_code=status)
    if fresh:
        sessions.set_cookie(response, request, sessions.CSRF_COOKIE, secret, max_age=None)
    return response
