"""Signing in with a bearer token, and signing out."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from controller.entry.console import forms, sessions
from controller.entry.console.templating import page
from controller.entry.console.viewer import state_of
from controller.platform.store.tokens import token_hash

router = APIRouter()
_MAX_TOKEN = 200


def safe_next(target: str) -> str:
    """Where to go after signing in: a path of this console, never another site (``//host``, ``/\\host``)."""
    if not target.startswith("/") or target.startswith(("//", "/\\")) or len(target) > 2000:
        return "/"
    return target


@router.get("/sign-in")
def sign_in_form(request: Request, next: str = "/") -> Response:
    """The sign-in form (in the local mode: a note that no sign-in is needed)."""
    return page(request, "sign_in.html", title="Sign in", next=safe_next(next), error="")


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    """Check the token; on success a fresh session (and CSRF cookie) and back to where the viewer was."""
    form = await forms.posted(request)
    state = state_of(request)
    token, target = forms.text(form, "token"), safe_next(forms.text(form, "next", "/"))
    found = state.store.token_by_hash(token_hash(token)) if 0 < len(token) <= _MAX_TOKEN else None
    if found is None:
        return page(request, "sign_in.html", title="Sign in", status=401, next=target,
                    error="that token is not valid: paste the whole token `tokens add` printed (sbx_…)")
    session = sessions.start_session(state.store, found, state.settings.service.session_hours, time.time())
    response = RedirectResponse(target, status_code=303)
    max_age = int(state.settings.service.session_hours * 3600)
    sessions.set_cookie(response, request, sessions.SESSION_COOKIE, session, max_age)
    sessions.set_cookie(response, request, sessions.CSRF_COOKIE, sessions.new_secret(), None)
    return response


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    """End the session here and in the store (every replica), and show the sign-in form."""
    await forms.posted(request)
    sessions.end_session(state_of(request).store, request)
    response = RedirectResponse("/sign-in", status_code=303)
    response.delete_cookie(sessions.SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    sessions.set_cookie(response, request, sessions.CSRF_COOKIE, sessions.new_secret(), None)
    return response
