"""Signing in and out, the session cookie's attributes, and CSRF on every form.

A session is a random id in an HttpOnly, SameSite=Strict cookie whose hash is in the store
(so every replica can verify it); sign-out, expiry and removing the token end it. Every POST
carries a token derived from the browser's secret; without it, or from another origin, 403.
"""

from __future__ import annotations

import time

from controller.entry.console import sessions
from controller.entry.console.routes.sign_in import safe_next
from controller.platform.store.tokens import token_hash
from tests.unit.controller.entry.console.conftest import Console


class TestSignIn:
    def test_a_valid_token_opens_a_session_cookie_with_strict_attributes(self, console: Console):
        """Sign-in answers 303 with an HttpOnly, SameSite=Strict, Path=/ session cookie (not Secure over http)."""
        token = console.token("alice")
        console.client.get("/sign-in")
        response = console.client.post("/sign-in", data={"token": token, "csrf": console.csrf(), "next": "/"},
                                       follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/"
        cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith(sessions.SESSION_COOKIE))
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie and token not in cookie
        assert console.client.get("/").status_code == 200

    def test_the_store_keeps_only_the_sessions_hash(self, console: Console):
        """The session id never reaches the store; its SHA-256 finds the token."""
        console.sign_in(console.token("alice"))
        session = console.client.cookies[sessions.SESSION_COOKIE]
        assert console.store.session_token(token_hash(session)).name == "alice"
        raw = (console.runs_dir / "service.sqlite").read_bytes()
        assert session.encode() not in raw

    def test_a_wrong_token_is_refused_next_to_the_field(self, console: Console):
        console.token("alice")
        response = console.client.post("/sign-in", data={"token": "sbx_nope", "csrf": console.csrf()})
        assert response.status_code == 401 and 'id="token-error"' in response.text
        assert sessions.SESSION_COOKIE not in console.client.cookies

    def test_without_a_session_a_page_sends_the_browser_to_sign_in_and_back(self, console: Console):
        console.token("alice")
        response = console.client.get("/runs/x?node=a", follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/sign-in?next=%2Fruns%2Fx%3Fnode%3Da"

    def test_next_never_leaves_the_console(self):
        """An open redirect through ?next= is refused: other hosts become /."""
        assert safe_next("/runs/a?b=c") == "/runs/a?b=c"
        for bad in ("//evil.example/", "/\\evil.example", "https://evil.example", "javascript:alert(1)", ""):
            assert safe_next(bad) == "/"


class TestSessionEnds:
    def test_sign_out_ends_the_session_in_the_store(self, console: Console):
        """After sign-out the old cookie, replayed, opens nothing."""
        console.sign_in(console.token("alice"))
        old = console.client.cookies[sessions.SESSION_COOKIE]
        response = console.client.post("/sign-out", data={"csrf": console.csrf("/submit")}, follow_redirects=False)
        assert response.status_code == 303
        console.client.cookies.set(sessions.SESSION_COOKIE, old)
        assert console.client.get("/", follow_redirects=False).status_code == 303

    def test_removing_the_token_ends_its_sessions(self, console: Console):
        console.sign_in(console.token("alice"))
        console.store.remove_token("alice")
        console.token("bob")  # tokens still exist: the console still needs a session
        assert console.client.get("/", follow_redirects=False).status_code == 303

    def test_an_expired_session_is_not_accepted(self, console: Console):
        token = console.token("alice")
        session = sessions.start_session(console.store, console.store.token_by_hash(token_hash(token)), 1.0,
                                         time.time() - 7200)
        console.client.cookies.set(sessions.SESSION_COOKIE, session)
        assert console.client.get("/", follow_redirects=False).status_code == 303


class TestCsrf:
    def test_a_post_without_the_token_is_refused_with_a_clear_page(self, console: Console):
        console.run("run-1", status="queued")
        response = console.client.post("/runs/run-1/cancel", data={"confirm": "yes"})
        assert response.status_code == 403 and "CSRF" in response.text
        assert console.store.get("run-1").status == "queued"

    def test_another_browsers_token_is_refused(self, console: Console, tmp_path):
        console.run("run-1", status="queued")
        other = sessions.csrf_token(sessions.new_secret())
        console.client.get("/")
        assert console.client.post("/runs/run-1/cancel", data={"csrf": other, "confirm": "yes"}).status_code == 403

    def test_a_post_from_another_origin_is_refused_even_with_the_token(self, console: Console):
        console.run("run-1", status="queued")
        token = console.csrf("/submit")
        response = console.client.post("/runs/run-1/cancel", data={"csrf": token, "confirm": "yes"},
                                       headers={"Origin": "http://evil.example"})
        assert response.status_code == 403 and console.store.get("run-1").status == "queued"

    def test_with_the_token_the_form_works(self, console: Console):
        console.run("run-1", status="queued")
        response = console.client.post("/runs/run-1/cancel", data={"csrf": console.csrf("/submit"), "confirm": "yes"},
                                       follow_redirects=False)
        assert response.status_code == 303 and console.store.get("run-1").status == "cancelled"

    def test_the_token_is_bound_to_the_browsers_secret(self):
        one, two = sessions.new_secret(), sessions.new_secret()
        assert sessions.csrf_token(one) == sessions.csrf_token(one) != sessions.csrf_token(two)
        assert one not in sessions.csrf_token(one)
