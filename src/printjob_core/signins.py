"""The sign-in limit: failed sign-ins are counted per client network and per email over a
sliding 15 minutes. Over either limit every attempt is refused, a correct password too,
so guessing cannot go on; the wait is until enough failures have aged out.

The sign-up limit: accounts made by sign-up are counted per client network over a sliding
day, in the same store (its own bucket), so that one visitor cannot collect free daily
quotas by signing up again and again."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from printjob_core.errors import SignInThrottled, SignUpThrottled
from printjob_core.limits import client_network

SIGN_IN_WINDOW = timedelta(minutes=15)
FAILURES_PER_ADDRESS = 10
FAILURES_PER_EMAIL = 5
SIGN_UP_WINDOW = timedelta(hours=24)
#: Enough for a household or a small office behind one address; more come by invite.
SIGN_UPS_PER_ADDRESS = 5
#: What the store keeps: the longest of the windows above.
KEPT_FOR = max(SIGN_IN_WINDOW, SIGN_UP_WINDOW)


def address_bucket(client_address: str) -> str:
    """Counted per network like wrong API keys (an IPv6 client per /64)."""
    return f"signin-address:{client_network(client_address)}"


def email_bucket(email: str) -> str:
    """Counted for any email tried, known or not, so the limit tells nobody who exists."""
    return f"signin-email:{email}"


def sign_up_bucket(client_address: str) -> str:
    """Sign-ups counted per network, like failed sign-ins."""
    return f"signup-address:{client_network(client_address)}"


def seconds_to_wait(
    failures: Sequence[datetime], limit: int, now: datetime, window: timedelta = SIGN_IN_WINDOW
) -> int | None:
    """Seconds until fewer than `limit` of `failures` (oldest first, all within `window`)
    remain in the window; None when fewer than `limit` are there now."""
    if len(failures) < limit:
        return None
    frees_at = failures[len(failures) - limit] + window
    return max(1, math.ceil((frees_at - now).total_seconds()))


def _in_words(wait: int) -> str:
    if wait > 90 * 60:
        hours = math.ceil(wait / 3600)
        return f"{hours} hour{'s' if hours != 1 else ''}"
    minutes = math.ceil(wait / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def sign_ups_throttled(wait: int) -> SignUpThrottled:
    return SignUpThrottled(
        f"Too many accounts were made from your network today. Try again in {_in_words(wait)}, "
        "or ask the operator for an invite.",
        retry_after=wait,
    )


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
    "KEPT_FOR",
    "SIGN_IN_WINDOW",
    "SIGN_UPS_PER_ADDRESS",
    "SIGN_UP_WINDOW",
    "address_bucket",
    "email_bucket",
    "seconds_to_wait",
    "sign_up_bucket",
    "sign_ups_throttled",
    "throttled",
]
