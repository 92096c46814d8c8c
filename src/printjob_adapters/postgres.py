"""The shared storage: every repository port, the unit of work, the rate limiter and the
job queue on PostgreSQL (psycopg 3), for API and worker processes on several machines.

Selected by `PRINTJOB_DATABASE_URL=postgresql://...`; it mirrors `printjob_adapters.sqlite`
port for port, and the same repository tests run against both.

Transactions and locks (the guarantees the core relies on):

- A write unit of work is one `READ COMMITTED` transaction. Every row it reads in order to
  change it is locked `FOR UPDATE`, always **account before job**, so two processes can
  never both read a balance or a job's state and both act on it:
  - `accounts.get` locks the account row;
  - `jobs.get` locks the job's account row, then the job row;
  - `idempotency.get` locks the account row before it looks the key up, so two concurrent
    submissions with one key queue on that lock and the second sees the first's record
    (and the unique `(account_id, key)` key backs it up);
  - `jobs.next_queued` takes the oldest queued job with `FOR UPDATE SKIP LOCKED` (the
    queue: workers never wait for each other), and `claim` touches no account;
  - `jobs.running_with_lease_before` (recovery) and `jobs.unfinished_for` (disabling an
    account) lock the accounts first, in id order, then the jobs.
  The job row, the credit hold and the idempotency record therefore commit together or
  not at all, exactly as on SQLite, while different accounts proceed in parallel.
- Waiting is bounded: `lock_timeout` (PRINTJOB_BUSY_TIMEOUT_SECONDS) for a row lock, the
  same for a pooled connection; running out, or a deadlock PostgreSQL broke, raises
  `ServerBusy` (design decision 8): the transaction was rolled back, nothing changed.
- A read unit of work is a `REPEATABLE READ READ ONLY` transaction: one snapshot, no locks.
- The rate limiter's counters live in the same database: one autocommit
  `INSERT ... ON CONFLICT DO UPDATE ... RETURNING count` per hit.
- A job that becomes queued (`jobs.add`, or a save back to `queued`) sends
  `NOTIFY printjob_jobs` inside its transaction, so the notice goes out on commit only;
  `PostgresJobSignal` LISTENs for it and wakes an idle worker at once.
- Connections: one small `psycopg_pool.ConnectionPool` per process, created on first use
  and again after a fork (a child never touches its parent's sockets).
- Schema: numbered migrations recorded in `printjob_schema_version`, applied under an
  advisory lock by `printjob db upgrade` and on start.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import psycopg
import psycopg.errors
from psycopg.rows import dict_row, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from printjob_adapters.rate_leases import LeasedRateLimiter, minute_window
from printjob_adapters.rows import JOB_COLUMNS as _JOB_COLUMNS
from printjob_adapters.rows import (
    NATIVE_TIMES,
    RowMapper,
    account_by_key_sql,
    aware_utc,
    job_by_key_sql,
)
from printjob_adapters.sqlite import SchemaError
from printjob_core.errors import ServerBusy
from printjob_core.model import (
    Account,
    ApiKey,
    IdempotencyRecord,
    Job,
    JobStatus,
)
from printjob_core.ports import (
    AccountByKey,
    AccountRepository,
    IdempotencyRepository,
    JobByKey,
    JobRepository,
    KeyRepository,
    RateDecision,
)

#: Seconds a client is told to wait when the database stayed locked.
BUSY_RETRY_AFTER = 2
#: The channel a newly queued job is announced on.
CHANNEL = "printjob_jobs"
#: Key of the advisory lock that serialises schema migrations.
_MIGRATION_LOCK = 0x7072_696E_746A_6F62 & 0x7FFF_FFFF_FFFF_FFFF
_T = TypeVar("_T")

# -- schema: migration N brings a database from version N-1 to N --

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE accounts (
            id TEXT PRIMARY KEY,
            created_at TIMESTAMPTZ NOT NULL,
            credits_balance BIGINT NOT NULL,
            credits_held BIGINT NOT NULL CHECK (credits_held >= 0),
            active_jobs_max INTEGER NOT NULL CHECK (active_jobs_max >= 1),
            disabled BOOLEAN NOT NULL DEFAULT FALSE
        )
        """,
        """
        CREATE TABLE api_keys (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
            id TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id),
            key_hash TEXT NOT NULL,
            hint TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            revoked_at TIMESTAMPTZ
        )
        """,
        "CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_hash)",
        "CREATE INDEX api_keys_account ON api_keys (account_id, created_at, seq)",
        """
        CREATE TABLE jobs (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            account_id TEXT NOT NULL REFERENCES accounts(id),
            status TEXT NOT NULL
                CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
            phase TEXT,
            progress INTEGER,
            created_at TIMESTAMPTZ NOT NULL,
            finished_at TIMESTAMPTZ,
            options JSONB NOT NULL,
            credits_charged INTEGER NOT NULL DEFAULT 0,
            result JSONB,
            error JSONB,
            attempts INTEGER NOT NULL DEFAULT 0,
            image_key TEXT,
            result_key TEXT,
            result_expires_at TIMESTAMPTZ,
            lease_expires_at TIMESTAMPTZ
        )
        """,
        "CREATE INDEX jobs_queued ON jobs (seq) WHERE status = 'queued'",
        "CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE status = 'running'",
        "CREATE INDEX jobs_account_status ON jobs (account_id, status)",
        """
        CREATE INDEX jobs_result_expiry ON jobs (result_expires_at)
            WHERE result_key IS NOT NULL
        """,
        """
        CREATE TABLE idempotency_keys (
            account_id TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            job_id TEXT NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            expires_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (account_id, key)
        )
        """,
        "CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at)",
        """
        CREATE TABLE rate_counts (
            bucket TEXT NOT NULL,
            window_start BIGINT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (bucket, window_start)
        )
        """,
        "CREATE INDEX rate_counts_window ON rate_counts (window_start)",
    ),
)
#: The schema version this code writes.
SCHEMA_VERSION = len(_MIGRATIONS)


# -- values <-> rows --


_aware = aware_utc


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


def _aware_or_none(moment: datetime | None) -> datetime | None:
    return None if moment is None else _aware(moment)


_JSON_COLUMNS = frozenset({"options", "result", "error"})


def _placeholder(name: str) -> str:
    return f"%({name})s::jsonb" if name in _JSON_COLUMNS else f"%({name})s"


_rows = RowMapper(NATIVE_TIMES)
_job_row, _job, _account, _key, _record = (
    _rows.job_row,
    _rows.job,
    _rows.account,
    _rows.key,
    _rows.record,
)


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


def _busy(what: str) -> ServerBusy:
    return ServerBusy(
        f"The service is busy ({what}); nothing was changed. Wait and send the same request "
        "again with the same Idempotency-Key.",
        retry_after=BUSY_RETRY_AFTER,
    )


@contextmanager
def _busy_on_contention(what: str) -> Iterator[None]:
    try:
        yield
    except _BUSY_ERRORS as exc:
        raise _busy(what) from exc
    except PoolTimeout as exc:
        raise _busy("no database connection was free") from exc
    except psycopg.OperationalError as exc:
        raise _busy("the database could not be reached") from exc


# -- connections --


class _Pool:
    """One psycopg pool per process: created on first use, and anew after a fork."""

    def __init__(self, url: str, *, max_size: int, timeout: float, lock_timeout: float) -> None:
        self.url = url
        self.max_size = max(1, max_size)
        self.timeout = timeout
        self.lock_timeout = lock_timeout
        self._pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.autocommit = True
        conn.execute("SET TIME ZONE 'UTC'")
        millis = max(1, int(self.lock_timeout * 1000))
        conn.execute(f"SET lock_timeout = {millis}")
        conn.execute("SET idle_in_transaction_session_timeout = 600000")

    def get(self) -> ConnectionPool[psycopg.Connection[dict[str, Any]]]:
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
                with _busy_on_contention("opening the database"):
                    self._pool.open(wait=True, timeout=max(self.timeout, 10.0))
                self._pid = pid
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with _busy_on_contention("the database"), self.get().connection() as conn:
            yield conn

    def acquire(self) -> psycopg.Connection[dict[str, Any]]:
        with _busy_on_contention("the database"):
            return self.get().getconn()

    def release(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        pool = self._pool
        if pool is not None and self._pid == os.getpid():
            pool.putconn(conn)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None and self._pid == os.getpid():
                pool.close()


# -- repositories --


class _Repository:
    def __init__(self, conn: psycopg.Connection[dict[str, Any]], *, locking: bool) -> None:
        self.conn = conn
        #: Inside a write unit of work: lock what is read to be changed.
        self.locking = locking

    def _execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        with _busy_on_contention("the database stayed locked"):
            return self.conn.execute(sql, params)  # type: ignore[arg-type]

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> dict[str, Any] | None:
        row: dict[str, Any] | None = self._execute(sql, params).fetchone()
        return row

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self._execute(sql, params).fetchall()
        return rows

    def _lock_accounts(self, account_ids: Sequence[str]) -> None:
        """Lock account rows in id order (the one order every transaction uses)."""
        if self.locking and account_ids:
            self._execute(
                "SELECT id FROM accounts WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
                (sorted(set(account_ids)),),
            )

    @property
    def _for_update(self) -> str:
        return " FOR UPDATE" if self.locking else ""


class PostgresAccounts(_Repository):
    def add(self, account: Account) -> None:
        self._execute(
            "INSERT INTO accounts (id, created_at, credits_balance, credits_held, "
            "active_jobs_max, disabled) VALUES (%s, %s, %s, %s, %s, %s)",
            (
                account.id,
                _aware(account.created_at),
                account.credits_balance,
                account.credits_held,
                account.active_jobs_max,
                account.disabled,
            ),
        )

    def get(self, account_id: str) -> Account | None:
        row = self._one(f"SELECT * FROM accounts WHERE id = %s{self._for_update}", (account_id,))
        return None if row is None else _account(row)

    def save(self, account: Account) -> None:
        cursor = self._execute(
            "UPDATE accounts SET credits_balance = %s, credits_held = %s, "
            "active_jobs_max = %s, disabled = %s WHERE id = %s",
            (
                account.credits_balance,
                account.credits_held,
                account.active_jobs_max,
                account.disabled,
                account.id,
            ),
        )
        if cursor.rowcount != 1:
            raise KeyError(f"no account {account.id}")


class PostgresKeys(_Repository):
    def add(self, key: ApiKey) -> None:
        self._execute(
            "INSERT INTO api_keys (id, account_id, key_hash, hint, created_at, revoked_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (
                key.id,
                key.account_id,
                key.key_hash,
                key.hint,
                _aware(key.created_at),
                _aware_or_none(key.revoked_at),
            ),
        )

    def get(self, key_id: str) -> ApiKey | None:
        row = self._one(f"SELECT * FROM api_keys WHERE id = %s{self._for_update}", (key_id,))
        return None if row is None else _key(row)

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        row = self._one("SELECT * FROM api_keys WHERE key_hash = %s", (key_hash,))
        return None if row is None else _key(row)

    def list_for(self, account_id: str) -> list[ApiKey]:
        rows = self._all(
            "SELECT * FROM api_keys WHERE account_id = %s ORDER BY created_at, seq",
            (account_id,),
        )
        return [_key(row) for row in rows]

    def save(self, key: ApiKey) -> None:
        cursor = self._execute(
            "UPDATE api_keys SET hint = %s, revoked_at = %s WHERE id = %s",
            (key.hint, _aware_or_none(key.revoked_at), key.id),
        )
        if cursor.rowcount != 1:
            raise KeyError(f"no key {key.id}")


_UNFINISHED = [JobStatus.QUEUED.value, JobStatus.RUNNING.value]


class PostgresJobs(_Repository):
    def add(self, job: Job) -> None:
        row = _job_row(job)
        names = ", ".join(row)
        marks = ", ".join(_placeholder(name) for name in row)
        self._execute(f"INSERT INTO jobs ({names}) VALUES ({marks})", row)
        if job.status is JobStatus.QUEUED:
            self._notify()

    def _notify(self) -> None:
        # Delivered when (and only if) the transaction commits.
        self._execute(f"NOTIFY {CHANNEL}")

    def get(self, job_id: str) -> Job | None:
        if self.locking:
            owner = self._one("SELECT account_id FROM jobs WHERE id = %s", (job_id,))
            if owner is None:
                return None
            self._lock_accounts([owner["account_id"]])
        row = self._one(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = %s{self._for_update}", (job_id,)
        )
        return None if row is None else _job(row)

    def save(self, job: Job) -> None:
        row = _job_row(job)
        assignments = ", ".join(f"{name} = {_placeholder(name)}" for name in row if name != "id")
        cursor = self._execute(f"UPDATE jobs SET {assignments} WHERE id = %(id)s", row)
        if cursor.rowcount != 1:
            raise KeyError(f"no job {job.id}")
        if job.status is JobStatus.QUEUED:
            self._notify()

    def unfinished_for(self, account_id: str) -> list[Job]:
        self._lock_accounts([account_id])
        rows = self._all(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE account_id = %s AND status = ANY(%s) "
            f"ORDER BY seq{self._for_update}",
            (account_id, _UNFINISHED),
        )
        return [_job(row) for row in rows]

    def count_unfinished(self, account_id: str) -> int:
        row = self._one(
            "SELECT count(*) AS n FROM jobs WHERE account_id = %s AND status = ANY(%s)",
            (account_id, _UNFINISHED),
        )
        return 0 if row is None else int(row["n"])

    def next_queued(self) -> Job | None:
        # The queue: the oldest queued job nobody else holds. A job another transaction
        # changed meanwhile is re-checked against `status = 'queued'` under the lock.
        skip = " FOR UPDATE SKIP LOCKED" if self.locking else ""
        row = self._one(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE status = 'queued' ORDER BY seq LIMIT 1{skip}"
        )
        return None if row is None else _job(row)

    def running_with_lease_before(self, moment: datetime) -> list[Job]:
        params = (_aware(moment),)
        where = "status = 'running' AND lease_expires_at IS NOT NULL AND lease_expires_at < %s"
        if self.locking:
            owners = self._all(f"SELECT DISTINCT account_id FROM jobs WHERE {where}", params)
            if not owners:
                return []
            self._lock_accounts([row["account_id"] for row in owners])
        rows = self._all(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY seq{self._for_update}",
            params,
        )
        return [_job(row) for row in rows]

    def results_expiring_before(self, moment: datetime) -> list[Job]:
        rows = self._all(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE result_key IS NOT NULL "
            f"AND result_expires_at < %s ORDER BY result_expires_at, seq{self._for_update}",
            (_aware(moment),),
        )
        return [_job(row) for row in rows]

    def count_queued(self) -> int:
        row = self._one("SELECT count(*) AS n FROM jobs WHERE status = 'queued'")
        return 0 if row is None else int(row["n"])


class PostgresIdempotency(_Repository):
    def get(self, account_id: str, key: str) -> IdempotencyRecord | None:
        # In a write unit of work the account lock comes first: a second submission with
        # the same key waits here until the first commits, then finds its record.
        self._lock_accounts([account_id])
        row = self._one(
            "SELECT * FROM idempotency_keys WHERE account_id = %s AND key = %s",
            (account_id, key),
        )
        return None if row is None else _record(row)

    def put(self, record: IdempotencyRecord) -> None:
        self._execute(
            "INSERT INTO idempotency_keys "
            "(account_id, key, fingerprint, job_id, created_at, expires_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, "
            "job_id = excluded.job_id, created_at = excluded.created_at, "
            "expires_at = excluded.expires_at",
            (
                record.account_id,
                record.key,
                record.fingerprint,
                record.job_id,
                _aware(record.created_at),
                _aware(record.expires_at),
            ),
        )

    def purge_expired(self, now: datetime) -> int:
        cursor = self._execute(
            "DELETE FROM idempotency_keys WHERE expires_at <= %s", (_aware(now),)
        )
        return int(cursor.rowcount)


# -- unit of work --


class PostgresUnitOfWork:
    """The `UnitOfWork` port: one PostgreSQL transaction over every repository.

    A writer is `READ COMMITTED` with row locks (see the module notes); a reader is a
    `REPEATABLE READ READ ONLY` snapshot whose `commit()` does nothing. Each unit of work
    borrows a pooled connection for its lifetime. Leaving without `commit()` rolls back.
    """

    def __init__(self, pool: _Pool, *, read_only: bool = False) -> None:
        self._pool = pool
        self.read_only = read_only
        self._conn: psycopg.Connection[dict[str, Any]] | None = None
        self._open = False

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
        locking = not self.read_only
        self.accounts: AccountRepository = PostgresAccounts(conn, locking=locking)
        self.keys: KeyRepository = PostgresKeys(conn, locking=locking)
        self.jobs: JobRepository = PostgresJobs(conn, locking=locking)
        self.idempotency: IdempotencyRepository = PostgresIdempotency(conn, locking=locking)
        self._open = True
        return self

    def commit(self) -> None:
        if not self._open or self._conn is None:
            raise RuntimeError("commit() outside the unit of work")
        if self.read_only:
            return
        try:
            with _busy_on_contention("the database stayed locked"):
                self._conn.execute("COMMIT")
        finally:
            self._open = False

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


# -- rate limiter --


class PostgresViews:
    """The `ReadViews` port: each read is one autocommit statement (its own snapshot)."""

    _JOB_BY_KEY = job_by_key_sql("%s")
    _ACCOUNT_BY_KEY = account_by_key_sql("%s")

    def __init__(self, pool: _Pool) -> None:
        self._pool = pool

    def job_by_key(self, key_hash: str, job_id: str) -> JobByKey | None:
        with self._pool.connection() as conn, _busy_on_contention("reading"):
            cursor = conn.cursor(row_factory=tuple_row)
            row = cursor.execute(self._JOB_BY_KEY, (job_id, key_hash)).fetchone()
        return None if row is None else _rows.job_by_key(row)

    def account_by_key(self, key_hash: str) -> AccountByKey | None:
        with self._pool.connection() as conn, _busy_on_contention("reading"):
            cursor = conn.cursor(row_factory=tuple_row)
            row = cursor.execute(self._ACCOUNT_BY_KEY, (key_hash,)).fetchone()
        return None if row is None else _rows.account_by_key(row)


class PostgresRateLimiter:
    """Per-minute counters in the shared database: the `SharedCounter` under
    `LeasedRateLimiter` (and, used alone, an exact `RateLimiter`).

    Windows are fixed and aligned to the minute, like `SqliteRateLimiter`. An addition is
    one autocommit UPSERT; windows older than the previous minute are deleted once per
    minute per process.
    """

    def __init__(self, pool: _Pool) -> None:
        self._pool = pool
        self._swept_window = 0

    def hit(self, bucket: str, limit: int, now: datetime) -> RateDecision:
        """Count one request (exactly; no lease)."""
        start, retry_after = minute_window(now)
        count = self.add(bucket, start, 1)
        return RateDecision(allowed=count <= limit, retry_after=retry_after)

    def add(self, bucket: str, window_start: int, amount: int) -> int:
        with self._pool.connection() as conn, _busy_on_contention("rate limiter"):
            row = conn.execute(
                "INSERT INTO rate_counts (bucket, window_start, count) VALUES (%s, %s, %s) "
                "ON CONFLICT (bucket, window_start) "
                "DO UPDATE SET count = rate_counts.count + %s RETURNING count",
                (bucket, window_start, amount, amount),
            ).fetchone()
            if window_start > self._swept_window:
                self._swept_window = window_start
                conn.execute(
                    "DELETE FROM rate_counts WHERE window_start < %s", (window_start - 60,)
                )
        assert row is not None
        return int(row["count"])

    def count(self, bucket: str, now: datetime) -> int:
        start, _ = minute_window(now)
        with self._pool.connection() as conn, _busy_on_contention("rate limiter"):
            row = conn.execute(
                "SELECT count FROM rate_counts WHERE bucket = %s AND window_start = %s",
                (bucket, start),
            ).fetchone()
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
            if version > SCHEMA_VERSION:
                raise SchemaError(
                    f"the database has schema version {version}, but this printjob knows "
                    f"only up to {SCHEMA_VERSION}; upgrade printjob"
                )
            for number in range(version, SCHEMA_VERSION):
                for statement in _MIGRATIONS[number]:
                    conn.execute(statement)  # type: ignore[arg-type]
                conn.execute(
                    "INSERT INTO printjob_schema_version (version) VALUES (%s)", (number + 1,)
                )
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

    def views(self) -> PostgresViews:
        """The `ReadViews` port: the polling reads in one statement each."""
        return PostgresViews(self._pool)

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
    def connection(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
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
    "PostgresAccounts",
    "PostgresIdempotency",
    "PostgresJobSignal",
    "PostgresJobs",
    "PostgresKeys",
    "PostgresRateLimiter",
    "PostgresStorage",
    "PostgresUnitOfWork",
    "SchemaError",
    "is_postgres_url",
    "open_storage",
]
