"""The `PasswordHasher` port over argon2id (argon2-cffi, with its default parameters:
RFC 9106's second recommended option, 64 MiB and 3 passes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from argon2 import PasswordHasher as _Argon2


class Argon2PasswordHasher:
    """argon2id hashes in the PHC string format (`$argon2id$v=19$m=...`): the salt and the
    parameters travel inside the hash, so raising the parameters later needs no migration.

    argon2 is imported on first use: the operator's commands, which wire the website but
    never hash, start without it."""

    def __init__(self) -> None:
        self._hasher: _Argon2 | None = None

    def _argon2(self) -> _Argon2:
        if self._hasher is None:
            from argon2 import PasswordHasher

            self._hasher = PasswordHasher()
        return self._hasher

    def hash(self, password: str) -> str:
        return self._argon2().hash(password)

    def verify(self, password_hash: str, password: str) -> bool:
        from argon2.exceptions import InvalidHashError, VerificationError

        try:
            return self._argon2().verify(password_hash, password)
        except (VerificationError, InvalidHashError):
            # VerifyMismatchError (a wrong password) is a VerificationError.
            return False


__all__ = ["Argon2PasswordHasher"]
