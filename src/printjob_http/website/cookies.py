"""The website's two cookies: the session (`printjob_session`) and the signed-out forms'
CSRF token (`printjob_csrf`), with the flags decided in docs/decisions.md."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar.datastructures import Cookie

SESSION_COOKIE = "printjob_session"
CSRF_COOKIE = "printjob_csrf"
#: The signed-out forms' token lives as long as a person may take to fill a form in.
CSRF_COOKIE_SECONDS = 2 * 60 * 60


def session_cookie(token: str, expires_at: datetime, secure: bool) -> Cookie:
    """The session cookie: script cannot read it, other sites' forms do not send it."""
    return Cookie(
        key=SESSION_COOKIE,
        value=token,
        path="/",
        expires=int(expires_at.timestamp()),
        httponly=True,
        samesite="lax",
        secure=secure,
    )


def ended_session_cookie(secure: bool) -> Cookie:
    """Tells the browser to forget the session cookie."""
    return Cookie(
        key=SESSION_COOKIE,
        value="",
        path="/",
        max_age=0,
        expires=0,
        httponly=True,
        samesite="lax",
        secure=secure,
    )


def csrf_cookie(token: str, secure: bool) -> Cookie:
    """The double-submit cookie of the sign-in, sign-up and invite forms."""
    return Cookie(
        key=CSRF_COOKIE,
        value=token,
        path="/",
        max_age=CSRF_COOKIE_SECONDS,
        httponly=True,
        samesite="lax",
        secure=secure,
    )


def cookie_of(scope: Any, name: str) -> str | None:
    """A cookie's value from the raw request headers (None when it was not sent)."""
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for header, value in headers:
        if header != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            key, sep, found = part.strip().partition("=")
            if sep and key == name:
                return found
    return None


__all__ = [
    "CSRF_COOKIE",
    "SESSION_COOKIE",
    "cookie_of",
    "csrf_cookie",
    "ended_session_cookie",
    "session_cookie",
]
