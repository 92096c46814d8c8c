"""When and how long to wait before resending a request.

Every request is retried a bounded number of times (`max_retries`, 3 by default) when the
connection failed or timed out, on 408, on 429 `rate_limited`, and on 500, 502, 503 and 504.
A submission is safe to resend because it carries the same Idempotency-Key every time; a
read, a download and a cancel are safe by nature.

Not retried: every other 4xx, and 429 `too_many_active_jobs`. That one clears only when one
of the account's jobs finishes, which takes seconds to minutes, and every resend would count
against the per-minute submission limit; the caller decides (the `printjob remote` command
waits for a slot).

The wait is the server's `Retry-After` when it sent one (plus up to 0.25 s of jitter so that
many clients do not come back in the same instant); a `Retry-After` over `max_retry_after`
(60 s by default) is not waited out: the error is raised. Without `Retry-After` the wait is
exponential backoff with jitter: 0.5 s, 1 s, 2 s, ... capped at 8 s, each drawn between half
and the whole of that.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from printjob_client.errors import APIConnectionError, PrintjobError

__all__ = ["RetryPolicy"]

RETRY_STATUSES = frozenset({408, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to resend, and how long to wait in between."""

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, not {self.max_retries}")

    @staticmethod
    def retryable(error: PrintjobError) -> bool:
        """Whether resending the same request may succeed."""
        if isinstance(error, APIConnectionError):
            return True
        if error.status == 429:
            return error.code != "too_many_active_jobs"
        return error.status in RETRY_STATUSES

    def delay(self, error: PrintjobError, retries_done: int) -> float | None:
        """Seconds to wait before the next attempt, or None to give up and raise `error`."""
        if retries_done >= self.max_retries or not self.retryable(error):
            return None
        retry_after = error.retry_after
        if retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            return retry_after + random.uniform(0, 0.25)
        backoff = min(self.max_delay, self.initial_delay * 2**retries_done)
        return random.uniform(backoff / 2, backoff)
