"""CSRF checks of every website form.

Signed in, a form carries `SignedIn.csrf_token`, which the core derives from the session's
token (`printjob_core.sessions.csrf_token_for`, an HMAC: nothing stored).
Signed out (sign in, sign up, accept an invite) there is no session yet: the page sets a
random `printjob_csrf` cookie and puts the same value in the form (double submit); another
site can make a browser send the cookie but cannot read it to put it in the form.
"""

from __future__ import annotations

import hmac
import secrets

from printjob_core.services.website import SignedIn

#: The hidden field every form carries.
CSRF_FIELD = "csrf_token"


class CsrfRefused(Exception):
    """A form came without its token, or with a wrong one: perhaps from another site, so
    nothing it asks for is done (403)."""


def new_form_token() -> str:
    """A fresh token for the signed-out forms' double-submit cookie."""
    return secrets.token_urlsafe(32)


def check_signed_out(cookie: str | None, presented: str | None) -> None:
    """Refuse a signed-out form whose field does not match its cookie."""
    if not cookie or not presented or not hmac.compare_digest(cookie, presented):
        raise CsrfRefused


def check_signed_in(person: SignedIn, presented: str | None) -> None:
    """Refuse a signed-in form whose token was not made for this session (the core made
    `person.csrf_token` from the session's token)."""
    if not presented or not hmac.compare_digest(person.csrf_token, presented):
        raise CsrfRefused


__all__ = ["CSRF_FIELD", "CsrfRefused", "check_signed_in", "check_signed_out", "new_form_token"]
