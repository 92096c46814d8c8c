"""The shared storage: every repository port, the unit of work, the rate limiter and the
job queue on PostgreSQL (psycopg 3), for API and worker processes on several machines.

Selected by `PRINTJOB_DATABASE_URL=postgresql://...`. The schema, the repositories (with
their row locks), the polling views and the counters' statements are written once in
`printjob_adapters.sql`, here in the `POSTGRESQL` dialect; this module keeps the pool,
the transactions, the schema version table and `LISTEN`. The storage contract suite
(tests/unit/adapters/test_storage_contract.py) runs the same behaviours on both.

What PostgreSQL adds to the rules of `printjob_adapters.sql.repositories` (row locks
account before job, the queue taken with `SKIP LOCKED`, `NOTIFY` on commit):

- A write unit of work is one `READ COMMITTED` transaction whose row locks do what
  SQLite's whole-database write lock does, while different accounts proceed in parallel;
  no transaction ever has to be retried (the core's unit of work cannot re-run its body).
- Waiting is bounded: `lock_timeout` (PRINTJOB_BUSY_TIMEOUT_SECONDS) for a row lock, the
  same for a pooled connection; running out, or a deadlock PostgreSQL broke, or a lost
  connection raises `ServerBusy` (design decision 8): rolled back, nothing changed.
- A read unit of work is a `REPEATABLE READ READ ONLY` transaction: one snapshot, no locks.
- `PostgresJobSignal` LISTENs on the channel a queued job is announced on, and wakes an
  idle worker at once.
- Connections: one small `psycopg_pool.ConnectionPool` per process, created on first use
  and again after a fork (a child never touches its parent's sockets).
- Schema: the migrations of `printjob_adapters.sql.schema`, recorded in
  `printjob_schema_version` and applied under an advisory lock (concurrent starts apply
  them once) by `printjob db upgrade` and on start.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, Self

import psycopg
import psycopg.errors
from psycopg.rows import dict_row, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from printjob_adapters.rate_leases import LeasedRateLimiter, minute_window
from printjob_adapters.sql.dialect import JOB_CHANNEL, POSTGRESQL
from printjob_adapters.sql.rate_counts import ExactHits, RateCountSql, oldest_kept
from printjob_adapters.sql.repositories import Cursor, Params, SqlUnitOfWork
from printjob_adapters.sql.schema import SCHEMA_VERSION, SchemaError, upgrade_statements
from printjob_adapters.sql.views import SqlViews
from printjob_adapters.storage import BUSY_RETRY_AFTER, busy
from printjob_core.errors import ServerBusy

#: The channel a newly queued job is announced on.
CHANNEL = JOB_CHANNEL
#: Key of the advisory lock that serialises schema migrations.
_MIGRATION_LOCK = 0x7072_696E_746A_6F62 & 0x7FFF_FFFF_FFFF_FFFF

Connection = psycopg.Connection[dict[str, Any]]


# -- errors --

#: Errors after which the transaction changed nothing and the client may simply resend.
_BUSY_ERRORS: tuple[type[Exception], ...] = (
    psycopg.errors.LockNotAvailable,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.SerializationFailure,
    psycopg.errors.QueryCanceled,
    psycopg.errors.TooManyConnections,
    psycopg.errors.AdminShutdown,
    psycopg.errors.CannotConnectNow,
)


@contextmanager
def _busy_on_contention(what: str) -> Iterator[None]:
    try:
        yield
    except _BUSY_ERRORS as exc:
        raise busy(what) from exc
    except PoolTimeout as exc:
        raise busy("no database connection was free") from exc
    except psycopg.OperationalError as exc:
        raise busy("the database could not be reached") from exc


# -- connections --


class _Pool:
    """One psycopg pool per process: created on first use, and anew after a fork."""

    def __init__(self, url: str, *, max_size: int, timeout: float, lock_timeout: float) -> None:
        self.url = url
        self.max_size = max(1, max_size)
        self.timeout = timeout
        self.lock_timeout = lock_timeout
        self._pool: ConnectionPool[Connection] | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.autocommit = True
        conn.execute("SET TIME ZONE 'UTC'")
        millis = max(1, int(self.lock_timeout * 1000))
        conn.execute(f"SET lock_timeout = {millis}")
        conn.execute("SET idle_in_transaction_session_timeout = 600000")

    def get(self) -> ConnectionPool[Connection]:
        pid = os.getpid()
        pool = self._pool
        if pool is not None and self._pid == pid:
            return pool
        with self._lock:
            if self._pool is None or self._pid != pid:
                # An inherited pool (after a fork) is dropped, never closed: closing would
                # disturb the parent's connections.
                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.max_size,
                    kwargs={"row_factory": dict_row, "autocommit": True},
                    configure=self._configure,
                    timeout=self.timeout,
                    open=False,
                    name="printjob",
                )
                try:
                    with _busy_on_contention("opening the database"):
                        self._pool.open(wait=True, timeout=max(self.timeout, 10.0))
                except ServerBusy:
                    self._pool.close()
                    self._pool = None
                    self._explain_unreachable()
                    raise
                self._pid = pid
            return self._pool

    def _explain_unreachable(self) -> None:
        """After the pool gave up opening: one direct attempt, so that a server that is
        down or a wrong address is reported as such (with psycopg's reason) rather than
        as a pool that timed out. Returns when the server answers (the pool was merely
        slow: the caller's busy error stands)."""
        try:
            psycopg.connect(self.url, connect_timeout=5).close()
        except psycopg.Error as exc:
            raise busy("the database could not be reached") from exc

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        with _busy_on_contention("the database"), self.get().connection() as conn:
            yield conn

    def acquire(self) -> Connection:
        with _busy_on_contention("the database"):
            return self.get().getconn()

    def release(self, conn: Connection) -> None:
        pool = self._pool
        if pool is not None and self._pid == os.getpid():
            pool.putconn(conn)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None and self._pid == os.getpid():
                pool.close()


# -- statements --


class _Guarded:
    """A connection whose statements answer lock waits and lost connections with
    `ServerBusy`: the `Executor` the repositories run on."""

    __slots__ = ("conn",)

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Params = (), /) -> Cursor:
        with _busy_on_contention("the database stayed locked"):
            return self.conn.execute(sql, parameters)


# -- unit of work --


class PostgresUnitOfWork(SqlUnitOfWork):
    """The `UnitOfWork` port: one PostgreSQL transaction over every repository.

    A writer is `READ COMMITTED` with row locks (see the module notes); a reader is a
    `REPEATABLE READ READ ONLY` snapshot whose `commit()` does nothing. Each unit of work
    borrows a pooled connection for its lifetime. Leaving without `commit()` rolls back.
    """

    def __init__(self, pool: _Pool, *, read_only: bool = False) -> None:
        super().__init__(POSTGRESQL, read_only=read_only)
        self._pool = pool
        self._conn: Connection | None = None

    def __enter__(self) -> Self:
        if self._conn is not None:
            raise RuntimeError("a unit of work cannot be entered twice")
        conn = self._pool.acquire()
        try:
            with _busy_on_contention("the database"):
                conn.execute(
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                    if self.read_only
                    else "BEGIN ISOLATION LEVEL READ COMMITTED"
                )
        except BaseException:
            self._pool.release(conn)
            raise
        self._conn = conn
        self._attach(_Guarded(conn))
        self._open = True
        return self

    def _commit(self) -> None:
        assert self._conn is not None
        with _busy_on_contention("the database stayed locked"):
            self._conn.execute("COMMIT")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._open = False
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.execute("ROLLBACK")
        except psycopg.Error:
            pass  # a broken connection: the pool checks and replaces it
        finally:
            self._pool.release(conn)


# -- views and rate limiter --


def _views(pool: _Pool) -> SqlViews:
    """The `ReadViews` port: each read one autocommit statement (its own snapshot)."""

    def fetch_one(sql: str, params: tuple[str, ...]) -> tuple[Any, ...] | None:
        with pool.connection() as conn, _busy_on_contention("reading"):
            return conn.cursor(row_factory=tuple_row).execute(sql, params).fetchone()

    return SqlViews(POSTGRESQL, fetch_one)


_RATE_SQL = RateCountSql.for_dialect(POSTGRESQL)


class PostgresRateLimiter(ExactHits):
    """Per-minute counters in the shared database (`printjob_adapters.sql.rate_counts`):
    the `SharedCounter` under `LeasedRateLimiter` (and, used alone, an exact
    `RateLimiter`)."""

    def __init__(self, pool: _Pool) -> None:
        self._pool = pool
        self._swept_window = 0

    def add(self, bucket: str, window_start: int, amount: int) -> int:
        with self._pool.connection() as conn, _busy_on_contention("rate limiter"):
            row = conn.execute(_RATE_SQL.add, (bucket, window_start, amount, amount)).fetchone()
            if window_start > self._swept_window:
                self._swept_window = window_start
                conn.execute(_RATE_SQL.sweep, (oldest_kept(window_start),))
        assert row is not None
        return int(row["count"])

    def count(self, bucket: str, now: datetime) -> int:
        start, _ = minute_window(now)
        with self._pool.connection() as conn, _busy_on_contention("rate limiter"):
            row = conn.execute(_RATE_SQL.count, (bucket, start)).fetchone()
        return 0 if row is None else int(row["count"])


# -- the queue's wake-up call --


class PostgresJobSignal:
    """Wakes an idle worker when a job is queued: `LISTEN printjob_jobs`.

    `wait(timeout)` returns True as soon as a notice arrives, False after `timeout`
    (the caller then polls the queue anyway, so a lost notice or a broken connection
    costs at most one poll interval). Its own connection, opened on first use.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection[Any] | None = None
        self._pid = 0

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._pid != os.getpid():
            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            self._conn.execute(f"LISTEN {CHANNEL}")
            self._pid = os.getpid()
        return self._conn

    def wait(self, timeout: float) -> bool:
        try:
            conn = self._connection()
            woke = False
            for _ in conn.notifies(timeout=max(0.0, timeout), stop_after=1):
                woke = True
            # Swallow the other notices already here: one claim loop serves them all.
            for _ in conn.notifies(timeout=0.0):
                pass
            return woke
        except psycopg.Error:
            self.close()
            return False

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and self._pid == os.getpid():
            conn.close()


# -- the storage as a whole --


class PostgresStorage:
    """The database: schema, the connection pool, unit-of-work factories."""

    def __init__(
        self,
        url: str,
        *,
        busy_timeout: float = 5.0,
        pool_size: int = 10,
    ) -> None:
        self.url = url
        self.busy_timeout = busy_timeout
        self._pool = _Pool(url, max_size=pool_size, timeout=busy_timeout, lock_timeout=busy_timeout)

    def migrate(self) -> int:
        """Create or upgrade the schema (idempotent; concurrent callers wait in turn)."""
        with self._pool.connection() as conn, conn.transaction():
            # Other processes starting at the same moment wait here, then find it done.
            conn.execute("SET LOCAL lock_timeout = '120s'")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS printjob_schema_version "
                "(version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            row = conn.execute(
                "SELECT coalesce(max(version), 0) AS version FROM printjob_schema_version"
            ).fetchone()
            version = 0 if row is None else int(row["version"])
            for number, statements in upgrade_statements(POSTGRESQL, version, "the database"):
                for statement in statements:
                    conn.execute(statement)
                conn.execute("INSERT INTO printjob_schema_version (version) VALUES (%s)", (number,))
        return SCHEMA_VERSION

    def schema_version(self) -> int:
        with self._pool.connection() as conn:
            exists = conn.execute(
                "SELECT to_regclass('printjob_schema_version') IS NOT NULL AS present"
            ).fetchone()
            if exists is None or not exists["present"]:
                return 0
            row = conn.execute(
                "SELECT coalesce(max(version), 0) AS version FROM printjob_schema_version"
            ).fetchone()
        return 0 if row is None else int(row["version"])

    def unit_of_work(self) -> PostgresUnitOfWork:
        """A write unit of work: the `Ports.uow` factory."""
        return PostgresUnitOfWork(self._pool)

    def reader(self) -> PostgresUnitOfWork:
        """A read-only snapshot that takes no locks: the `Ports.reader` factory."""
        return PostgresUnitOfWork(self._pool, read_only=True)

    def views(self) -> SqlViews:
        """The `ReadViews` port: the polling reads in one statement each."""
        return _views(self._pool)

    def rate_counter(self) -> PostgresRateLimiter:
        """The shared per-minute counters, counted exactly (one write per request)."""
        return PostgresRateLimiter(self._pool)

    def rate_limiter(self) -> LeasedRateLimiter:
        """The `RateLimiter` port: the shared counters, leased in blocks (`rate_leases`)."""
        return LeasedRateLimiter(self.rate_counter())

    def job_signal(self) -> PostgresJobSignal:
        """A LISTEN connection that wakes an idle worker when a job is queued."""
        return PostgresJobSignal(self.url)

    def immediate_reads(self) -> None:
        """A PostgreSQL read is a network round trip: it never runs on the event loop."""
        return None

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A pooled autocommit connection, for maintenance and tests."""
        with self._pool.connection() as conn:
            yield conn

    def close(self) -> None:
        """Close this process's pool."""
        self._pool.close()


def open_storage(url: str, *, busy_timeout: float = 5.0) -> PostgresStorage:
    """Open the database at `url`, creating or upgrading its schema."""
    storage = PostgresStorage(url, busy_timeout=busy_timeout)
    storage.migrate()
    return storage


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


__all__ = [
    "BUSY_RETRY_AFTER",
    "CHANNEL",
    "SCHEMA_VERSION",
    "PostgresJobSignal",
    "PostgresRateLimiter",
    "PostgresStorage",
    "PostgresUnitOfWork",
    "SchemaError",
    "is_postgres_url",
    "open_storage",
]
