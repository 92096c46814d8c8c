"""The storage contract: one suite of repository, unit-of-work, view and rate-counter
behaviours, run on the core's in-memory fake, on SQLite and on PostgreSQL.

A new storage backend adds its line to `BACKENDS` (and a fixture branch below) and must
pass every test here. What only one database does (WAL and file modes, the process write
lock, `nonblocking()`, `SKIP LOCKED` across connections, `NOTIFY`, advisory-lock
migrations, the pool) is tested in that database's own file. The constraint tests at the
end run on the databases only: the fake keeps the ports' promises, not the schema's.

PostgreSQL is the server `make test` starts (`PRINTJOB_TEST_DATABASE_URL`), or one
tests/postgres_support.py starts on first use; never skipped.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import attrs
import psycopg
import pytest

from printjob_adapters.blobs import FilesystemBlobStore
from printjob_adapters.postgres import PostgresStorage
from printjob_adapters.postgres import open_storage as open_postgres
from printjob_adapters.sqlite import open_storage as open_sqlite
from printjob_core import ledger
from printjob_core.errors import NotSignedIn, PrintjobError, QuotaExhausted
from printjob_core.fakes import (
    FakeClock,
    FakeIds,
    FakeImageProbe,
    FakePasswordHasher,
    FakeRateLimiter,
    FakeStore,
    FakeUnitOfWork,
    fake_image,
)
from printjob_core.limits import Policy
from printjob_core.model import (
    Background,
    ConversionOutput,
    Invite,
    JobChannel,
    JobError,
    JobErrorCode,
    JobOptions,
    JobResult,
    JobStatus,
    LedgerEntry,
    LedgerKind,
    OutputFormat,
    Person,
    Phase,
    Plan,
    Size,
    WebSession,
)
from printjob_core.ports import JobByKey
from printjob_core.readiness import QueueState
from printjob_core.services import (
    ApiService,
    JobProcessing,
    OperatorService,
    Ports,
    SignedIn,
    WebsiteService,
)
from printjob_core.sessions import hash_token
from printjob_core.views import UnitOfWorkViews
from tests.keyed_reads import KeyedReads
from tests.postgres_support import create_database, drop_database
from tests.unit.adapters.storage_support import (
    T0,
    Holder,
    Storage,
    account,
    add_account,
    api_key,
    balance,
    job,
    record,
    succeeded,
)

BACKENDS = ["fake", "sqlite", "postgresql"]
DATABASES = ["sqlite", "postgresql"]
MINUTE = datetime(2026, 3, 1, 12, 0, 0, tzinfo=T0.tzinfo)


class FakeStorage:
    """The core's fake behind the storage interface the suite uses."""

    def __init__(self) -> None:
        self.store = FakeStore()
        self.limiter = FakeRateLimiter()

    def unit_of_work(self) -> FakeUnitOfWork:
        return self.store.unit_of_work()

    def reader(self) -> FakeUnitOfWork:
        return self.store.reader()

    def views(self) -> UnitOfWorkViews:
        return UnitOfWorkViews(self.store.reader)

    def rate_limiter(self) -> FakeRateLimiter:
        return self.limiter

    def rate_counter(self) -> FakeRateLimiter:
        return self.limiter


@attrs.frozen
class Constraints:
    """The exception each database raises when the schema refuses a change."""

    check: type[Exception]
    unique: type[Exception]
    foreign_key: type[Exception]
    read_only: type[Exception]


CONSTRAINTS = {
    "sqlite": Constraints(
        check=sqlite3.IntegrityError,
        unique=sqlite3.IntegrityError,
        foreign_key=sqlite3.IntegrityError,
        read_only=sqlite3.OperationalError,
    ),
    "postgresql": Constraints(
        check=psycopg.errors.CheckViolation,
        unique=psycopg.errors.UniqueViolation,
        foreign_key=psycopg.errors.ForeignKeyViolation,
        read_only=psycopg.errors.ReadOnlySqlTransaction,
    ),
}
_TABLES = (
    "rate_counts, idempotency_keys, credit_ledger, website_downloads, invites, web_sessions, "
    "people, sign_in_failures, jobs, api_keys, accounts"
)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """One database per test module and process, emptied before each test."""
    url = create_database()
    open_postgres(url).close()
    yield url
    drop_database(url)


def _open(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if name == "fake":
        yield FakeStorage()
    elif name == "sqlite":
        store = open_sqlite(tmp_path / "printjob.sqlite3")
        yield store
        store.close()
    else:
        postgres = PostgresStorage(request.getfixturevalue("postgres_url"))
        with postgres.connection() as conn:
            conn.execute(f"TRUNCATE {_TABLES} RESTART IDENTITY")
        yield postgres
        postgres.close()


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    yield from _open(request.param, request, tmp_path)


@pytest.fixture(params=DATABASES)
def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Storage, Constraints]]:
    for store in _open(request.param, request, tmp_path):
        yield store, CONSTRAINTS[request.param]


def services(storage: Storage, tmp_path: Path) -> tuple[Ports, ApiService, JobProcessing]:
    ports = Ports(
        uow=storage.unit_of_work,
        reader=storage.reader,
        clock=FakeClock(T0),
        ids=FakeIds(),
        blobs=FilesystemBlobStore(tmp_path / "files"),
        limiter=storage.rate_limiter(),
        probe=FakeImageProbe(),
        policy=Policy(submissions_per_minute=1000),
    )
    return ports, ApiService(ports), JobProcessing(ports)


# -- every storage: repositories, units of work, views --


def test_accounts_add_get_save(storage: Storage) -> None:
    acct = add_account(storage, account(active_jobs_max=5))
    with storage.unit_of_work() as uow:
        assert uow.accounts.get(acct.id) == acct
        assert uow.accounts.get("acct_missing") is None
        changed = attrs.evolve(acct, credits_balance=7, credits_held=2, disabled=True)
        uow.accounts.save(changed)
        uow.commit()
    with storage.reader() as uow:
        assert uow.accounts.get(acct.id) == changed


def test_accounts_keep_name_and_email_and_list_oldest_first(storage: Storage) -> None:
    named = add_account(storage, account(3, name="Ada Lovelace", email="ada@example.com"))
    older = add_account(storage, account(2, created_at=T0 - timedelta(days=1), disabled=True))
    same_moment = add_account(storage, account(1))
    with storage.reader() as uow:
        assert uow.accounts.get(named.id) == named
        assert uow.accounts.list_all() == [older, same_moment, named]
        assert uow.accounts.list_all(disabled_only=True) == [older]
    renamed = attrs.evolve(named, name="Ada King", email=None, disabled=True)
    with storage.unit_of_work() as uow:
        uow.accounts.save(renamed)
        uow.commit()
    with storage.reader() as uow:
        assert uow.accounts.get(named.id) == renamed
        assert uow.accounts.list_all(disabled_only=True) == [older, renamed]
    with storage.unit_of_work() as uow:
        uow.keys.add(api_key(1, named.id))
        uow.commit()
    fast, generic = storage.views(), UnitOfWorkViews(storage.reader)
    by_key = fast.account_by_key(api_key(1, "").key_hash)
    assert by_key == generic.account_by_key(api_key(1, "").key_hash)
    assert by_key is not None and by_key.account == renamed


def _entry(n: int, account_id: str, kind: LedgerKind, **changes: Any) -> LedgerEntry:
    entry = LedgerEntry(
        account_id=account_id,
        at=T0 + timedelta(seconds=n // 2),  # two entries a moment: order is the id's
        kind=kind,
        amount=n,
        balance_after=100 + n,
        held_after=n,
    )
    return attrs.evolve(entry, **changes)


def test_the_ledger_keeps_entries_in_the_order_written(storage: Storage) -> None:
    mine, theirs = add_account(storage, account(1)), add_account(storage, account(2))
    written = [
        _entry(1, mine.id, LedgerKind.ADD, reason="opening credits"),
        _entry(2, mine.id, LedgerKind.HOLD, job_id=job(1).id),
        _entry(3, theirs.id, LedgerKind.ADD),
        _entry(4, mine.id, LedgerKind.CHARGE, job_id=job(1).id),
    ]
    with storage.unit_of_work() as uow:
        for entry in written[:3]:
            uow.ledger.add(entry)
        uow.commit()
    with storage.unit_of_work() as uow:
        uow.ledger.add(written[3])
        uow.commit()
    with storage.unit_of_work() as uow:
        uow.ledger.add(_entry(5, mine.id, LedgerKind.RELEASE))  # never committed
    with storage.unit_of_work() as uow:
        uow.ledger.add(_entry(6, mine.id, LedgerKind.REMOVE, reason="refund: 'twice' ∑"))
        uow.commit()
    with storage.reader() as uow:
        history = uow.ledger.history(mine.id)
        assert uow.ledger.history(theirs.id) == [attrs.evolve(written[2], id=3)]
        assert uow.ledger.history("acct_nobody") == []
    ids = [entry.id for entry in history]
    assert ids[:3] == [1, 2, 4] and ids[3] >= 5, "ids increase; a rolled-back one may be skipped"
    assert [attrs.evolve(entry, id=0) for entry in history] == [
        written[0],
        written[1],
        written[3],
        _entry(6, mine.id, LedgerKind.REMOVE, reason="refund: 'twice' ∑"),
    ]


def test_views_read_key_account_and_job_in_one_go(storage: Storage) -> None:
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


def test_keys_by_id_by_hash_listed_oldest_first_and_revoked(storage: Storage) -> None:
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


def test_a_job_round_trips_with_every_field(storage: Storage) -> None:
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


def test_save_updates_a_job(storage: Storage) -> None:
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


def test_unfinished_and_queued_counts(storage: Storage) -> None:
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


def test_queue_state_counts_the_unfinished_the_oldest_queued_and_stale_leases(
    storage: Storage,
) -> None:
    add_account(storage)
    with storage.reader() as uow:
        empty = uow.jobs.queue_state(T0)
    assert empty == QueueState(queued=0, running=0, oldest_queued_at=None, stale_running=0)
    lease = timedelta(seconds=30)
    with storage.unit_of_work() as uow:
        uow.jobs.add(job(4))
        uow.jobs.add(job(2))
        uow.jobs.add(job(7, status=JobStatus.RUNNING, lease_expires_at=T0))
        uow.jobs.add(job(8, status=JobStatus.RUNNING, lease_expires_at=T0 + lease))
        uow.jobs.add(succeeded(9, T0, None))
        uow.commit()
    with storage.reader() as uow:
        state = uow.jobs.queue_state(T0 + timedelta(seconds=1))
    assert state == QueueState(
        queued=2, running=2, oldest_queued_at=job(2).created_at, stale_running=1
    )
    assert state.oldest_queued_seconds(job(2).created_at + lease) == 30.0


def test_a_job_keeps_the_request_id_that_submitted_it(storage: Storage) -> None:
    add_account(storage)
    with storage.unit_of_work() as uow:
        uow.jobs.add(job(1, request_id="req_0123456789abcdef01234567"))
        uow.jobs.add(job(2))
        uow.commit()
    with storage.reader() as uow:
        first, second = uow.jobs.get(job(1).id), uow.jobs.get(job(2).id)
    assert first is not None and first.request_id == "req_0123456789abcdef01234567"
    assert second is not None and second.request_id is None


def test_next_queued_is_fair_across_accounts(storage: Storage) -> None:
    first, second, third = account(1), account(2), account(3)
    for acct in (first, second, third):
        add_account(storage, acct)
    running = {"status": JobStatus.RUNNING, "phase": Phase.ANALYSING}
    with storage.unit_of_work() as uow:
        uow.jobs.add(job(1, first.id, **running))
        for n in (2, 3):
            uow.jobs.add(job(n, first.id))
        uow.jobs.add(job(4, second.id))
        uow.jobs.add(job(5, third.id, **running))
        uow.jobs.add(job(6, second.id))
        uow.jobs.add(job(7, third.id))
        uow.commit()

    def claim() -> int:
        with storage.unit_of_work() as uow:
            nxt = uow.jobs.next_queued()
            assert nxt is not None
            uow.jobs.save(attrs.evolve(nxt, status=JobStatus.RUNNING))
            uow.commit()
        return int(nxt.id.removeprefix("job_"), 16)

    def finish(n: int, account_id: str, at: int) -> None:
        with storage.unit_of_work() as uow:
            done = job(n, account_id, status=JobStatus.FAILED, phase=None)
            uow.jobs.save(attrs.evolve(done, finished_at=T0 + timedelta(seconds=at)))
            uow.commit()

    # Fewest running first: account 2 (none running) before account 1's older jobs.
    assert claim() == 4
    # All three run one: the oldest job (account 1's) goes first.
    assert claim() == 2
    # Accounts 2 and 3 run one each, account 1 two: account 2's or 3's, the oldest.
    assert claim() == 6
    # Nothing runs any more; account 1 was served last, account 3 longest ago, account 2
    # never finished a job: account 2 is empty, so account 3, then account 1.
    for n, acct, at in ((1, first, 30), (2, first, 31), (4, second, 32), (6, second, 33)):
        finish(n, acct.id, at)
    finish(5, third.id, 20)
    assert claim() == 7
    finish(7, third.id, 40)
    assert claim() == 3
    with storage.unit_of_work() as uow:
        assert uow.jobs.next_queued() is None


def test_next_queued_takes_turns_when_nothing_runs(storage: Storage) -> None:
    # One worker: account 1 queued three jobs, then account 2 one; once account 1's first
    # job has ended, account 2's job goes before account 1's next.
    first, second = account(1), account(2)
    add_account(storage, first)
    add_account(storage, second)
    with storage.unit_of_work() as uow:
        for n in (1, 2, 3):
            uow.jobs.add(job(n, first.id))
        uow.jobs.add(job(4, second.id))
        uow.commit()
    order = []
    for at in (10, 20, 30, 40):
        with storage.unit_of_work() as uow:
            nxt = uow.jobs.next_queued()
            assert nxt is not None
            finished = {"status": JobStatus.SUCCEEDED, "phase": None}
            uow.jobs.save(attrs.evolve(nxt, finished_at=T0 + timedelta(seconds=at), **finished))
            uow.commit()
        order.append(int(nxt.id.removeprefix("job_"), 16))
    assert order == [1, 4, 2, 3]


def test_next_queued_is_the_oldest_by_insertion(storage: Storage) -> None:
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


def test_running_with_lease_before(storage: Storage) -> None:
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


def test_results_expiring_before(storage: Storage) -> None:
    add_account(storage)
    late = succeeded(1, T0 + timedelta(hours=2), "results/a.svg")
    early = succeeded(2, T0 - timedelta(hours=1), "results/b.svg")
    already_deleted = succeeded(3, T0 - timedelta(hours=5), None)
    keeps = succeeded(4, T0 + timedelta(days=2), "results/d.svg")
    with storage.unit_of_work() as uow:
        for j in (late, early, already_deleted, keeps, job(5)):
            uow.jobs.add(j)
        uow.commit()
    with storage.reader() as uow:
        assert [j.id for j in uow.jobs.results_expiring_before(T0)] == [early.id]
        moment = T0 + timedelta(hours=3)
        assert [j.id for j in uow.jobs.results_expiring_before(moment)] == [early.id, late.id]


def test_idempotency_get_put_replace_purge(storage: Storage) -> None:
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


def test_leaving_without_commit_rolls_back(storage: Storage) -> None:
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


def test_a_second_writer_waits_for_the_first(storage: Storage) -> None:
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


def test_a_reader_is_never_blocked_by_a_writer(storage: Storage) -> None:
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


def test_an_open_reader_never_blocks_a_writer(storage: Storage) -> None:
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


def test_services_recover_and_sweep(tmp_path: Path, storage: Storage) -> None:
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
    reads = KeyedReads(api, operator)
    acct = operator.create_account(5, 5)
    first = api.submit(acct, [("format", "svg")], fake_image(salt="a"), "key-1").job
    replay = api.submit(acct, [("format", "svg")], fake_image(salt="a"), "key-1")
    assert replay.replayed and replay.job.id == first.id
    second = api.submit(acct, [("format", "png")], fake_image(salt="b")).job
    assert reads.account(acct).credits_held == 2

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

    view = reads.account(acct)
    assert (view.credits_balance, view.credits_held, view.active_jobs) == (4, 0, 0)
    history = operator.credit_history(acct.id)
    assert [(e.kind, e.job_id) for e in history] == [
        (LedgerKind.ADD, None),
        (LedgerKind.HOLD, first.id),
        (LedgerKind.HOLD, second.id),
        (LedgerKind.CHARGE, first.id),
        (LedgerKind.RELEASE, second.id),
    ], "a replay holds nothing; a job queued again after its worker died keeps its hold"
    assert ledger.replay(history) == (4, 0) == (history[-1].balance_after, history[-1].held_after)
    assert api.result(acct, first.id)[1] == b"<svg/>"
    clock.advance(ports.policy.result_ttl_seconds)
    assert processing.sweep() == 1
    assert processing.sweep() == 0
    assert list(ports.blobs.keys("")) == []
    with storage.reader() as uow:
        kept = uow.jobs.get(first.id)
        assert uow.idempotency.get(acct.id, "key-1") is None  # expired and purged
    assert kept is not None and kept.result is not None and kept.result_key is None


# -- several writers at once --


def test_two_submitters_cannot_spend_one_credit_twice(storage: Storage, tmp_path: Path) -> None:
    ports, api, _ = services(storage, tmp_path)
    reads = KeyedReads(api, OperatorService(ports))
    acct = OperatorService(ports).create_account(1, 10)
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def submit(n: int) -> None:
        barrier.wait()
        try:
            api.submit(acct, [("format", "svg")], fake_image(salt=str(n)))
            outcomes.append("accepted")
        except Exception as exc:
            outcomes.append(getattr(exc, "code", type(exc).__name__))

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["accepted"] + ["insufficient_credits"] * 5
    view = reads.account(acct)
    assert (view.credits_balance, view.credits_held, view.active_jobs) == (1, 1, 1)
    history = OperatorService(ports).credit_history(acct.id)
    assert [e.kind for e in history] == [LedgerKind.ADD, LedgerKind.HOLD]


def test_concurrent_submissions_with_one_key_make_one_job(storage: Storage, tmp_path: Path) -> None:
    ports, api, _ = services(storage, tmp_path)
    reads = KeyedReads(api, OperatorService(ports))
    acct = OperatorService(ports).create_account(10, 10)
    barrier = threading.Barrier(6)
    results: list[tuple[str, bool]] = []

    def submit() -> None:
        barrier.wait()
        done = api.submit(acct, [("format", "svg")], fake_image(salt="same"), "one-key")
        results.append((done.job.id, done.replayed))

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(results) == 6
    assert len({job_id for job_id, _ in results}) == 1
    assert sorted(replayed for _, replayed in results) == [False] + [True] * 5
    view = reads.account(acct)
    assert (view.credits_held, view.active_jobs) == (1, 1)


def _race(*calls: Callable[[], object]) -> None:
    """Run the calls at once, each in its own thread; errors (a 409, say) are ignored."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], object]) -> None:
        barrier.wait()
        with contextlib.suppress(Exception):
            call()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)


def test_cancel_and_succeed_racing_move_one_credit(storage: Storage, tmp_path: Path) -> None:
    ports, api, processing = services(storage, tmp_path)
    reads = KeyedReads(api, OperatorService(ports))
    output = ConversionOutput(b"<svg/>", 1, 1, 1, False)
    for round_ in range(5):
        acct = OperatorService(ports).create_account(1, 10)
        submitted = api.submit(acct, [("format", "svg")], fake_image(salt=f"r{round_}")).job
        claim = processing.claim()
        assert claim is not None and claim.job.id == submitted.id
        _race(
            functools.partial(api.cancel, acct, submitted.id),
            functools.partial(processing.succeed, claim, output),
        )
        final = reads.job(acct, submitted.id)
        view = reads.account(acct)
        assert view.credits_held == 0
        if final.status is JobStatus.SUCCEEDED:
            assert view.credits_balance == 0 and final.credits_charged == 1
        else:
            assert final.status is JobStatus.CANCELED
            assert view.credits_balance == 1 and final.credits_charged == 0


# -- the rate counter --


def test_allows_up_to_the_limit_then_refuses(storage: Storage) -> None:
    limiter = storage.rate_counter()
    now = MINUTE + timedelta(seconds=15)
    decisions = [limiter.hit("submit:a", 3, now) for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert all(d.retry_after == 45 for d in decisions)
    assert limiter.count("submit:a", now) == 5
    assert limiter.count("submit:b", now) == 0


def test_buckets_are_separate(storage: Storage) -> None:
    limiter = storage.rate_counter()
    assert limiter.hit("a", 1, MINUTE).allowed
    assert limiter.hit("b", 1, MINUTE).allowed
    assert not limiter.hit("a", 1, MINUTE).allowed


def test_a_new_minute_starts_a_new_window(storage: Storage) -> None:
    limiter = storage.rate_counter()
    for _ in range(2):
        limiter.hit("a", 1, MINUTE + timedelta(seconds=59))
    assert not limiter.hit("a", 1, MINUTE + timedelta(seconds=59, microseconds=999_999)).allowed
    fresh = limiter.hit("a", 1, MINUTE + timedelta(seconds=60))
    assert fresh.allowed and fresh.retry_after == 60
    assert limiter.count("a", MINUTE + timedelta(seconds=61)) == 1


def test_retry_after_is_at_least_one_second(storage: Storage) -> None:
    limiter = storage.rate_counter()
    decision = limiter.hit("a", 5, MINUTE + timedelta(seconds=59, microseconds=900_000))
    assert decision.retry_after == 1


def test_behaves_exactly_like_the_fake(storage: Storage) -> None:
    real, fake = storage.rate_counter(), FakeRateLimiter()
    moment = MINUTE - timedelta(seconds=7, microseconds=250_000)
    for step in range(200):
        moment += timedelta(seconds=(step * 7) % 11 + 0.37)
        bucket = f"b{step % 3}"
        assert real.hit(bucket, 4, moment) == fake.hit(bucket, 4, moment), step
        assert real.count(bucket, moment) == fake.count(bucket, moment)


# -- the databases' own constraints --


def test_held_credits_can_never_go_negative(database: tuple[Storage, Constraints]) -> None:
    storage, refuses = database
    acct = add_account(storage)
    with storage.unit_of_work() as uow, pytest.raises(refuses.check):
        uow.accounts.save(attrs.evolve(acct, credits_held=-1))
    assert balance(storage) == 10


def test_a_key_hash_is_unique(database: tuple[Storage, Constraints]) -> None:
    storage, refuses = database
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.keys.add(api_key(1, acct.id))
        with pytest.raises(refuses.unique):
            uow.keys.add(attrs.evolve(api_key(1, acct.id), id="key_other"))


class _UnknownKind:
    """A kind of entry the schema does not know (the model's enum cannot make one)."""

    value = "gift"


def test_a_ledger_entry_needs_an_account_a_kind_and_a_positive_amount(
    database: tuple[Storage, Constraints],
) -> None:
    storage, refuses = database
    acct = add_account(storage)
    for entry, refusal in (
        (_entry(1, "acct_nobody", LedgerKind.ADD), refuses.foreign_key),
        (_entry(1, acct.id, LedgerKind.ADD, amount=0), refuses.check),
        (_entry(1, acct.id, LedgerKind.ADD, held_after=-1), refuses.check),
    ):
        with storage.unit_of_work() as uow, pytest.raises(refusal):
            uow.ledger.add(entry)
    with storage.unit_of_work() as uow, pytest.raises(refuses.check):
        uow.ledger.add(_entry(1, acct.id, cast(LedgerKind, _UnknownKind())))
    with storage.reader() as uow:
        assert uow.ledger.history(acct.id) == []


def test_a_key_needs_an_existing_account(database: tuple[Storage, Constraints]) -> None:
    storage, refuses = database
    with storage.unit_of_work() as uow, pytest.raises(refuses.foreign_key):
        uow.keys.add(api_key(1, "acct_nobody"))


def test_a_reader_cannot_write_and_its_commit_does_nothing(
    database: tuple[Storage, Constraints],
) -> None:
    storage, refuses = database
    acct = add_account(storage)
    with storage.reader() as uow:
        with pytest.raises(refuses.read_only):
            uow.accounts.save(attrs.evolve(acct, credits_balance=99))
        uow.commit()
    assert balance(storage) == 10
    # The connection is writable again afterwards.
    with storage.unit_of_work() as uow:
        uow.accounts.save(attrs.evolve(acct, credits_balance=11))
        uow.commit()
    assert balance(storage) == 11


# -- the website: plans, channels, people, sessions, invites, downloads, sign-in failures --


def _person(n: int, account_id: str, email: str | None = None) -> Person:
    return Person(
        id=f"person_{n:024x}",
        account_id=account_id,
        email=email or f"p{n}@example.com",
        password_hash=f"hash-{n}",
        created_at=T0 + timedelta(seconds=n),
        password_changed_at=T0 + timedelta(seconds=n),
    )


def _session(n: int, person: Person, **changes: Any) -> WebSession:
    base = WebSession(
        token_hash=f"{n:064x}",
        person_id=person.id,
        account_id=person.account_id,
        created_at=T0,
        last_seen_at=T0,
        expires_at=T0 + timedelta(days=30),
    )
    return attrs.evolve(base, **changes)


def test_accounts_keep_their_plan_and_jobs_their_channel(storage: Storage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.accounts.save(attrs.evolve(acct, plan=Plan.MONTHLY))
        website = job(1, channel=JobChannel.WEBSITE)
        uow.jobs.add(website)
        uow.jobs.add(job(2))
        uow.jobs.add(job(3, channel=JobChannel.WEBSITE))
        uow.jobs.add(job(4, status=JobStatus.SUCCEEDED, channel=JobChannel.WEBSITE))
        uow.commit()
    with storage.reader() as uow:
        stored = uow.accounts.get(acct.id)
        assert stored is not None and stored.plan is Plan.MONTHLY
        assert uow.jobs.get(website.id) == website
        assert uow.jobs.count_unfinished(acct.id) == 1
        assert uow.jobs.count_unfinished(acct.id, JobChannel.API) == 1
        assert uow.jobs.count_unfinished(acct.id, JobChannel.WEBSITE) == 2
        assert [j.id for j in uow.jobs.recent_for(acct.id, 3)] == [
            job(4).id,
            job(3).id,
            job(2).id,
        ]
        assert uow.jobs.recent_for("acct_other", 3) == []
    # `/v1/account` counts the API's unfinished jobs only.
    key = api_key(1, acct.id)
    with storage.unit_of_work() as uow:
        uow.keys.add(key)
        uow.commit()
    found = storage.views().account_by_key(key.key_hash)
    assert found is not None and found.active_jobs == 1


def test_recent_jobs_made_at_one_moment_list_newest_added_first(storage: Storage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        for n in (1, 2, 3):
            uow.jobs.add(job(n, created_at=T0))
        uow.commit()
    with storage.reader() as uow:
        assert [j.id for j in uow.jobs.recent_for(acct.id, 5)] == [job(n).id for n in (3, 2, 1)]


def test_keys_keep_a_label_and_when_they_were_last_used(storage: Storage) -> None:
    acct = add_account(storage)
    key = attrs.evolve(api_key(1, acct.id), label="laptop <b>", last_chars="WxYz")
    later = T0 + timedelta(minutes=5)
    with storage.unit_of_work() as uow:
        uow.keys.add(key)
        uow.commit()
    with storage.unit_of_work() as uow:
        uow.keys.touch(key.id, later)
        uow.keys.touch(key.id, T0)  # an older time never goes back
        uow.keys.touch("key_missing", later)
        uow.commit()
    with storage.reader() as uow:
        assert uow.keys.get(key.id) == attrs.evolve(key, last_used_at=later)
    # A touch leaves a revoke made meanwhile alone.
    with storage.unit_of_work() as uow:
        uow.keys.save(attrs.evolve(key, revoked_at=later, last_used_at=later))
        uow.commit()
    with storage.unit_of_work() as uow:
        uow.keys.touch(key.id, later + timedelta(minutes=1))
        uow.commit()
    with storage.reader() as uow:
        stored = uow.keys.get(key.id)
    assert stored is not None and stored.revoked_at == later
    assert stored.last_used_at == later + timedelta(minutes=1)
    assert storage.views().account_by_key(key.key_hash) is not None


def test_people_have_one_email_each_whatever_its_case(storage: Storage) -> None:
    acct = add_account(storage)
    ada = _person(1, acct.id, "ada@example.com")
    with storage.unit_of_work() as uow:
        assert uow.people.add(ada)
        assert not uow.people.add(_person(2, acct.id, "ADA@example.com"))
        assert uow.people.add(_person(3, acct.id))
        uow.commit()
    with storage.reader() as uow:
        assert uow.people.get(ada.id) == ada
        assert uow.people.get("person_missing") is None
        assert uow.people.find_by_email("Ada@Example.COM") == ada
        assert uow.people.find_by_email("nobody@example.com") is None
        assert [p.id for p in uow.people.for_account(acct.id)] == [ada.id, _person(3, "").id]
    changed = attrs.evolve(ada, password_hash="new", password_changed_at=T0 + timedelta(days=1))
    with storage.unit_of_work() as uow:
        uow.people.save(changed)
        uow.commit()
    with storage.reader() as uow:
        assert uow.people.get(ada.id) == changed


def test_sessions_by_token_hash_touched_forward_and_ended(storage: Storage) -> None:
    acct = add_account(storage)
    other = add_account(storage, account(2))
    ada, bob = _person(1, acct.id), _person(2, acct.id)
    carol = _person(3, other.id)
    first, second, third = _session(1, ada), _session(2, ada), _session(3, bob)
    elsewhere = _session(4, carol)
    with storage.unit_of_work() as uow:
        for person in (ada, bob, carol):
            uow.people.add(person)
        for session in (first, second, third, elsewhere):
            uow.sessions.add(session)
        uow.commit()
    seen = T0 + timedelta(hours=1)
    with storage.unit_of_work() as uow:
        uow.sessions.touch(first.token_hash, seen)
        uow.sessions.touch(first.token_hash, T0)
        uow.commit()
    with storage.reader() as uow:
        assert uow.sessions.get(first.token_hash) == attrs.evolve(first, last_seen_at=seen)
        assert uow.sessions.get("0" * 64) is None
    with storage.unit_of_work() as uow:
        assert uow.sessions.delete_for_person(ada.id, keep=second.token_hash) == 1
        uow.commit()
    with storage.reader() as uow:
        assert uow.sessions.get(first.token_hash) is None
        assert uow.sessions.get(second.token_hash) == second
    with storage.unit_of_work() as uow:
        assert uow.sessions.delete_for_account(acct.id) == 2
        uow.sessions.delete(elsewhere.token_hash)
        uow.sessions.delete(elsewhere.token_hash)
        uow.commit()
    with storage.reader() as uow:
        for session in (second, third, elsewhere):
            assert uow.sessions.get(session.token_hash) is None


def test_expired_and_idle_sessions_are_purged(storage: Storage) -> None:
    acct = add_account(storage)
    ada = _person(1, acct.id)
    now = T0 + timedelta(days=10)
    live = _session(1, ada, last_seen_at=now - timedelta(days=1))
    idle = _session(2, ada, last_seen_at=now - timedelta(days=8))
    old = _session(3, ada, last_seen_at=now, expires_at=now)
    with storage.unit_of_work() as uow:
        uow.people.add(ada)
        for session in (live, idle, old):
            uow.sessions.add(session)
        uow.commit()
    with storage.unit_of_work() as uow:
        assert uow.sessions.purge_expired(now, now - timedelta(days=7)) == 2
        uow.commit()
    with storage.reader() as uow:
        assert uow.sessions.get(live.token_hash) == live
        assert uow.sessions.get(idle.token_hash) is None


def test_an_invite_is_used_once_and_not_when_expired(storage: Storage) -> None:
    acct = add_account(storage)
    fresh = Invite("a" * 64, acct.id, "bob@example.com", T0, T0 + timedelta(days=7))
    stale = Invite("b" * 64, acct.id, "carol@example.com", T0, T0 + timedelta(days=7))
    with storage.unit_of_work() as uow:
        uow.invites.add(fresh)
        uow.invites.add(stale)
        uow.commit()
    used_at = T0 + timedelta(days=1)
    with storage.unit_of_work() as uow:
        assert uow.invites.get(fresh.token_hash) == fresh
        assert uow.invites.use(fresh.token_hash, used_at)
        assert not uow.invites.use(fresh.token_hash, used_at)
        assert not uow.invites.use(stale.token_hash, stale.expires_at)
        assert not uow.invites.use("c" * 64, used_at)
        uow.commit()
    with storage.reader() as uow:
        assert uow.invites.get(fresh.token_hash) == attrs.evolve(fresh, used_at=used_at)
        assert uow.invites.get("c" * 64) is None


def test_a_download_is_counted_once_per_job_on_its_first_day(storage: Storage) -> None:
    acct = add_account(storage)
    other = add_account(storage, account(2))
    day, next_day = T0.date(), T0.date() + timedelta(days=1)
    with storage.unit_of_work() as uow:
        assert uow.downloads.record(acct.id, job(1).id, day, T0)
        assert not uow.downloads.record(acct.id, job(1).id, next_day, T0 + timedelta(days=1))
        assert uow.downloads.record(acct.id, job(2).id, day, T0)
        assert uow.downloads.record(acct.id, job(3).id, next_day, T0 + timedelta(days=1))
        assert uow.downloads.record(other.id, job(4).id, day, T0)
        uow.commit()
    with storage.reader() as uow:
        assert uow.downloads.counted(acct.id, job(1).id)
        assert not uow.downloads.counted(other.id, job(1).id)
        assert uow.downloads.count_on(acct.id, day) == 2
        assert uow.downloads.count_on(acct.id, next_day) == 1
        assert uow.downloads.count_on(other.id, next_day) == 0


def test_sign_in_failures_by_bucket_since_a_moment(storage: Storage) -> None:
    times = [T0 + timedelta(minutes=m) for m in (0, 5, 10)]
    with storage.unit_of_work() as uow:
        for moment in reversed(times):
            uow.sign_in_failures.add("signin-email:ada@example.com", moment)
        uow.sign_in_failures.add("signin-address:192.0.2.1", times[1])
        uow.commit()
    with storage.unit_of_work() as uow:
        assert uow.sign_in_failures.since("signin-email:ada@example.com", T0) == times[1:]
        assert uow.sign_in_failures.since("signin-email:ada@example.com", T0 - MINUTE_STEP) == (
            times
        )
        assert uow.sign_in_failures.purge_before(times[1]) == 1
        uow.sign_in_failures.clear("signin-address:192.0.2.1")
        uow.commit()
    with storage.reader() as uow:
        assert (
            uow.sign_in_failures.since("signin-email:ada@example.com", T0 - MINUTE_STEP)
            == (times[1:])
        )
        assert uow.sign_in_failures.since("signin-address:192.0.2.1", T0 - MINUTE_STEP) == []


MINUTE_STEP = timedelta(minutes=1)


def _website(storage: Storage, tmp_path: Path) -> tuple[Ports, WebsiteService, JobProcessing]:
    ports, _, processing = services(storage, tmp_path)
    return ports, WebsiteService(ports, FakePasswordHasher()), processing


def _succeeded_conversions(
    website: WebsiteService, processing: JobProcessing, signed_in: SignedIn, count: int
) -> list[str]:
    job_ids = []
    for n in range(count):
        submitted = website.submit_conversion(
            signed_in, fake_image(salt=str(n)), JobOptions(OutputFormat.SVG)
        )
        claim = processing.claim()
        assert claim is not None and claim.job.id == submitted.id
        output = ConversionOutput(b"<svg/>", 10, 10, 2, background_removed=False)
        assert processing.succeed(claim, output) is not None
        job_ids.append(submitted.id)
    return job_ids


def test_two_downloads_of_one_result_at_once_count_it_once(
    storage: Storage, tmp_path: Path
) -> None:
    _, website, processing = _website(storage, tmp_path)
    me = website.sign_up("ada@example.com", "correct horse battery", "192.0.2.1").signed_in
    (job_id,) = _succeeded_conversions(website, processing, me, 1)
    counted: list[bool] = []
    _race(*[lambda: counted.append(website.download(me, job_id).counted)] * 4)
    assert sorted(counted) == [False, False, False, True]
    assert website.quota(me).used == 1


def test_racing_downloads_never_pass_the_quota(storage: Storage, tmp_path: Path) -> None:
    _, website, processing = _website(storage, tmp_path)
    me = website.sign_up("ada@example.com", "correct horse battery", "192.0.2.1").signed_in
    job_ids = _succeeded_conversions(website, processing, me, 7)
    outcomes: list[str] = []

    def download(job_id: str) -> None:
        try:
            website.download(me, job_id)
            outcomes.append("downloaded")
        except QuotaExhausted:
            outcomes.append("quota")

    _race(*[functools.partial(download, job_id) for job_id in job_ids])
    assert sorted(outcomes) == ["downloaded"] * 5 + ["quota"] * 2
    assert website.quota(me).used == 5


def test_an_invite_raced_for_is_used_once(storage: Storage, tmp_path: Path) -> None:
    ports, website, _ = _website(storage, tmp_path)
    acct = OperatorService(ports).create_account()
    _, token = OperatorService(ports).invite(acct.id, "bob@example.com")
    outcomes: list[str] = []

    def accept() -> None:
        try:
            website.accept_invite(token, "correct horse battery")
            outcomes.append("accepted")
        except PrintjobError as exc:
            outcomes.append(getattr(exc, "code", type(exc).__name__))

    _race(*[accept] * 4)
    assert sorted(outcomes) == ["accepted"] + ["invite_invalid"] * 3
    with storage.reader() as uow:
        assert len(uow.people.for_account(acct.id)) == 1


def test_disabling_an_account_and_changing_a_password_end_sessions(
    storage: Storage, tmp_path: Path
) -> None:
    ports, website, _ = _website(storage, tmp_path)
    here = website.sign_up("ada@example.com", "correct horse battery", "192.0.2.1")
    there = website.sign_in("ada@example.com", "correct horse battery", "192.0.2.2")
    changed = website.change_password(here.signed_in, "correct horse battery", "another long one")
    with storage.reader() as uow:
        assert uow.sessions.get(hash_token(here.token)) is None
        assert uow.sessions.get(hash_token(there.token)) is None
        assert uow.sessions.get(hash_token(changed.token)) is not None
    OperatorService(ports).disable_account(here.signed_in.account_id)
    with storage.reader() as uow:
        assert uow.sessions.get(hash_token(changed.token)) is None
    with pytest.raises(NotSignedIn):
        website.session(changed.token)


def test_people_emails_are_unique_in_the_schema_too(
    database: tuple[Storage, Constraints],
) -> None:
    storage, constraints = database
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.people.add(_person(1, acct.id, "ada@example.com"))
        uow.jobs.add(job(1))
        uow.commit()

    def run(sql: str) -> None:
        with storage.unit_of_work() as uow:
            repository = cast(Any, uow.people)
            repository.db.execute(repository.d.sql(sql))

    with pytest.raises(constraints.unique):
        run(
            "INSERT INTO people (id, account_id, email, password_hash, created_at, "
            "password_changed_at) SELECT 'person_2', account_id, 'ADA@example.com', "
            "password_hash, created_at, password_changed_at FROM people"
        )
    with pytest.raises(constraints.check):
        run("UPDATE jobs SET channel = 'telegram'")
    with pytest.raises(constraints.check):
        run("UPDATE accounts SET plan = 'gold'")
