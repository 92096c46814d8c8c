"""Per-minute limits that do not write to the database on every request.

The limits of contract section 8 are shared by every process (a client may reach any API
process behind a load balancer), so they are counted in the database. Writing a counter
for every authenticated read, though, made that write the largest cost of a poll and put
every poll behind the database's write lock.

`LeasedRateLimiter` takes *leases* instead: when a process has no allowance left for a
bucket in the current window, it adds a block of `n` to the shared counter in one write
and then allows up to `n` requests from memory. The grant is what the counter had left
below the limit, so across all processes at most `limit` requests are ever allowed in a
window. The block shrinks as the window fills (`lease_size`): an eighth of what was left
at the last lease, at most `MAX_LEASE`, and 1 near the limit, so the last requests of a
window are counted one by one and a client that reaches every process evenly gets its
whole allowance. What one process leased and did not use is lost to the others for the
rest of that minute (at most what its last lease granted); a single process is exact.
Once a window is spent, refusals are answered from memory until the next minute.

Cost: one counter write per lease instead of per request; no database access at all
while a lease lasts or after the window is spent.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Protocol

import attrs

from printjob_core.ports import RateDecision

#: Largest block one lease takes from the shared counter.
MAX_LEASE = 32
#: A lease takes this share (1/LEASE_DIVISOR) of what the window had left.
LEASE_DIVISOR = 8


class SharedCounter(Protocol):
    """The database counter under the leases (`SqliteRateLimiter`, `PostgresRateLimiter`)."""

    def add(self, bucket: str, window_start: int, amount: int) -> int:
        """Add `amount` to the bucket's counter for the window; returns the new total."""
        ...

    def count(self, bucket: str, now: datetime) -> int:
        """The bucket's total (requests counted plus allowances leased) this window."""
        ...


def minute_window(now: datetime) -> tuple[int, int]:
    """The fixed window `now` falls in: its start (Unix seconds, minute-aligned) and the
    seconds until it ends (at least 1, the `Retry-After` of a refusal)."""
    seconds = int(now.timestamp())
    start = seconds - seconds % 60
    return start, max(1, start + 60 - seconds)


def lease_size(limit: int, known_total: int) -> int:
    """How much one lease asks for: an eighth of what is left, between 1 and MAX_LEASE."""
    return max(1, min(MAX_LEASE, (limit - known_total) // LEASE_DIVISOR))


@attrs.define
class _Allowance:
    """What this process knows of one bucket in one window."""

    window_start: int
    #: Requests this process may still allow without asking the counter.
    spare: int = 0
    #: The shared total at this process's last lease.
    known_total: int = 0
    #: The window is spent: refuse without asking the counter.
    spent: bool = False


class LeasedRateLimiter:
    """The `RateLimiter` port over a shared database counter, leased in blocks."""

    def __init__(self, counter: SharedCounter) -> None:
        self._counter = counter
        self._allowances: dict[str, _Allowance] = {}
        self._current_window = 0
        # Guards the dictionary only, never a database call: a thread that waits for the
        # database must not hold up the event loop's requests.
        self._lock = threading.Lock()

    def hit(self, bucket: str, limit: int, now: datetime) -> RateDecision:
        start, retry_after = minute_window(now)
        with self._lock:
            allowance = self._allowance(bucket, start)
            if allowance.spare > 0:
                allowance.spare -= 1
                return RateDecision(allowed=True, retry_after=retry_after)
            if allowance.spent or limit <= 0:
                return RateDecision(allowed=False, retry_after=retry_after)
            wanted = lease_size(limit, allowance.known_total)
        total = self._counter.add(bucket, start, wanted)
        granted = max(0, min(wanted, limit - (total - wanted)))
        with self._lock:
            allowance = self._allowance(bucket, start)
            allowance.known_total = max(allowance.known_total, total)
            if granted == 0:
                allowance.spent = True
                return RateDecision(allowed=False, retry_after=retry_after)
            allowance.spare += granted - 1
            return RateDecision(allowed=True, retry_after=retry_after)

    def _allowance(self, bucket: str, start: int) -> _Allowance:
        """The bucket's allowance for window `start`; older windows are forgotten."""
        if start > self._current_window:
            self._allowances = {
                name: kept for name, kept in self._allowances.items() if kept.window_start >= start
            }
            self._current_window = start
        allowance = self._allowances.get(bucket)
        if allowance is None or allowance.window_start != start:
            allowance = _Allowance(window_start=start)
            if start >= self._current_window:
                self._allowances[bucket] = allowance
        return allowance

    def count(self, bucket: str, now: datetime) -> int:
        """The shared total this window: requests counted plus allowances leased."""
        return self._counter.count(bucket, now)


__all__ = ["LEASE_DIVISOR", "MAX_LEASE", "LeasedRateLimiter", "SharedCounter", "lease_size"]
