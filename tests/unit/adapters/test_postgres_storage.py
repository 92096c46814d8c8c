"""The PostgreSQL storage on a real server: what only PostgreSQL does (the schema version
table and advisory-lock migrations, the pool, lock timeouts, SKIP LOCKED across
connections, NOTIFY). The behaviours every storage shares are in test_storage_contract.py.

The server is the one `make test` starts (`PRINTJOB_TEST_DATABASE_URL`) or, unset, one
`.ci/postgres-up` starts on first use (tests/postgres_support.py). Never skipped.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from printjob_adapters.postgres import (
    BUSY_RETRY_AFTER,
    SCHEMA_VERSION,
    PostgresStorage,
    SchemaError,
    open_storage,
)
from printjob_adapters.sql.dialect import POSTGRESQL
from printjob_adapters.sql.schema import MIGRATIONS
from printjob_core.errors import ServerBusy
from tests.postgres_support import create_database, drop_database
from tests.unit.adapters.storage_support import (
    T0,
    Holder,
    account,
    add_account,
    balance,
    job,
)

_TABLES = (
    "rate_counts, idempotency_keys, credit_ledger, website_downloads, invites, web_sessions, "
    "people, sign_in_failures, jobs, api_keys, accounts"
)


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


def _without_version_table(columns: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return [column for column in columns if column[0] != "printjob_schema_version"]


def _schema_of_version_1_alone() -> dict[str, list[tuple[object, ...]]]:
    """What migration 1's statements alone make (the later ones upgrade from there)."""
    url = create_database()
    try:
        with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
            for statement in MIGRATIONS[0](POSTGRESQL):
                conn.execute(statement.encode())
        return _schema_of(url)
    finally:
        drop_database(url)


def test_a_database_made_by_schema_version_1_opens_and_is_the_same() -> None:
    """A database made by the DDL printjob shipped before the schema was written once is
    what migration 1 renders; it opens, keeps its data, and is upgraded to exactly what a
    new database gets."""
    old, new, rendered = create_database(), create_database(), create_database()
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
        assert {**before, "columns": _without_version_table(before["columns"])} == (
            _schema_of_version_1_alone()
        )
        store = PostgresStorage(old)
        assert store.migrate() == store.schema_version() == SCHEMA_VERSION
        assert balance(store) == 10
        with store.unit_of_work() as uow:
            uow.jobs.add(job(1))
            uow.commit()
        with store.reader() as uow:
            assert uow.jobs.get(job(1).id) == job(1)
        store.close()
        open_storage(new).close()
        assert _schema_of(old) == _schema_of(new)
    finally:
        drop_database(old)
        drop_database(new)
        drop_database(rendered)
