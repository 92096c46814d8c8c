"""The rate limiter on SQLite: exact shared counters per minute window, and the leases
that spare a database write per request while never allowing more than the limit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from printjob_adapters.rate_leases import MAX_LEASE, LeasedRateLimiter, lease_size
from printjob_adapters.sqlite import SqliteStorage, open_storage
from printjob_core.fakes import FakeRateLimiter

MINUTE = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    store = open_storage(tmp_path / "db.sqlite3")
    yield store
    store.close()


def test_counts_are_shared_between_storages_on_one_file(tmp_path: Path) -> None:
    one = open_storage(tmp_path / "db.sqlite3").rate_counter()
    two = open_storage(tmp_path / "db.sqlite3").rate_counter()
    assert one.hit("a", 2, MINUTE).allowed
    assert two.hit("a", 2, MINUTE).allowed
    assert not one.hit("a", 2, MINUTE).allowed
    assert two.count("a", MINUTE) == 3


def test_old_windows_are_deleted(storage: SqliteStorage) -> None:
    limiter = storage.rate_counter()
    limiter.hit("a", 5, MINUTE)
    limiter.hit("b", 5, MINUTE + timedelta(minutes=1))
    limiter.hit("c", 5, MINUTE + timedelta(minutes=2))
    rows = storage.database().execute("SELECT bucket FROM rate_counts ORDER BY bucket").fetchall()
    # the window before the current one is kept; older ones are gone
    assert [r[0] for r in rows] == ["b", "c"]


# -- leases --


class CountingCounter:
    """The real SQLite counter, with its additions counted (how often a lease writes)."""

    def __init__(self, storage: SqliteStorage) -> None:
        self.inner = storage.rate_counter()
        self.additions = 0

    def add(self, bucket: str, window_start: int, amount: int) -> int:
        self.additions += 1
        return self.inner.add(bucket, window_start, amount)

    def count(self, bucket: str, now: datetime) -> int:
        return self.inner.count(bucket, now)


def test_the_storage_limiter_is_leased(storage: SqliteStorage) -> None:
    assert isinstance(storage.rate_limiter(), LeasedRateLimiter)


@pytest.mark.parametrize(
    ("limit", "known", "size"),
    [(120, 0, 15), (120, 112, 1), (10, 0, 1), (10**6, 0, MAX_LEASE), (5, 9, 1)],
)
def test_a_lease_is_an_eighth_of_what_is_left(limit: int, known: int, size: int) -> None:
    assert lease_size(limit, known) == size


@settings(max_examples=40, deadline=None)
@given(
    limit=st.sampled_from([1, 3, 10, 30, 120, 1000]),
    steps=st.lists(st.tuples(st.integers(0, 2), st.floats(0, 25)), min_size=1, max_size=300),
)
def test_one_process_decides_exactly_like_the_fake(
    tmp_path_factory: pytest.TempPathFactory, limit: int, steps: list[tuple[int, float]]
) -> None:
    """Leases change how often the database is written, never a decision of one process."""
    store = open_storage(tmp_path_factory.mktemp("leases") / "db.sqlite3")
    real, fake = store.rate_limiter(), FakeRateLimiter()
    moment = MINUTE
    try:
        for bucket, seconds in steps:
            moment += timedelta(seconds=seconds)
            assert real.hit(f"b{bucket}", limit, moment) == fake.hit(f"b{bucket}", limit, moment)
    finally:
        store.close()


def test_leases_write_once_per_block_and_not_at_all_once_spent(storage: SqliteStorage) -> None:
    counter = CountingCounter(storage)
    limiter = LeasedRateLimiter(counter)
    now = MINUTE + timedelta(seconds=1)
    assert all(limiter.hit("reads:a", 10**6, now).allowed for _ in range(3200))
    assert counter.additions == 100  # blocks of MAX_LEASE (32)
    assert counter.count("reads:a", now) == 3200
    # A limit of 120: blocks shrink to 1 near the end, then the spent window is remembered.
    decisions = [limiter.hit("reads:b", 120, now).allowed for _ in range(300)]
    assert decisions == [True] * 120 + [False] * 180
    writes = counter.additions
    assert not limiter.hit("reads:b", 120, now + timedelta(seconds=30)).allowed
    assert counter.additions == writes
    # The next minute starts afresh.
    assert limiter.hit("reads:b", 120, now + timedelta(seconds=60)).allowed


def test_two_processes_never_allow_more_than_the_limit_and_use_it_all(tmp_path: Path) -> None:
    """Two storages on one file stand for two API processes behind a load balancer."""
    one = open_storage(tmp_path / "db.sqlite3")
    two = open_storage(tmp_path / "db.sqlite3")
    try:
        first, second = one.rate_limiter(), two.rate_limiter()
        now = MINUTE + timedelta(seconds=5)
        allowed = sum(
            limiter.hit("reads:a", 120, now).allowed
            for _ in range(200)
            for limiter in (first, second)
        )
        assert allowed == 120
        # One process leases a block and goes quiet: the other gets the rest, and what the
        # first leased stays usable by it, so the minute's total is still the limit.
        assert first.hit("reads:b", 120, now).allowed
        alone = sum(second.hit("reads:b", 120, now).allowed for _ in range(200))
        assert alone == 120 - lease_size(120, 0)
        later = sum(first.hit("reads:b", 120, now).allowed for _ in range(200))
        assert 1 + alone + later == 120
    finally:
        one.close()
        two.close()


def test_threads_of_one_process_share_its_leases_exactly(storage: SqliteStorage) -> None:
    limiter = storage.rate_limiter()
    now = MINUTE + timedelta(seconds=3)
    results: list[bool] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [limiter.hit("reads:a", 500, now).allowed for _ in range(250)]
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(results) == 500
    assert storage.rate_counter().count("reads:a", now) >= 500
