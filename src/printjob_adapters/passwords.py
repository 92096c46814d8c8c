"""The `PasswordHasher` port over argon2id (argon2-cffi, with its default parameters:
RFC 9106's second recommended option, 64 MiB and 3 passes)."""

from __future__ import annotations

from argon2 import PasswordHasher as _Argon2
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


class Argon2PasswordHasher:
    """argon2id hashes in the PHC string format (`$argon2id$v=19$m=...`): the salt and the
    parameters travel inside the hash, so raising the parameters later needs no migration."""

    def __init__(self) -> None:
        self._argon2 = _Argon2()

    def hash(self, password: str) -> str:
        return self._argon2.hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        try:
            return self._argon2.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False


__all__ = ["Argon2PasswordHasher"]
