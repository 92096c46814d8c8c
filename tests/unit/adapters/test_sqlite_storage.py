"""The SQLite storage on real database files: what only SQLite does (the file, WAL,
`user_version`, text times, per-thread connections, the process write lock). The
behaviours every storage shares are in test_storage_contract.py."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from tests.unit.adapters.storage_support import T0, Holder, account, add_account, balance, job


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    store = open_storage(tmp_path / "printjob.sqlite3")
    yield store
    store.close()


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


# -- keys --


# -- jobs --


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


# -- transactions --


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
    """A file made by the DDL printjob shipped before the schema was written once opens,
    keeps its data, and has exactly the tables and indexes a new file gets."""
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
    assert store.schema_version() == SCHEMA_VERSION
    assert balance(store) == 10
    with store.unit_of_work() as uow:
        uow.jobs.add(job(1))
        uow.commit()
    with store.reader() as uow:
        assert uow.jobs.get(job(1).id) == job(1)
    store.close()
    open_storage(tmp_path / "new.sqlite3").close()
    # Upgraded in place to exactly what a new file gets; later migrations only add indexes.
    after = _schema_of(old)
    assert after == _schema_of(tmp_path / "new.sqlite3")
    assert before <= after
    assert {row for row in after - before if row[0] != "index"} == set()
