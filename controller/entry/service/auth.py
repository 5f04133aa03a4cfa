"""Who is asking: a bearer token's name, or the local user while no token exists.

Once any token exists, every endpoint but /healthz, /readyz and /metrics needs one (401
otherwise), /docs and /openapi.json too. Runs submitted while no token existed belong to
``~local``, a name no token can have, so no token inherits them (an admin sees them). A token
sees and cancels only its own runs; an admin token sees all. Another tenant's run answers 404,
like a run that does not exist, so ids do not leak.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from controller.entry.service.problems import Problem
from controller.entry.service.state import state_of
from controller.platform.store import LOCAL_OWNER, RunRow
from controller.platform.store.tokens import token_hash

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="sandloop"'}
_MAX_TOKEN = 200


@dataclass(frozen=True)
class Principal:
    """The caller: a token's name and whether it is an admin."""

    name: str
    admin: bool

    def sees(self, run: RunRow) -> bool:
        """Whether the caller may see (and cancel) ``run``."""
        return self.admin or run.owner == self.name


def principal(request: Request) -> Principal:
    """The caller of ``request`` (a FastAPI dependency).

    Raises:
        Problem: 401 without a valid bearer token while tokens exist.
    """
    state = state_of(request)
    if not state.store.has_tokens():
        return Principal(LOCAL_OWNER, admin=True)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > _MAX_TOKEN:
        raise Problem(401, "a bearer token is required (Authorization: Bearer TOKEN)", headers=_CHALLENGE)
    found = state.store.token_by_hash(token_hash(token))
    if found is None:
        raise Problem(401, "the bearer token is not valid", headers=_CHALLENGE)
    return Principal(found.name, found.admin)


#: An endpoint's caller (the FastAPI dependency on :func:`principal`).
Caller = Annotated[Principal, Depends(principal)]
