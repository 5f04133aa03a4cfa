"""The no-token service answers loopback only: a loopback client *and* a loopback Host header.

Without any token (the default on a laptop) ``serve`` listens on loopback only and every caller
is the local admin. Listening on loopback does not stop DNS rebinding: a page of another site
whose name was made to resolve to 127.0.0.1 sends its requests to the service with
``Host: attacker.example:PORT``, and, being same-origin there, could read every run and drive
the API (submit, cancel, forget). So while no token exists the whole app (API, artefacts,
``/docs``, ``/openapi.json``, health, ``/metrics`` and the console) refuses, before any route
runs, a request whose client or Host header is not loopback: 403, problem+json on the API's
paths and the console's error page on the console's.

Once a token exists the tokens decide (a bearer token for the API, a session for the console),
whatever the Host header: a token-protected service is meant to be reached under any name,
and a rebinding page cannot read or send the victim's token (the bearer token is never in the
browser, and the session cookie belongs to the real name and is ``SameSite=Strict``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from controller.entry.service.problems import problem_response
from controller.entry.service.state import ServiceState

_LOOPBACK_NAMES = {"localhost", "localhost."}
API_PREFIXES = ("/v1/", "/docs", "/openapi.json", "/metrics", "/healthz", "/readyz")
REFUSAL = ("no token exists, so the service answers only on a loopback address (open it as "
           "http://127.0.0.1:PORT/), or create one: python -m controller tokens add NAME")


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (an address or a name, without the port) is a loopback one."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(request: Request) -> str:
    """The Host header's host, without its port."""
    host = request.headers.get("host", "")
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def local_request(request: Request) -> bool:
    """Whether both the client and the Host header are loopback."""
    client = request.client.host if request.client else ""
    return is_loopback_host(client) and is_loopback_host(host_name(request))


def is_api_path(path: str) -> bool:
    """Whether ``path`` is answered by the API (problem+json), not by the console (pages)."""
    return path == "/v1" or path.startswith(API_PREFIXES)


class LoopbackOnly:
    """ASGI middleware refusing non-loopback requests while no token exists (see the module doc).

    ``page`` renders the console's refusal for a path that is not the API's. A loopback request
    costs no store read; only a foreign one asks the store whether a token exists.
    """

    def __init__(self, app: ASGIApp, state: ServiceState, page: Callable[[Request], Response]) -> None:
        self.app = app
        self.state = state
        self.page = page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if local_request(request) or await anyio.to_thread.run_sync(self.state.store.has_tokens):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # none is served; refuse without accepting
            await send({"type": "websocket.close", "code": 1008})
            return
        path = request.url.path
        response = problem_response(403, REFUSAL, path) if is_api_path(path) else self.page(request)
        await response(scope, receive, send)
