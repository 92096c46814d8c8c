"""The website's download quota: a free account downloads at most 5 distinct results per
UTC day; a monthly account has no cap. Downloading the same result again does not count.
The day starts again at UTC midnight."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time, timedelta

import attrs

from printjob_core.errors import QuotaExhausted
from printjob_core.model import Plan

FREE_DOWNLOADS_PER_DAY = 5

#: Downloads per UTC day by plan; None is no cap.
DAILY_DOWNLOADS: dict[Plan, int | None] = {
    Plan.FREE: FREE_DOWNLOADS_PER_DAY,
    Plan.MONTHLY: None,
}


@attrs.frozen
class QuotaView:
    """Today's downloads: how many were used, the cap (None: unlimited) and when the day
    starts again."""

    used: int
    limit: int | None
    resets_at: datetime

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(self.limit - self.used, 0)

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.used >= self.limit


def quota_day(now: datetime) -> date:
    """The UTC day `now` counts against."""
    return now.astimezone(UTC).date()


def next_reset(now: datetime) -> datetime:
    """The next UTC midnight after `now`."""
    return datetime.combine(quota_day(now) + timedelta(days=1), time(), tzinfo=UTC)


def quota_view(plan: Plan, used: int, now: datetime) -> QuotaView:
    return QuotaView(used=used, limit=DAILY_DOWNLOADS[plan], resets_at=next_reset(now))


def quota_exhausted(view: QuotaView, now: datetime) -> QuotaExhausted:
    """The refusal of one more download today: when it resets and what has no cap."""
    wait = max(1, math.ceil((view.resets_at - now).total_seconds()))
    hours, rest = divmod(wait, 3600)
    minutes = max(1, math.ceil(rest / 60)) if hours == 0 else rest // 60
    in_words = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return QuotaExhausted(
        f"You have used all {view.limit} downloads of the free plan for today. The quota "
        f"resets at midnight UTC ({view.resets_at:%Y-%m-%d %H:%M} UTC, in {in_words}). "
        "The monthly plan has no daily cap.",
        resets_at=view.resets_at,
        retry_after=wait,
    )


__all__ = [
    "DAILY_DOWNLOADS",
    "FREE_DOWNLOADS_PER_DAY",
    "QuotaView",
    "next_reset",
    "quota_day",
    "quota_exhausted",
    "quota_view",
]
