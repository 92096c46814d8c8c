"""The sign-in limit: failed sign-ins are counted per client network and per email over a
sliding 15 minutes. Over either limit every attempt is refused, a correct password too,
so guessing cannot go on; the wait is until enough failures have aged out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from printjob_core.errors import SignInThrottled
from printjob_core.limits import client_network

SIGN_IN_WINDOW = timedelta(minutes=15)
FAILURES_PER_ADDRESS = 10
FAILURES_PER_EMAIL = 5


def address_bucket(client_address: str) -> str:
    """Counted per network like wrong API keys (an IPv6 client per /64)."""
    return f"signin-address:{client_network(client_address)}"


def email_bucket(email: str) -> str:
    """Counted for any email tried, known or not, so the limit tells nobody who exists."""
    return f"signin-email:{email}"


def seconds_to_wait(failures: Sequence[datetime], limit: int, now: datetime) -> int | None:
    """Seconds until fewer than `limit` of `failures` (oldest first, all within the window)
    remain in the window; None when fewer than `limit` are there now."""
    if len(failures) < limit:
        return None
    frees_at = failures[len(failures) - limit] + SIGN_IN_WINDOW
    return max(1, math.ceil((frees_at - now).total_seconds()))


def throttled(wait: int) -> SignInThrottled:
    minutes = math.ceil(wait / 60)
    when = f"{minutes} minute{'s' if minutes != 1 else ''}"
    return SignInThrottled(
        f"Too many failed sign-ins. For your account's safety, try again in {when}.",
        retry_after=wait,
    )


__all__ = [
    "FAILURES_PER_ADDRESS",
    "FAILURES_PER_EMAIL",
    "SIGN_IN_WINDOW",
    "address_bucket",
    "email_bucket",
    "seconds_to_wait",
    "throttled",
]
