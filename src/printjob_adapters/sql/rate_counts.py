"""The shared per-minute counters' statements, written once, and the exact `hit` on them.

Windows are fixed and aligned to the minute (`rate_leases.minute_window`), exactly like
`FakeRateLimiter`. An addition is one autocommit UPSERT, atomic on its own, so it needs
no BEGIN/COMMIT round trips; windows older than the previous minute are deleted once per
minute per process. Each database's counter (`SqliteRateLimiter`, `PostgresRateLimiter`)
brings its connections and how it waits; `LeasedRateLimiter` leases blocks of it.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from printjob_adapters.rate_leases import minute_window
from printjob_adapters.sql.dialect import Dialect
from printjob_core.ports import RateDecision


@attrs.frozen
class RateCountSql:
    """The counter's three statements in one dialect."""

    #: Parameters (bucket, window_start, amount, amount); one row: the new count.
    add: str
    #: Parameter (oldest window_start kept).
    sweep: str
    #: Parameters (bucket, window_start); one row when the window has a count.
    count: str

    @classmethod
    def for_dialect(cls, dialect: Dialect) -> RateCountSql:
        return cls(
            add=dialect.sql(
                "INSERT INTO rate_counts (bucket, window_start, count) VALUES (?, ?, ?) "
                "ON CONFLICT (bucket, window_start) "
                "DO UPDATE SET count = rate_counts.count + ? RETURNING count"
            ),
            sweep=dialect.sql("DELETE FROM rate_counts WHERE window_start < ?"),
            count=dialect.sql(
                "SELECT count FROM rate_counts WHERE bucket = ? AND window_start = ?"
            ),
        )


class ExactHits:
    """`RateLimiter.hit` over a shared counter's `add`: one counted request per call."""

    def add(self, bucket: str, window_start: int, amount: int) -> int:
        raise NotImplementedError

    def hit(self, bucket: str, limit: int, now: datetime) -> RateDecision:
        """Count one request (exactly; no lease)."""
        start, retry_after = minute_window(now)
        count = self.add(bucket, start, 1)
        return RateDecision(allowed=count <= limit, retry_after=retry_after)


#: Windows before the previous minute are deleted: the previous one may still be asked.
def oldest_kept(window_start: int) -> int:
    return window_start - 60


__all__ = ["ExactHits", "RateCountSql", "oldest_kept"]
