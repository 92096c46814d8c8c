"""API keys (contract section 5): their shape, their hash, and the Bearer header.

Keys are random 43-character secrets, so a plain SHA-256 is a sound stored form: no
dictionary can reach them, and a lookup by hash needs no per-key salt. The comparison of
the stored hash is constant-time all the same.
"""

from __future__ import annotations

import hashlib
import hmac
import re

#: The fixed 5-character service prefix every key starts with (contract 5.2).
KEY_PREFIX = "pjk1_"
KEY_LENGTH = 43
KEY_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
MAX_LIVE_KEYS = 5

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
