"""Who is looking: a signed-in token's owner, or the local admin while no token exists.

Tenancy is the API's (:class:`~controller.entry.service.auth.Principal`): a viewer sees its own
runs, an admin everyone's, and another tenant's run is 404 like one that does not exist.

**No token at all** (the local mode): ``serve`` listens on loopback only, and the console answers
only requests from a loopback address *whose Host header names a loopback host*. The second
check stops DNS rebinding: a page of another site whose name was made to resolve to 127.0.0.1
would otherwise be same-origin with an unauthenticated console and could read and drive it.
The service's :class:`~controller.entry.service.loopback.LoopbackOnly` refuses such a request
for the whole app before it gets here; the console checks again, in case it is ever served alone.
"""

from __future__ import annotations

from starlette.requests import Request

from controller.entry.console import sessions
from controller.entry.service.auth import Principal
from controller.entry.service.loopback import host_name, is_loopback_host, local_request
from controller.entry.service.state import state_of
from controller.platform.store import LOCAL_OWNER

__all__ = ["NotLocal", "SignInRequired", "host_name", "is_loopback_host", "local_request", "state_of", "viewer"]


class SignInRequired(Exception):
    """The request has no live session while tokens exist (the handler sends the browser to sign in)."""


class NotLocal(Exception):
    """A no-token console was asked by a host or client that is not loopback (403)."""


def viewer(request: Request) -> Principal:
    """The viewer of ``request`` (a FastAPI dependency).

    Raises:
        SignInRequired: tokens exist and the browser has no live session.
        NotLocal: no token exists and the request is not a loopback one.
    """
    state = state_of(request)
    if not state.store.has_tokens():
        if not local_request(request):
            raise NotLocal()
        return Principal(LOCAL_OWNER, admin=True)
    token = sessions.session_token(state.store, request)
    if token is None:
        raise SignInRequired()
    return Principal(token.name, token.admin)
