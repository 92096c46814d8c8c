"""The clock and the id source of the real world: UTC time and `secrets`-made identifiers."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from printjob_core.keys import KEY_ALPHABET, KEY_LENGTH, KEY_PREFIX


class SystemClock:
    """The `Clock` port: the system's time, timezone-aware UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class RandomIds:
    """The `IdSource` port: unguessable identifiers and secrets from `secrets`.

    Job ids carry 128 random bits, account ids 96, key ids 64; an API key carries 38
    characters of a 62-letter alphabet (about 226 bits) after the fixed prefix.
    """

    def job_id(self) -> str:
        return "job_" + secrets.token_hex(16)

    def account_id(self) -> str:
        return "acct_" + secrets.token_hex(12)

    def key_id(self) -> str:
        return "key_" + secrets.token_hex(8)

    def api_key(self) -> str:
        body = "".join(secrets.choice(KEY_ALPHABET) for _ in range(KEY_LENGTH - len(KEY_PREFIX)))
        return KEY_PREFIX + body

    def person_id(self) -> str:
        return "person_" + secrets.token_hex(12)

    def secret_token(self) -> str:
        return secrets.token_urlsafe(32)


__all__ = ["RandomIds", "SystemClock"]
