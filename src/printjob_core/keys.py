"""API keys (contract section 5): their shape, their hash, and the Bearer header.

Keys are random 43-character secrets, so a plain SHA-256 is a sound stored form: no
dictionary can reach them, and a lookup by hash needs no per-key salt. The comparison of
the stored hash is constant-time all the same.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from datetime import datetime, timedelta

from printjob_core.model import ApiKey

#: The fixed 5-character service prefix every key starts with (contract 5.2).
KEY_PREFIX = "pjk1_"
KEY_LENGTH = 43
KEY_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
MAX_LIVE_KEYS = 5
#: The longest label a key may have (it is shown in one row of the account page).
MAX_LABEL_LENGTH = 100
#: How many of a key's last characters are kept to show it (4 of 38 random ones).
LAST_CHARS = 4
#: A key's `last_used_at` is written when it is at least this old, so the API's reads
#: seldom write.
LAST_USED_INTERVAL = timedelta(minutes=1)

_KEY = re.compile(re.escape(KEY_PREFIX) + r"[0-9A-Za-z]{38}")
_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([!-~]+) *")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def same_hash(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def looks_like_key(candidate: str) -> bool:
    """Whether a string has a key's shape; anything else cannot be a key."""
    return _KEY.fullmatch(candidate) is not None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None if none was sent.

    A header that is present but not a Bearer credential gives "" (a key was sent, but
    not a usable one).
    """
    if authorization is None or authorization.strip() == "":
        return None
    match = _BEARER.fullmatch(authorization)
    return match.group(1) if match else ""


def key_hint(key: str) -> str:
    """What an operator sees of a key: the prefix and four characters."""
    return key[: len(KEY_PREFIX) + 4] + "…"


def new_key(key_id: str, account_id: str, secret: str, now: datetime, label: str = "") -> ApiKey:
    """The stored form of a new key: its hash and hint, never the secret."""
    return ApiKey(
        id=key_id,
        account_id=account_id,
        key_hash=hash_key(secret),
        hint=key_hint(secret),
        created_at=now,
        label=label,
        last_chars=secret[-LAST_CHARS:],
    )


def shown_hint(key: ApiKey) -> str:
    """What the account page shows of a key: the prefix and its last characters (the
    first characters for keys made before the last ones were kept)."""
    return f"{KEY_PREFIX}…{key.last_chars}" if key.last_chars else key.hint


def label_problem(label: str) -> str | None:
    """Why a key label is refused (it is one line of at most 100 characters), or None."""
    if len(label) > MAX_LABEL_LENGTH:
        return f"The label may be at most {MAX_LABEL_LENGTH} characters, not {len(label)}."
    if any(unicodedata.category(char).startswith("C") for char in label):
        return "The label must be one line of printable text."
    return None


def use_worth_noting(key: ApiKey, now: datetime) -> bool:
    """Whether an authentication at `now` should write the key's `last_used_at`."""
    return key.last_used_at is None or now - key.last_used_at >= LAST_USED_INTERVAL
