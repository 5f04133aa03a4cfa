"""Console sign-in: session cookies every replica can verify, and the CSRF token of every form.

**Sessions.** Signing in with a bearer token creates a random 256-bit session id; the browser
keeps it in an HttpOnly, SameSite=Strict cookie (Secure over https), the store keeps only its
SHA-256 (the ``sessions`` table, beside the tokens' hashes), with the token's name and an
expiry (``SBX_SERVICE__SESSION_HOURS``). Replicas share only the store, so any replica can
verify any session; sign-out deletes the row, and removing the token ends all its sessions
(the lookup joins the tokens table). A signed cookie would have needed a signing key shared
through the store anyway, and could not be revoked.

**CSRF.** Every form carries ``csrf``, an HMAC of the browser's secret: its session id when
signed in, else a random ``sandloop_csrf`` cookie (the sign-in form, and the no-token local
mode), which is set on the first page and renewed at sign-in and sign-out. A page from another
site can neither read the cookie nor compute the token; a POST without it is refused (403).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.requests import Request
from starlette.responses import Response

from controller.platform.store import RunStore, TokenRow
from controller.platform.store.tokens import token_hash

SESSION_COOKIE = "sandloop_session"
CSRF_COOKIE = "sandloop_csrf"
CSRF_FIELD = "csrf"
_MAX_COOKIE = 100
_CSRF_PURPOSE = b"sandloop-console-csrf"


def new_secret() -> str:
    """A fresh 256-bit secret for a cookie."""
    return secrets.token_urlsafe(32)


def cookie(request: Request, name: str) -> str | None:
    """The cookie ``name`` if it looks like one of ours (bounded length)."""
    value = request.cookies.get(name)
    return value if value and len(value) <= _MAX_COOKIE else None


def session_token(store: RunStore, request: Request) -> TokenRow | None:
    """The token of the browser's live session, or None."""
    session = cookie(request, SESSION_COOKIE)
    return store.session_token(token_hash(session)) if session else None


def start_session(store: RunStore, token: TokenRow, hours: float, now: float) -> str:
    """A new session for ``token`` (stored hashed, expiring after ``hours``); its id for the cookie."""
    session = new_secret()
    store.add_session(token_hash(session), token.name, now + hours * 3600)
    return session


def end_session(store: RunStore, request: Request) -> None:
    """Forget the browser's session (sign-out)."""
    session = cookie(request, SESSION_COOKIE)
    if session:
        store.remove_session(token_hash(session))


def set_cookie(response: Response, request: Request, name: str, value: str, max_age: int | None) -> None:
    """Set one of the console's cookies: HttpOnly, SameSite=Strict, Path=/, Secure over https."""
    response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")


def browser_secret(request: Request) -> str | None:
    """What the browser's CSRF token is derived from: its session, else its CSRF cookie."""
    return cookie(request, SESSION_COOKIE) or cookie(request, CSRF_COOKIE)


def csrf_token(secret: str) -> str:
    """The form token of the browser whose secret is ``secret``."""
    return hmac.new(secret.encode(), _CSRF_PURPOSE, hashlib.sha256).hexdigest()


def csrf_ok(request: Request, sent: object) -> bool:
    """Whether ``sent`` (the form's ``csrf`` field) is this browser's token."""
    secret = browser_secret(request)
    if secret is None or not isinstance(sent, str) or len(sent) > _MAX_COOKIE:
        return False
    return hmac.compare_digest(csrf_token(secret), sent)
