"""The website's sessions and invites: tokens, their hashes, expiry, and CSRF tokens.

A session token is 32 random bytes, URL-safe (43 characters), carried by the
`printjob_session` cookie; the database keeps only its SHA-256, so a stolen copy of the
database signs nobody in. As with API keys, a plain hash is sound for a random secret.
A session ends after 7 days without use (idle) and 30 days after sign-in whatever
happens (absolute); the last-seen time is written at most once a minute.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta

from printjob_core.model import Invite, Person, WebSession

SESSION_COOKIE = "printjob_session"
#: The double-submit cookie of the signed-out forms (sign in, sign up, accept invite).
CSRF_COOKIE = "printjob_csrf"
IDLE_EXPIRY = timedelta(days=7)
ABSOLUTE_EXPIRY = timedelta(days=30)
#: Last-seen is written when it is at least this old, so a busy session writes seldom.
TOUCH_INTERVAL = timedelta(minutes=1)
INVITE_VALIDITY = timedelta(days=7)
#: Longer than any token we issue; a longer cookie is not looked up at all.
MAX_TOKEN_LENGTH = 128

_CSRF_CONTEXT = b"printjob csrf v1"


def hash_token(token: str) -> str:
    """The stored form of a session or invite token."""
    return hashlib.sha256(token.encode()).hexdigest()


def plausible_token(token: str | None) -> bool:
    """Whether a presented token is worth a lookup (present, printable, not huge)."""
    return bool(token) and token is not None and len(token) <= MAX_TOKEN_LENGTH and token.isascii()


def new_session(token_hash: str, person: Person, now: datetime) -> WebSession:
    return WebSession(
        token_hash=token_hash,
        person_id=person.id,
        account_id=person.account_id,
        created_at=now,
        last_seen_at=now,
        expires_at=now + ABSOLUTE_EXPIRY,
    )


def session_ends_at(session: WebSession) -> datetime:
    """When the session ends if it is not used again: idle or absolute, whichever first."""
    return min(session.last_seen_at + IDLE_EXPIRY, session.expires_at)


def is_live(session: WebSession, now: datetime) -> bool:
    return now < session_ends_at(session)


def needs_touch(session: WebSession, now: datetime) -> bool:
    return now - session.last_seen_at >= TOUCH_INTERVAL


def csrf_token_for(session_token: str) -> str:
    """The CSRF token of a signed-in page: an HMAC keyed by the session token.

    Nothing is stored: only someone holding the session cookie (which scripts cannot
    read) can compute it, and it reveals nothing of the cookie.
    """
    return hmac.new(session_token.encode(), _CSRF_CONTEXT, hashlib.sha256).hexdigest()


def csrf_valid(session_token: str, presented: str) -> bool:
    return hmac.compare_digest(csrf_token_for(session_token).encode(), presented.encode())


def new_invite(token_hash: str, account_id: str, email: str, now: datetime) -> Invite:
    return Invite(
        token_hash=token_hash,
        account_id=account_id,
        email=email,
        created_at=now,
        expires_at=now + INVITE_VALIDITY,
    )


def invite_usable(invite: Invite, now: datetime) -> bool:
    return invite.used_at is None and now < invite.expires_at


__all__ = [
    "ABSOLUTE_EXPIRY",
    "CSRF_COOKIE",
    "IDLE_EXPIRY",
    "INVITE_VALIDITY",
    "SESSION_COOKIE",
    "TOUCH_INTERVAL",
    "csrf_token_for",
    "csrf_valid",
    "hash_token",
    "invite_usable",
    "is_live",
    "needs_touch",
    "new_invite",
    "new_session",
    "plausible_token",
    "session_ends_at",
]
