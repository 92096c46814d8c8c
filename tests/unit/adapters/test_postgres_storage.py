"""The PostgreSQL storage on a real server: the same repository behaviours as SQLite, plus
what several processes on one database need (row locks, SKIP LOCKED, NOTIFY, busy answers).

The server is the one `make test` starts (`PRINTJOB_TEST_DATABASE_URL`) or, unset, one
`.ci/postgres-up` starts on first use (tests/postgres_support.py). Never skipped.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import psycopg
import pytest

from printjob_adapters.blobs import FilesystemBlobStore
from printjob_adapters.postgres import (
    BUSY_RETRY_AFTER,
    SCHEMA_VERSION,
    PostgresStorage,
    SchemaError,
    open_storage,
)
from printjob_core.errors import ServerBusy
from printjob_core.fakes import FakeClock, FakeIds, FakeImageProbe, fake_image
from printjob_core.limits import Policy
from printjob_core.model import ConversionOutput, JobStatus
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports
from tests.postgres_support import create_database, drop_database

# The backend-neutral behaviours, run here against PostgreSQL (the `storage` fixture below
# replaces SQLite's for these imported tests).
from tests.unit.adapters.test_sqlite_storage import (  # noqa: F401
    T0,
    Holder,
    account,
    add_account,
    api_key,
    balance,
    job,
    test_a_job_round_trips_with_every_field,
    test_a_reader_is_never_blocked_by_a_writer,
    test_a_second_writer_waits_for_the_first,
    test_accounts_add_get_save,
    test_an_open_reader_never_blocks_a_writer,
    test_idempotency_get_put_replace_purge,
    test_keys_by_id_by_hash_listed_oldest_first_and_revoked,
    test_leaving_without_commit_rolls_back,
    test_next_queued_is_the_oldest_by_insertion,
    test_results_expiring_before,
    test_running_with_lease_before,
    test_save_updates_a_job,
    test_services_over_sqlite_recover_and_sweep,
    test_unfinished_and_queued_counts,
    test_views_read_key_account_and_job_in_one_go,
)

_TABLES = "rate_counts, idempotency_keys, jobs, api_keys, accounts"


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    url = create_database()
    open_storage(url).close()
    yield url
    drop_database(url)


@pytest.fixture
def storage(database_url: str) -> Iterator[PostgresStorage]:
    store = PostgresStorage(database_url)
    with store.connection() as conn:
        conn.execute(f"TRUNCATE {_TABLES} RESTART IDENTITY")
    yield store
    store.close()


def services(storage: PostgresStorage, tmp_path: Path) -> tuple[Ports, ApiService, JobProcessing]:
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


# -- schema --


def test_schema_is_versioned_and_migrate_is_idempotent() -> None:
    url = create_database()
    try:
        store = PostgresStorage(url)
        assert store.schema_version() == 0
        assert store.migrate() == SCHEMA_VERSION
        assert store.migrate() == SCHEMA_VERSION
        assert store.schema_version() == SCHEMA_VERSION
        with store.connection() as conn:
            rows = conn.execute("SELECT version FROM printjob_schema_version").fetchall()
        assert [row["version"] for row in rows] == list(range(1, SCHEMA_VERSION + 1))
        store.close()
    finally:
        drop_database(url)


def test_concurrent_migrations_apply_once() -> None:
    url = create_database()
    try:
        errors: list[BaseException] = []

        def migrate() -> None:
            try:
                open_storage(url).close()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=migrate) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == []
        store = PostgresStorage(url)
        assert store.schema_version() == SCHEMA_VERSION
        store.close()
    finally:
        drop_database(url)


def test_a_newer_schema_is_refused(storage: PostgresStorage) -> None:
    with storage.connection() as conn:
        conn.execute("INSERT INTO printjob_schema_version (version) VALUES (%s)", (999,))
    try:
        with pytest.raises(SchemaError, match="999"):
            storage.migrate()
    finally:
        with storage.connection() as conn:
            conn.execute("DELETE FROM printjob_schema_version WHERE version = 999")


# -- constraints --


def test_held_credits_can_never_go_negative(storage: PostgresStorage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow, pytest.raises(psycopg.errors.CheckViolation):
        uow.accounts.save(attrs.evolve(acct, credits_held=-1))
    assert balance(storage) == 10


def test_a_key_hash_is_unique_and_needs_an_account(storage: PostgresStorage) -> None:
    acct = add_account(storage)
    with storage.unit_of_work() as uow:
        uow.keys.add(api_key(1, acct.id))
        uow.commit()
    with storage.unit_of_work() as uow, pytest.raises(psycopg.errors.UniqueViolation):
        uow.keys.add(attrs.evolve(api_key(1, acct.id), id="key_" + "f" * 16))
    with storage.unit_of_work() as uow, pytest.raises(psycopg.errors.ForeignKeyViolation):
        uow.keys.add(api_key(2, "acct_missing"))


def test_a_reader_cannot_write_and_its_commit_does_nothing(storage: PostgresStorage) -> None:
    acct = add_account(storage)
    with storage.reader() as uow:
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            uow.accounts.save(attrs.evolve(acct, credits_balance=99))
        uow.commit()
    assert balance(storage) == 10


# -- several processes on one database --


def test_a_lock_held_past_the_lock_timeout_is_server_busy(
    storage: PostgresStorage, database_url: str
) -> None:
    add_account(storage)
    hasty = PostgresStorage(database_url, busy_timeout=0.2)
    holder = Holder(storage)
    holder.start()
    assert holder.holding.wait(5)
    try:
        started = time.monotonic()
        with pytest.raises(ServerBusy) as caught, hasty.unit_of_work() as uow:
            uow.accounts.get(account().id)
        assert caught.value.retry_after == BUSY_RETRY_AFTER
        assert caught.value.code == "server_busy"
        assert time.monotonic() - started < 2.0
        assert balance(hasty) == 10  # reads are never blocked
    finally:
        holder.release.set()
        holder.join(5)
    with hasty.unit_of_work() as uow:
        found = uow.accounts.get(account().id)
        assert found is not None and found.credits_balance == 50
    hasty.close()


def test_an_exhausted_pool_is_server_busy(database_url: str) -> None:
    tiny = PostgresStorage(database_url, busy_timeout=0.2, pool_size=1)
    with tiny.unit_of_work(), pytest.raises(ServerBusy), tiny.reader():
        pass
    with tiny.reader():
        pass  # the connection came back
    tiny.close()


def test_skip_locked_gives_concurrent_claimers_different_jobs(storage: PostgresStorage) -> None:
    add_account(storage)
    with storage.unit_of_work() as uow:
        for n in (1, 2, 3):
            uow.jobs.add(job(n))
        uow.commit()
    with storage.unit_of_work() as first:
        one = first.jobs.next_queued()
        with storage.unit_of_work() as second:
            two = second.jobs.next_queued()
            with storage.unit_of_work() as third:
                three = third.jobs.next_queued()
                with storage.unit_of_work() as fourth:
                    assert fourth.jobs.next_queued() is None
    assert one is not None and two is not None and three is not None
    assert [one.id, two.id, three.id] == [job(1).id, job(2).id, job(3).id]


def test_two_submitters_cannot_spend_one_credit_twice(
    storage: PostgresStorage, tmp_path: Path
) -> None:
    ports, api, _ = services(storage, tmp_path)
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
    view = api.account(acct)
    assert (view.credits_balance, view.credits_held, view.active_jobs) == (1, 1, 1)


def test_concurrent_submissions_with_one_key_make_one_job(
    storage: PostgresStorage, tmp_path: Path
) -> None:
    ports, api, _ = services(storage, tmp_path)
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
    view = api.account(acct)
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


def test_cancel_and_succeed_racing_move_one_credit(
    storage: PostgresStorage, tmp_path: Path
) -> None:
    ports, api, processing = services(storage, tmp_path)
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
        final = api.get_job(acct, submitted.id)
        view = api.account(acct)
        assert view.credits_held == 0
        if final.status is JobStatus.SUCCEEDED:
            assert view.credits_balance == 0 and final.credits_charged == 1
        else:
            assert final.status is JobStatus.CANCELED
            assert view.credits_balance == 1 and final.credits_charged == 0


def test_the_rate_limiter_counts_across_connections(
    storage: PostgresStorage, database_url: str
) -> None:
    other = PostgresStorage(database_url)
    mine, theirs = storage.rate_limiter(), other.rate_limiter()
    decisions = [limiter.hit("b", 3, T0).allowed for limiter in (mine, theirs, mine, theirs)]
    assert decisions == [True, True, True, False]
    assert mine.count("b", T0) == 4
    assert mine.count("b", T0.replace(minute=T0.minute + 1)) == 0
    assert 1 <= mine.hit("b", 3, T0).retry_after <= 60
    other.close()


def test_a_queued_job_wakes_a_listening_worker_on_commit_only(storage: PostgresStorage) -> None:
    add_account(storage)
    signal = storage.job_signal()
    assert signal.wait(0.05) is False  # connects and listens
    with storage.unit_of_work() as uow:
        uow.jobs.add(job(1))
        # not yet committed: nothing delivered
        assert signal.wait(0.2) is False
        uow.commit()
    started = time.monotonic()
    assert signal.wait(5) is True
    assert time.monotonic() - started < 1.0
    with storage.unit_of_work() as uow:
        uow.jobs.add(job(2))
    assert signal.wait(0.2) is False  # rolled back: no notice
    signal.close()


# -- databases made by earlier releases --

SCHEMA_V1 = Path(__file__).with_name("schema_v1") / "postgresql.sql"


def _schema_of(url: str) -> dict[str, list[tuple[object, ...]]]:
    """The columns, constraints and indexes of printjob's tables, from the catalogs."""
    with psycopg.connect(url, autocommit=True) as conn:
        return {
            "columns": conn.execute(
                "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, "
                "column_default, is_identity, identity_generation FROM information_schema.columns "
                "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
            ).fetchall(),
            "constraints": conn.execute(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                "FROM pg_constraint WHERE connamespace = current_schema()::regnamespace "
                "ORDER BY 1, 2"
            ).fetchall(),
            "indexes": conn.execute(
                "SELECT tablename, indexname, indexdef FROM pg_indexes "
                "WHERE schemaname = current_schema() ORDER BY 1, 2"
            ).fetchall(),
        }


def test_a_database_made_by_schema_version_1_opens_and_is_the_same() -> None:
    """A database made by the DDL printjob shipped before the schema was written once
    opens unchanged, keeps its data, and has exactly what a new database gets."""
    old, new = create_database(), create_database()
    try:
        with psycopg.connect(old, autocommit=True) as conn, conn.transaction():
            for statement in SCHEMA_V1.read_text().split(";"):
                if "CREATE" in statement:
                    conn.execute(statement.encode())
            conn.execute(
                "CREATE TABLE printjob_schema_version "
                "(version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            conn.execute("INSERT INTO printjob_schema_version (version) VALUES (1)")
            conn.execute(
                "INSERT INTO accounts (id, created_at, credits_balance, credits_held, "
                "active_jobs_max) VALUES (%s, %s, 10, 0, 3)",
                (account().id, T0),
            )
        before = _schema_of(old)
        store = PostgresStorage(old)
        assert store.migrate() == store.schema_version() == SCHEMA_VERSION == 1
        assert balance(store) == 10
        with store.unit_of_work() as uow:
            uow.jobs.add(job(1))
            uow.commit()
        with store.reader() as uow:
            assert uow.jobs.get(job(1).id) == job(1)
        store.close()
        open_storage(new).close()
        assert _schema_of(old) == before == _schema_of(new)
    finally:
        drop_database(old)
        drop_database(new)
