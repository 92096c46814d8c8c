"""The password policy and the shape of a sign-in email.

Length is what makes a password strong, so the rules are few (NIST SP 800-63B): 10 to
256 characters, not one character repeated, not the email itself; no composition rules.
The hash is the `PasswordHasher` port's (argon2id).
"""

from __future__ import annotations

import re
import unicodedata

from printjob_core.errors import InvalidParameter, PasswordRejected

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 256
#: RFC 5321's limit on a forward path.
MAX_EMAIL_LENGTH = 254
#: One `@`, something before it, a dotted domain after it, no spaces: a shape check that
#: catches typing mistakes, not a proof that the mailbox exists.
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+")


def password_problem(password: str, email: str) -> str | None:
    """Why `password` is refused for the person with `email`, or None when it is fine."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"The password must be at least {MIN_PASSWORD_LENGTH} characters long."
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"The password may be at most {MAX_PASSWORD_LENGTH} characters long."
    if len(set(password)) == 1:
        return "The password must not be one character repeated."
    if password.strip().lower() == email.strip().lower():
        return "The password must not be your email address."
    return None


def check_password(password: str, email: str) -> None:
    problem = password_problem(password, email)
    if problem is not None:
        raise PasswordRejected(problem)


def normalise_email(email: str) -> str:
    """The stored form of an email: trimmed and lower-cased (no shape check)."""
    return email.strip().lower()


def clean_email(email: str) -> str:
    """A sign-up email as kept: normalised, of the shape `name@domain.tld`; else 400."""
    address = normalise_email(email)
    if not address:
        raise InvalidParameter("Enter your email address.", param="email")
    if len(address) > MAX_EMAIL_LENGTH:
        raise InvalidParameter(
            f"The email address may be at most {MAX_EMAIL_LENGTH} characters.", param="email"
        )
    if not _EMAIL.fullmatch(address) or any(
        unicodedata.category(char).startswith("C") for char in address
    ):
        raise InvalidParameter(
            "Enter an email address of the form name@example.com.", param="email"
        )
    return address


__all__ = [
    "MAX_EMAIL_LENGTH",
    "MAX_PASSWORD_LENGTH",
    "MIN_PASSWORD_LENGTH",
    "check_password",
    "clean_email",
    "normalise_email",
    "password_problem",
]
