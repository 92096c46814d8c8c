"""The SQLite storage on real database files: repositories, transactions, locking."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from printjob_adapters.blobs import FilesystemBlobStore
from printjob_adapters.sqlite import (
    BUSY_RETRY_AFTER,
    SCHEMA_VERSION,
    SchemaError,
    SqliteStorage,
    format_time,
    open_storage,
    parse_time,
)
from printjob_core.errors import ServerBusy
from printjob_core.fakes import FakeClock, FakeIds, FakeImageProbe, fake_image
from printjob_core.limits import Policy
from printjob_core.model import (
    Account,
    ApiKey,
    Background,
    ConversionOutput,
    IdempotencyRecord,
    Job,
    JobError,
    JobErrorCode,
    JobOptions,
    JobResult,
    JobStatus,
    OutputFormat,
    Phase,
    Size,
)
from printjob_core.ports import JobByKey
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports
from printjob_core.views import UnitOfWorkViews

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    store = open_storage(tmp_path / "printjob.sqlite3")
    yield store
    store.close()


def account(n: int = 1, **changes: Any) -> Account:
    return attrs.evolve(Account(id=f"acct_{n:024x}", created_at=T0, credits_balance=10), **changes)


def job(n: int, account_id: str | None = None, **changes: Any) -> Job:
    base = Job(
        id=f"job_{n:032x}",
        account_id=account_id or account().id,
        status=JobStatus.QUEUED,
        phase=Phase.QUEUED,
        progress=0,
        created_at=T0 + timedelta(seconds=n),
        finished_at=None,
        options=JobOptions(format=OutputFormat.SVG),
        image_key=f"uploads/job_{n:032x}",
    )
    return attrs.evolve(base, **changes)


def add_account(storage: SqliteStorage, acct: Account | None = None) -> Account:
    acct = acct or account()
    with storage.unit_of_work() as uow:
        uow.accounts.add(acct)
        uow.commit()
    return acct


def balance(storage: SqliteStorage, account_id: str | None = None) -> int:
    with storage.reader() as uow:
        found = uow.accounts.get(account_id or account().id)
    assert found is not None
    return found.credits_balance


# -- schema and connection settings --


def test_schema_is_versioned_and_migrate_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    first = open_storage(path)
    assert first.schema_version() == SCHEMA_VERSION >= 1
    add_account(first)
    assert first.migrate() == SCHEMA_VERSION
    first.close()
    second = open_storage(path)
    assert balance(second) == 10
    db = second.database()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    second.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    open_storage(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaError, match="upgrade printjob"):
        open_storage(path)


def test_database_files_are_private(tmp_path: Path) -> None:
    store = open_storage(tmp_path / "db.sqlite3")
    add_account(store)
    for name in ("db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600, name
    store.close()


# -- times --


def test_times_are_fixed_width_utc_text_read_back_aware() -> None:
    later = datetime(2026, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=2)))  # 11:00 UTC
    assert format_time(T0) == "2026-03-01T12:00:00.123456Z"
    assert format_time(later) == "2026-03-01T11:00:00.000000Z"
    assert parse_time(format_time(later)) == later
    assert parse_time(format_time(T0)).tzinfo is UTC
    with pytest.raises(ValueError, match="naive"):
        format_time(datetime(2026, 1, 1))


@settings(max_examples=200, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(9000, 1, 1),
        timezones=st.just(UTC),
    ),
    st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(9000, 1, 1),
        timezones=st.just(UTC),
    ),
)
def test_text_order_is_time_order(a: datetime, b: datetime) -> None:
    assert (format_time(a) < format_time(b)) == (a < b)
    assert parse_time(format_time(a)) == a


# -- accounts --


def test_accounts_add_get_save(storage: SqliteStorage) -> None:
    acct = add_account(storage, account(active_jobs_max=5))
    with storage.unit_of_work() as uow:
        assert uow.accounts.get(acct.id) == acct
        assert uow.accounts.get("acct_missing") is None
        changed = attrs.evolve(acct, credits_balance=7, credits_held=2, disabled=True)
        uow.accounts.save(changed)
        uow.commit()
    with storage.reader() as uow:
        assert uow.accounts.get(acct.id) == changed


def test_held_credits_can_never_go_negative(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow, pytest.raises(sqlite3.IntegrityError):
        uow.accounts.save(attrs.evolve(acct, credits_held=-1))


# -- keys --


def api_key(n: int, account_id: str, minute: int = 0) -> ApiKey:
    return ApiKey(
        id=f"key_{n:016x}",
        account_id=account_id,
        key_hash=f"{n:064x}",
        hint="pjk1_abcd…",
        created_at=T0 + timedelta(minutes=minute),
    )


def test_views_read_key_account_and_job_in_one_go(storage: SqliteStorage) -> None:
    """The storage's one-statement views answer exactly what the generic views (one
    reader unit of work, repository by repository) answer, in every case."""
    mine = add_account(storage, account(1, credits_held=2))
    theirs = add_account(storage, account(2))
    running = job(1, mine.id, status=JobStatus.RUNNING, lease_expires_at=T0)
    finished = job(
        2,
        mine.id,
        status=JobStatus.SUCCEEDED,
        finished_at=T0,
        credits_charged=1,
        result=JobResult(OutputFormat.SVG, 10, 20, 30, 4, True, T0 + timedelta(days=1)),
        result_key="results/job_2-1.svg",
    )
    queued, other = job(3, mine.id), job(4, theirs.id)
    revoked = attrs.evolve(api_key(2, mine.id), revoked_at=T0)
    with storage.unit_of_work() as uow:
        for item in (running, finished, queued, other):
            uow.jobs.add(item)
        for key in (api_key(1, mine.id), revoked, api_key(3, theirs.id)):
            uow.keys.add(key)
        uow.commit()
    fast, generic = storage.views(), UnitOfWorkViews(storage.reader)
    hashes = [api_key(n, "").key_hash for n in (1, 2, 3, 9)]
    job_ids = [running.id, finished.id, queued.id, other.id, "job_" + "f" * 32, "../x", "'"]
    for key_hash in hashes:
        assert fast.account_by_key(key_hash) == generic.account_by_key(key_hash)
        for job_id in job_ids:
            assert fast.job_by_key(key_hash, job_id) == generic.job_by_key(key_hash, job_id)
    seen = fast.job_by_key(hashes[0], finished.id)
    assert seen is not None and seen.job == finished and seen.account == mine
    assert fast.job_by_key(hashes[0], other.id) == JobByKey(api_key(1, mine.id), mine, None)
    by_revoked = fast.account_by_key(hashes[1])
    assert by_revoked is not None and by_revoked.key == revoked
    assert by_revoked.active_jobs == 2
    assert fast.account_by_key(hashes[3]) is None
    assert fast.job_by_key(hashes[3], running.id) is None


def test_keys_by_id_by_hash_listed_oldest_first_and_revoked(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    other = add_account(storage, account(2))
    keys = [api_key(3, acct.id, minute=2), api_key(1, acct.id), api_key(2, other.id)]
    with storage.unit_of_work() as uow:
        for key in keys:
            uow.keys.add(key)
        uow.commit()
    with storage.unit_of_work() as uow:
        assert uow.keys.get(keys[0].id) == keys[0]
        assert uow.keys.get("key_missing") is None
        assert uow.keys.find_by_hash(keys[1].key_hash) == keys[1]
        assert uow.keys.find_by_hash("0" * 64 + "x") is None
        assert [k.id for k in uow.keys.list_for(acct.id)] == [keys[1].id, keys[0].id]
        assert uow.keys.list_for("acct_none") == []
        revoked = attrs.evolve(keys[1], revoked_at=T0 + timedelta(hours=1))
        uow.keys.save(revoked)
        uow.commit()
    with storage.reader() as uow:
        found = uow.keys.find_by_hash(keys[1].key_hash)
        assert found == revoked
        assert found is not None and not found.is_live


def test_a_key_hash_is_unique(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.keys.add(api_key(1, acct.id))
        with pytest.raises(sqlite3.IntegrityError):
            uow.keys.add(attrs.evolve(api_key(1, acct.id), id="key_other"))


def test_a_key_needs_an_existing_account(storage: SqliteStorage) -> None:
    with storage.unit_of_work() as uow, pytest.raises(sqlite3.IntegrityError):
        uow.keys.add(api_key(1, "acct_nobody"))


# -- jobs --


def test_a_job_round_trips_with_every_field(storage: SqliteStorage) -> None:
    add_account(storage)
    succeeded = job(
        1,
        status=JobStatus.SUCCEEDED,
        phase=Phase.FINISHING,
        progress=100,
        finished_at=T0 + timedelta(minutes=1),
        options=JobOptions(
            format=OutputFormat.PDF,
            size=Size(1000, 500),
            colors=4,
            background=Background.REMOVE,
            dpi=600,
        ),
        credits_charged=1,
        result=JobResult(
            format=OutputFormat.PDF,
            width=1000,
            height=500,
            bytes=1234,
            colors=4,
            background_removed=True,
            expires_at=T0 + timedelta(days=1),
        ),
        attempts=2,
        image_key=None,
        result_key="results/x.pdf",
        lease_expires_at=T0 + timedelta(seconds=90),
    )
    failed = job(
        2,
        status=JobStatus.FAILED,
        phase=None,
        progress=None,
        finished_at=T0,
        error=JobError(JobErrorCode.INTERRUPTED, "stopped"),
    )
    with storage.unit_of_work() as uow:
        uow.jobs.add(succeeded)
        uow.jobs.add(failed)
        uow.commit()
    with storage.reader() as uow:
        assert uow.jobs.get(succeeded.id) == succeeded
        assert uow.jobs.get(failed.id) == failed
        assert uow.jobs.get("job_" + "0" * 32) is None


def test_save_updates_a_job(storage: SqliteStorage) -> None:
    add_account(storage)
    queued = job(1)
    with storage.unit_of_work() as uow:
        uow.jobs.add(queued)
        running = attrs.evolve(
            queued,
            status=JobStatus.RUNNING,
            phase=Phase.BUILDING,
            progress=40,
            attempts=1,
            lease_expires_at=T0,
        )
        uow.jobs.save(running)
        uow.commit()
    with storage.reader() as uow:
        assert uow.jobs.get(queued.id) == running
    with storage.unit_of_work() as uow, pytest.raises(KeyError):
        uow.jobs.save(job(99))


def test_unfinished_and_queued_counts(storage: SqliteStorage) -> None:
    a = add_account(storage)
    b = add_account(storage, account(2))
    jobs = [
        job(1, a.id),
        job(2, a.id, status=JobStatus.RUNNING),
        job(3, a.id, status=JobStatus.SUCCEEDED),
        job(4, a.id, status=JobStatus.CANCELED),
        job(5, b.id),
        job(6, b.id, status=JobStatus.FAILED),
    ]
    with storage.unit_of_work() as uow:
        for j in jobs:
            uow.jobs.add(j)
        uow.commit()
    with storage.reader() as uow:
        assert [j.id for j in uow.jobs.unfinished_for(a.id)] == [jobs[0].id, jobs[1].id]
        assert uow.jobs.count_unfinished(a.id) == 2
        assert uow.jobs.count_unfinished(b.id) == 1
        assert uow.jobs.count_unfinished("acct_none") == 0
        assert uow.jobs.count_queued() == 2


def test_next_queued_is_the_oldest_by_insertion(storage: SqliteStorage) -> None:
    add_account(storage)
    # Created-at order deliberately differs from insertion order: FIFO is by insertion.
    first = job(5)
    second = job(1)
    third = job(3)
    with storage.unit_of_work() as uow:
        assert uow.jobs.next_queued() is None
        for j in (first, second, third):
            uow.jobs.add(j)
        uow.commit()
    taken = []
    for _ in range(3):
        with storage.unit_of_work() as uow:
            nxt = uow.jobs.next_queued()
            assert nxt is not None
            uow.jobs.save(attrs.evolve(nxt, status=JobStatus.RUNNING))
            uow.commit()
        taken.append(nxt.id)
    assert taken == [first.id, second.id, third.id]
    with storage.unit_of_work() as uow:
        assert uow.jobs.next_queued() is None
        # A job queued again keeps its place in line.
        uow.jobs.save(attrs.evolve(second, status=JobStatus.QUEUED))
        uow.jobs.add(job(7))
        nxt = uow.jobs.next_queued()
        assert nxt is not None and nxt.id == second.id


def test_running_with_lease_before(storage: SqliteStorage) -> None:
    add_account(storage)
    stale = job(1, status=JobStatus.RUNNING, lease_expires_at=T0 - timedelta(seconds=1))
    exact = job(2, status=JobStatus.RUNNING, lease_expires_at=T0)
    fresh = job(3, status=JobStatus.RUNNING, lease_expires_at=T0 + timedelta(seconds=30))
    no_lease = job(4, status=JobStatus.RUNNING)
    queued_old_lease = job(5, lease_expires_at=T0 - timedelta(hours=1))
    with storage.unit_of_work() as uow:
        for j in (stale, exact, fresh, no_lease, queued_old_lease):
            uow.jobs.add(j)
        uow.commit()
    with storage.reader() as uow:
        assert [j.id for j in uow.jobs.running_with_lease_before(T0)] == [stale.id]
        later = T0 + timedelta(minutes=1)
        assert [j.id for j in uow.jobs.running_with_lease_before(later)] == [
            stale.id,
            exact.id,
            fresh.id,
        ]


def _succeeded(n: int, expires: datetime, result_key: str | None) -> Job:
    return job(
        n,
        status=JobStatus.SUCCEEDED,
        phase=Phase.FINISHING,
        progress=100,
        finished_at=T0,
        credits_charged=1,
        image_key=None,
        result_key=result_key,
        result=JobResult(
            format=OutputFormat.SVG,
            width=10,
            height=10,
            bytes=5,
            colors=2,
            background_removed=False,
            expires_at=expires,
        ),
    )


def test_results_expiring_before(storage: SqliteStorage) -> None:
    add_account(storage)
    late = _succeeded(1, T0 + timedelta(hours=2), "results/a.svg")
    early = _succeeded(2, T0 - timedelta(hours=1), "results/b.svg")
    already_deleted = _succeeded(3, T0 - timedelta(hours=5), None)
    keeps = _succeeded(4, T0 + timedelta(days=2), "results/d.svg")
    with storage.unit_of_work() as uow:
        for j in (late, early, already_deleted, keeps, job(5)):
            uow.jobs.add(j)
        uow.commit()
    with storage.reader() as uow:
        assert [j.id for j in uow.jobs.results_expiring_before(T0)] == [early.id]
        moment = T0 + timedelta(hours=3)
        assert [j.id for j in uow.jobs.results_expiring_before(moment)] == [early.id, late.id]


def test_jobs_use_their_indexes(storage: SqliteStorage) -> None:
    db = storage.database()

    def plan(sql: str, *params: object) -> str:
        rows = db.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
        return " | ".join(str(row[3]) for row in rows)

    assert "jobs_status_seq" in plan(
        "SELECT * FROM jobs WHERE status = ? ORDER BY seq LIMIT 1", "queued"
    )
    assert "jobs_account_status" in plan(
        "SELECT count(*) FROM jobs WHERE account_id = ? AND status IN (?, ?)", "a", "q", "r"
    )
    assert "api_keys_hash" in plan("SELECT * FROM api_keys WHERE key_hash = ?", "h")


# -- idempotency records --


def record(
    key: str, job_n: int, expires: datetime, account_id: str | None = None
) -> IdempotencyRecord:
    return IdempotencyRecord(
        account_id=account_id or account().id,
        key=key,
        fingerprint=f"fp-{job_n}",
        job_id=f"job_{job_n:032x}",
        created_at=T0,
        expires_at=expires,
    )


def test_idempotency_get_put_replace_purge(storage: SqliteStorage) -> None:
    first = record("k1", 1, T0 + timedelta(days=1))
    other_account = record("k1", 2, T0 + timedelta(days=1), account_id="acct_other")
    old = record("k2", 3, T0 - timedelta(seconds=1))
    edge = record("k3", 4, T0)
    with storage.unit_of_work() as uow:
        for r in (first, other_account, old, edge):
            uow.idempotency.put(r)
        uow.commit()
    with storage.unit_of_work() as uow:
        assert uow.idempotency.get(first.account_id, "k1") == first
        assert uow.idempotency.get("acct_other", "k1") == other_account
        assert uow.idempotency.get(first.account_id, "nope") is None
        replacement = record("k2", 9, T0 + timedelta(days=1))
        uow.idempotency.put(replacement)
        assert uow.idempotency.get(first.account_id, "k2") == replacement
        assert uow.idempotency.purge_expired(T0) == 1  # edge: expires_at <= now
        assert uow.idempotency.get(first.account_id, "k3") is None
        assert uow.idempotency.get(first.account_id, "k2") == replacement
        uow.commit()


# -- transactions --


def test_leaving_without_commit_rolls_back(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.accounts.save(attrs.evolve(acct, credits_balance=99))
        uow.jobs.add(job(1))
    assert balance(storage) == 10
    with pytest.raises(RuntimeError, match="boom"), storage.unit_of_work() as uow:
        uow.accounts.save(attrs.evolve(acct, credits_balance=99))
        raise RuntimeError("boom")
    assert balance(storage) == 10
    with storage.reader() as uow:
        assert uow.jobs.get(job(1).id) is None


def test_a_reader_cannot_write_and_its_commit_does_nothing(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    with storage.reader() as uow:
        with pytest.raises(sqlite3.OperationalError):
            uow.accounts.save(attrs.evolve(acct, credits_balance=99))
        uow.commit()
    assert balance(storage) == 10
    # The connection is writable again afterwards.
    with storage.unit_of_work() as uow:
        uow.accounts.save(attrs.evolve(acct, credits_balance=11))
        uow.commit()
    assert balance(storage) == 11


def test_writes_do_not_nest_on_one_thread_but_a_read_may(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.accounts.save(attrs.evolve(acct, credits_balance=99))
        with pytest.raises(RuntimeError, match="nest"):
            storage.unit_of_work().__enter__()
        # A read on the same thread sees the last committed state, not this change.
        assert balance(storage) == 10
        uow.commit()
    assert balance(storage) == 99


class Holder(threading.Thread):
    """Holds the write lock (an open write unit of work) until told to let go."""

    def __init__(self, storage: SqliteStorage, new_balance: int = 50) -> None:
        super().__init__(daemon=True)
        self.storage = storage
        self.new_balance = new_balance
        self.holding = threading.Event()
        self.release = threading.Event()
        self.released_at = 0.0

    def run(self) -> None:
        with self.storage.unit_of_work() as uow:
            acct = uow.accounts.get(account().id)
            assert acct is not None
            uow.accounts.save(attrs.evolve(acct, credits_balance=self.new_balance))
            self.holding.set()
            self.release.wait(10)
            self.released_at = time.monotonic()
            uow.commit()


def test_a_second_writer_waits_for_the_first(storage: SqliteStorage) -> None:
    add_account(storage)
    holder = Holder(storage)
    holder.start()
    assert holder.holding.wait(5)
    seen: list[int] = []
    done_at: list[float] = []

    def second_writer() -> None:
        with storage.unit_of_work() as uow:
            acct = uow.accounts.get(account().id)
            assert acct is not None
            seen.append(acct.credits_balance)
            uow.accounts.save(attrs.evolve(acct, credits_balance=acct.credits_balance + 1))
            uow.commit()
        done_at.append(time.monotonic())

    writer = threading.Thread(target=second_writer)
    writer.start()
    time.sleep(0.3)
    assert not done_at, "the second writer must wait for the lock"
    holder.release.set()
    holder.join(5)
    writer.join(5)
    assert seen == [50], "the second writer read the first one's committed balance"
    assert done_at[0] >= holder.released_at
    assert balance(storage) == 51


def test_a_reader_is_never_blocked_by_a_writer(storage: SqliteStorage) -> None:
    add_account(storage)
    holder = Holder(storage)
    holder.start()
    assert holder.holding.wait(5)
    try:
        result: list[int] = []

        def read() -> None:
            result.append(balance(storage))

        reader = threading.Thread(target=read)
        started = time.monotonic()
        reader.start()
        reader.join(5)
        assert result == [10], "a reader sees the last committed state"
        assert time.monotonic() - started < 1.0
        assert not holder.release.is_set()
    finally:
        holder.release.set()
        holder.join(5)
    assert balance(storage) == 50


def test_an_open_reader_never_blocks_a_writer(storage: SqliteStorage) -> None:
    acct = add_account(storage)
    reading = threading.Event()
    finish = threading.Event()
    seen: list[int] = []

    def long_read() -> None:
        with storage.reader() as uow:
            first = uow.accounts.get(acct.id)
            assert first is not None
            seen.append(first.credits_balance)
            reading.set()
            finish.wait(10)
            again = uow.accounts.get(acct.id)
            assert again is not None
            seen.append(again.credits_balance)

    reader = threading.Thread(target=long_read)
    reader.start()
    assert reading.wait(5)
    try:
        started = time.monotonic()
        with storage.unit_of_work() as uow:
            uow.accounts.save(attrs.evolve(acct, credits_balance=42))
            uow.commit()
        assert time.monotonic() - started < 1.0
    finally:
        finish.set()
        reader.join(5)
    assert seen == [10, 10], "the reader keeps its snapshot"
    assert balance(storage) == 42


def test_a_lock_held_past_the_busy_timeout_is_server_busy(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    patient = open_storage(path)
    hasty = open_storage(path, busy_timeout=0.1)
    add_account(patient)
    holder = Holder(patient)
    holder.start()
    assert holder.holding.wait(5)
    try:
        started = time.monotonic()
        with pytest.raises(ServerBusy) as caught, hasty.unit_of_work():
            pass
        assert caught.value.retry_after == BUSY_RETRY_AFTER == 2
        assert caught.value.code == "server_busy"
        assert time.monotonic() - started < 2.0
        with pytest.raises(ServerBusy):
            hasty.rate_limiter().hit("bucket", 10, T0)
        # reads still work while the lock is held
        assert balance(hasty) == 10
    finally:
        holder.release.set()
        holder.join(5)
    # and once the lock is free, the hasty storage writes normally
    with hasty.unit_of_work() as uow:
        uow.accounts.add(account(2))
        uow.commit()
    assert balance(hasty, account(2).id) == 10
    patient.close()
    hasty.close()


def test_each_thread_has_its_own_connection(storage: SqliteStorage) -> None:
    mine = storage.database()
    assert storage.database() is mine
    theirs: list[object] = []
    thread = threading.Thread(target=lambda: theirs.append(storage.database()))
    thread.start()
    thread.join()
    assert theirs[0] is not mine


def test_close_then_use_again_reopens(storage: SqliteStorage) -> None:
    add_account(storage)
    storage.close()
    assert balance(storage) == 10


def _open_files(path: Path) -> int:
    fd_dir = Path("/proc/self/fd")
    count = 0
    for fd in fd_dir.iterdir():
        try:
            if Path(os.readlink(fd)) == path:
                count += 1
        except OSError:
            continue
    return count


def test_ended_threads_do_not_leak_connections(storage: SqliteStorage) -> None:
    add_account(storage)
    before = _open_files(storage.path)

    def work() -> None:
        assert balance(storage) == 10

    for _ in range(40):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    gc.collect()
    assert _open_files(storage.path) <= before + 1


# -- the services over real storage --


def test_services_over_sqlite_recover_and_sweep(tmp_path: Path, storage: SqliteStorage) -> None:
    clock = FakeClock(T0)
    ports = Ports(
        uow=storage.unit_of_work,
        reader=storage.reader,
        clock=clock,
        ids=FakeIds(),
        blobs=FilesystemBlobStore(tmp_path / "files"),
        limiter=storage.rate_limiter(),
        probe=FakeImageProbe(),
        policy=Policy(submissions_per_minute=100),
    )
    operator, api, processing = OperatorService(ports), ApiService(ports), JobProcessing(ports)
    acct = operator.create_account(5, 5)
    first = api.submit(acct, [("format", "svg")], fake_image(salt="a"), "key-1").job
    replay = api.submit(acct, [("format", "svg")], fake_image(salt="a"), "key-1")
    assert replay.replayed and replay.job.id == first.id
    second = api.submit(acct, [("format", "png")], fake_image(salt="b")).job
    assert api.account(acct).credits_held == 2

    done = processing.claim()
    assert done is not None and done.job.id == first.id
    finished = processing.succeed(done, ConversionOutput(b"<svg/>", 10, 10, 2, False))
    assert finished is not None and finished.credits_charged == 1
    lost = processing.claim()
    assert lost is not None and lost.job.id == second.id

    # The worker holding `second` dies: once its lease passes, the job is queued again.
    clock.advance(ports.policy.lease_seconds + 1)
    assert [j.status for j in processing.recover()] == [JobStatus.QUEUED]
    again = processing.claim()
    assert again is not None and again.attempt == 2
    assert processing.fail(again, "no") is not None

    view = api.account(acct)
    assert (view.credits_balance, view.credits_held, view.active_jobs) == (4, 0, 0)
    assert api.result(acct, first.id)[1] == b"<svg/>"
    clock.advance(ports.policy.result_ttl_seconds)
    assert processing.sweep() == 1
    assert processing.sweep() == 0
    assert list(ports.blobs.keys("")) == []
    with storage.reader() as uow:
        kept = uow.jobs.get(first.id)
        assert uow.idempotency.get(acct.id, "key-1") is None  # expired and purged
    assert kept is not None and kept.result is not None and kept.result_key is None


# -- databases made by earlier releases --

SCHEMA_V1 = Path(__file__).with_name("schema_v1") / "sqlite.sql"


def _schema_of(path: Path) -> set[tuple[str, str, str]]:
    """Every table and index: (type, name, its SQL with all whitespace removed)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
    finally:
        conn.close()
    return {(kind, name, "".join((sql or "").split())) for kind, name, sql in rows}


def test_a_database_made_by_schema_version_1_opens_and_is_the_same(tmp_path: Path) -> None:
    """A file made by the DDL printjob shipped before the schema was written once opens
    unchanged, keeps its data, and has exactly the tables and indexes a new file gets."""
    old = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(old)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(SCHEMA_V1.read_text())
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO accounts (id, created_at, credits_balance, credits_held, active_jobs_max)"
        " VALUES (?, ?, 10, 0, 3)",
        (account().id, format_time(T0)),
    )
    conn.commit()
    conn.close()
    before = _schema_of(old)
    store = open_storage(old)
    assert store.schema_version() == SCHEMA_VERSION == 1
    assert balance(store) == 10
    with store.unit_of_work() as uow:
        uow.jobs.add(job(1))
        uow.commit()
    with store.reader() as uow:
        assert uow.jobs.get(job(1).id) == job(1)
    store.close()
    open_storage(tmp_path / "new.sqlite3").close()
    assert _schema_of(old) == before == _schema_of(tmp_path / "new.sqlite3")
