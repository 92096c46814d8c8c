"""The SQLite rate limiter: fixed minute windows shared by every process."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from printjob_adapters.sqlite import SqliteStorage, open_storage
from printjob_core.fakes import FakeRateLimiter

MINUTE = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    store = open_storage(tmp_path / "db.sqlite3")
    yield store
    store.close()


def test_allows_up_to_the_limit_then_refuses(storage: SqliteStorage) -> None:
    limiter = storage.rate_limiter()
    now = MINUTE + timedelta(seconds=15)
    decisions = [limiter.hit("submit:a", 3, now) for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert all(d.retry_after == 45 for d in decisions)
    assert limiter.count("submit:a", now) == 5
    assert limiter.count("submit:b", now) == 0


def test_buckets_are_separate(storage: SqliteStorage) -> None:
    limiter = storage.rate_limiter()
    assert limiter.hit("a", 1, MINUTE).allowed
    assert limiter.hit("b", 1, MINUTE).allowed
    assert not limiter.hit("a", 1, MINUTE).allowed


def test_a_new_minute_starts_a_new_window(storage: SqliteStorage) -> None:
    limiter = storage.rate_limiter()
    for _ in range(2):
        limiter.hit("a", 1, MINUTE + timedelta(seconds=59))
    assert not limiter.hit("a", 1, MINUTE + timedelta(seconds=59, microseconds=999_999)).allowed
    fresh = limiter.hit("a", 1, MINUTE + timedelta(seconds=60))
    assert fresh.allowed and fresh.retry_after == 60
    assert limiter.count("a", MINUTE + timedelta(seconds=61)) == 1


def test_retry_after_is_at_least_one_second(storage: SqliteStorage) -> None:
    limiter = storage.rate_limiter()
    decision = limiter.hit("a", 5, MINUTE + timedelta(seconds=59, microseconds=900_000))
    assert decision.retry_after == 1


def test_counts_are_shared_between_storages_on_one_file(tmp_path: Path) -> None:
    one = open_storage(tmp_path / "db.sqlite3").rate_limiter()
    two = open_storage(tmp_path / "db.sqlite3").rate_limiter()
    assert one.hit("a", 2, MINUTE).allowed
    assert two.hit("a", 2, MINUTE).allowed
    assert not one.hit("a", 2, MINUTE).allowed
    assert two.count("a", MINUTE) == 3


def test_old_windows_are_deleted(storage: SqliteStorage) -> None:
    limiter = storage.rate_limiter()
    limiter.hit("a", 5, MINUTE)
    limiter.hit("b", 5, MINUTE + timedelta(minutes=1))
    limiter.hit("c", 5, MINUTE + timedelta(minutes=2))
    rows = storage.database().execute("SELECT bucket FROM rate_counts ORDER BY bucket").fetchall()
    # the window before the current one is kept; older ones are gone
    assert [r[0] for r in rows] == ["b", "c"]


def test_behaves_exactly_like_the_fake(storage: SqliteStorage) -> None:
    real, fake = storage.rate_limiter(), FakeRateLimiter()
    moment = MINUTE - timedelta(seconds=7, microseconds=250_000)
    for step in range(200):
        moment += timedelta(seconds=(step * 7) % 11 + 0.37)
        bucket = f"b{step % 3}"
        assert real.hit(bucket, 4, moment) == fake.hit(bucket, 4, moment), step
        assert real.count(bucket, moment) == fake.count(bucket, moment)
