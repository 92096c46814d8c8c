"""The embedded storage: every repository port, the unit of work and the rate limiter on SQLite.

One database file in the data directory, shared by every server and worker process:

- WAL journal, `synchronous=NORMAL` (durable across a process crash, ~20x faster than FULL).
- A write unit of work starts with `BEGIN IMMEDIATE`, so it holds the write lock from its
  first statement: two processes can never both read a balance and both spend it. When the
  lock cannot be had within the busy timeout the unit of work raises `ServerBusy` (design
  decision 8): nothing was changed, the client may resend.
- A read unit of work is a deferred transaction on a `PRAGMA query_only` connection: one
  consistent snapshot, never the write lock, never blocked by a writer (WAL).
- One connection per thread (the HTTP layer runs sync handlers in a thread pool), opened on
  first use and re-opened after a fork.
- Times are stored as UTC text of one fixed width (`2026-01-01T00:00:00.000000Z`), so text
  order is time order; they are read back timezone-aware.

The schema, the repositories, the polling views and the counters' statements are
printjob's SQL, written once in `printjob_adapters.sql` in the `SQLITE` dialect; this
module keeps the connections, the transactions and the schema version (`user_version`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

import sqlite_utils

from printjob_adapters.rate_leases import LeasedRateLimiter, minute_window
from printjob_adapters.sql.dialect import SQLITE
from printjob_adapters.sql.rate_counts import ExactHits, RateCountSql, oldest_kept
from printjob_adapters.sql.repositories import SqlUnitOfWork
from printjob_adapters.sql.rows import format_time, parse_time
from printjob_adapters.sql.schema import SCHEMA_VERSION, SchemaError
from printjob_adapters.sql.schema import upgrade_statements as _upgrade_statements
from printjob_adapters.sql.views import SqlViews
from printjob_adapters.storage import BUSY_RETRY_AFTER, WouldWait, busy

_T = TypeVar("_T")

# -- connections --


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class WouldBlock(Exception):
    """In `nonblocking()` mode: the operation would have waited for a lock; nothing committed
    by the step that raised it. Run the operation again in a thread, where waiting is fine."""


_mode = threading.local()


def _nonblocking_now() -> bool:
    return getattr(_mode, "nonblocking", False)


@contextmanager
def nonblocking() -> Iterator[None]:
    """Within this block, on this thread, storage calls never wait for a lock.

    For the API's event loop: it may run a quick read (and the rate limiter's short write)
    itself instead of handing it to a thread, and falls back to a thread on `WouldBlock`
    (or any `sqlite3.OperationalError`). Connections of this mode have a busy timeout of 0.
    """
    before = _nonblocking_now()
    _mode.nonblocking = True
    try:
        yield
    finally:
        _mode.nonblocking = before


def _busy_or_would_block(what: str) -> Exception:
    return WouldBlock(what) if _nonblocking_now() else busy(what)


def _acquire(lock: threading.RLock, timeout: float, what: str) -> None:
    acquired = lock.acquire(blocking=False) if _nonblocking_now() else lock.acquire(timeout=timeout)
    if not acquired:
        raise _busy_or_would_block(what)


#: Connections inherited across a fork: never used and never closed in the child (closing
#: them there could disturb the parent's locks), only kept from being garbage collected.
_INHERITED: list[sqlite_utils.Database] = []


class _Connections:
    """One sqlite-utils `Database` per thread (and per process: re-opened after a fork).

    Only the thread-local holds a connection strongly, so a thread that ends (thread pools
    retire idle workers) closes its connection; `close_all` reaches the live ones through
    a weak set.
    """

    def __init__(self, path: Path, busy_timeout: float, *, query_only: bool = False) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.query_only = query_only
        self._local = threading.local()
        self._open_dbs: weakref.WeakSet[sqlite_utils.Database] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._generation = 0

    def get(self) -> sqlite_utils.Database:
        local = self._local
        # A thread in `nonblocking()` mode uses a second connection that never waits.
        slot = "nb" if _nonblocking_now() else "db"
        db: sqlite_utils.Database | None = getattr(local, slot, None)
        if db is not None and getattr(local, slot + "_pid") != os.getpid():
            _INHERITED.append(db)
            db = None
        if db is None or getattr(local, slot + "_generation") != self._generation:
            db = self._open(0.0 if slot == "nb" else self.busy_timeout)
            setattr(local, slot, db)
            setattr(local, slot + "_pid", os.getpid())
            setattr(local, slot + "_generation", self._generation)
        return db

    def _open(self, busy_timeout: float) -> sqlite_utils.Database:
        # isolation_level=None: no implicit BEGIN; every transaction is opened explicitly.
        conn = sqlite3.connect(
            self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        if self.query_only:
            conn.execute("PRAGMA query_only = 1")
        db = sqlite_utils.Database(conn, execute_plugins=False)
        # A connection that is garbage collected without close() keeps its file open, so
        # close it explicitly when its thread ends and drops the Database (in this process).
        weakref.finalize(db, _close_in, conn, os.getpid())
        with self._lock:
            self._open_dbs.add(db)
        return db

    def close_all(self) -> None:
        """Close every connection this object opened (at shutdown, or in tests)."""
        with self._lock:
            dbs = list(self._open_dbs)
            self._open_dbs = weakref.WeakSet()
            self._generation += 1
        for db in dbs:
            db.conn.close()


def _close_in(conn: sqlite3.Connection, pid: int) -> None:
    if os.getpid() == pid:
        conn.close()


@contextmanager
def _write_transaction(db: sqlite_utils.Database, what: str) -> Iterator[None]:
    """`BEGIN IMMEDIATE` ... `COMMIT`, or `ServerBusy` when the lock stays taken."""
    try:
        db.conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            raise _busy_or_would_block(what) from exc
        raise
    try:
        yield
    except BaseException:
        _rollback(db)
        raise
    try:
        db.conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        _rollback(db)
        if _is_busy(exc):
            raise _busy_or_would_block(what) from exc
        raise


def _rollback(db: sqlite_utils.Database) -> None:
    if db.conn.in_transaction:
        db.conn.execute("ROLLBACK")


# -- unit of work --


class SqliteUnitOfWork(SqlUnitOfWork):
    """The `UnitOfWork` port: one SQLite transaction over every repository.

    A writer (`read_only=False`) begins with `BEGIN IMMEDIATE`; a reader takes a deferred
    snapshot on a connection opened with `PRAGMA query_only`, so it can never take the
    write lock, and its `commit()` does nothing. Leaving without `commit()` rolls back.
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        *,
        read_only: bool = False,
        write_lock: threading.RLock | None = None,
        lock_timeout: float = 5.0,
    ) -> None:
        super().__init__(SQLITE, read_only=read_only)
        self.db = db
        self._lock_timeout = lock_timeout
        #: This process's writers queue here rather than in SQLite's busy handler.
        self._write_lock = None if read_only else write_lock
        self._locked = False
        # Statements go to the connection itself: transactions here are always explicit,
        # and sqlite-utils' `execute` re-parses every statement to manage its own
        # (a third of a poll's database time).
        self._attach(db.conn)

    def __enter__(self) -> Self:
        if self.db.conn.in_transaction:
            raise RuntimeError(
                "a unit of work is already open on this thread; units of work do not nest"
            )
        self._lock()
        try:
            self.db.conn.execute("BEGIN DEFERRED" if self.read_only else "BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            _rollback(self.db)
            self._unlock()
            if _is_busy(exc):
                raise _busy_or_would_block("the database stayed locked") from exc
            raise
        except BaseException:
            self._unlock()
            raise
        self._open = True
        return self

    def _lock(self) -> None:
        if self._write_lock is not None:
            _acquire(self._write_lock, self._lock_timeout, "the database stayed locked")
            self._locked = True

    def _unlock(self) -> None:
        if self._locked and self._write_lock is not None:
            self._locked = False
            self._write_lock.release()

    def _commit(self) -> None:
        try:
            self.db.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise _busy_or_would_block("the database stayed locked") from exc
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._open = False
        try:
            _rollback(self.db)
        finally:
            self._unlock()


# -- views --


def _views(connections: _Connections) -> SqlViews:
    """The `ReadViews` port on a read-only connection of the calling thread."""

    def fetch_one(sql: str, params: tuple[str, ...]) -> sqlite3.Row | None:
        try:
            row: sqlite3.Row | None = connections.get().conn.execute(sql, params).fetchone()
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise _busy_or_would_block("reading") from exc
            raise
        return row

    return SqlViews(SQLITE, fetch_one)


# -- rate limiter --

_RATE_SQL = RateCountSql.for_dialect(SQLITE)


class SqliteRateLimiter(ExactHits):
    """Per-minute counters in the shared database (`printjob_adapters.sql.rate_counts`):
    the `SharedCounter` under `LeasedRateLimiter` (and, used alone, an exact
    `RateLimiter`)."""

    def __init__(
        self, connections: _Connections, write_lock: threading.RLock | None = None
    ) -> None:
        self._connections = connections
        self._swept_window = 0
        # Threads of this process take turns here: waiting in SQLite's busy handler (which
        # sleeps up to 100 ms between tries) made concurrent reads' p99 about a second.
        self._write_lock = write_lock or threading.RLock()

    def add(self, bucket: str, window_start: int, amount: int) -> int:
        db = self._connections.get()
        _acquire(self._write_lock, self._connections.busy_timeout, "rate limiter")
        try:
            return self._add(db, bucket, window_start, amount)
        finally:
            self._write_lock.release()

    def _add(self, db: sqlite_utils.Database, bucket: str, start: int, amount: int) -> int:
        try:
            row = db.conn.execute(_RATE_SQL.add, (bucket, start, amount, amount)).fetchone()
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise _busy_or_would_block("rate limiter") from exc
            raise
        if start > self._swept_window:
            self._swept_window = start
            with contextlib.suppress(sqlite3.OperationalError):  # tidying only; next minute
                db.conn.execute(_RATE_SQL.sweep, (oldest_kept(start),))
        return int(row[0])

    def count(self, bucket: str, now: datetime) -> int:
        start, _ = minute_window(now)
        row = self._connections.get().conn.execute(_RATE_SQL.count, (bucket, start)).fetchone()
        return 0 if row is None else int(row[0])


# -- the storage as a whole --


class SqliteImmediateReads:
    """The `ImmediateReads` ability: a read in `nonblocking()` mode, `WouldWait` on a lock."""

    def attempt(self, read: Callable[[], _T]) -> _T:
        try:
            with nonblocking():
                return read()
        except (WouldBlock, sqlite3.OperationalError) as exc:
            raise WouldWait(str(exc)) from exc


class SqliteStorage:
    """The database file: schema, per-thread connections, unit-of-work factories."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> None:
        self.path = Path(path).absolute()
        self.busy_timeout = busy_timeout
        self._connections = _Connections(self.path, busy_timeout)
        # Readers have read-only connections of their own (so a read may happen while the
        # same thread has a write open), and so has the rate limiter.
        self._reader_connections = _Connections(self.path, busy_timeout, query_only=True)
        self._limiter_connections = _Connections(self.path, busy_timeout)
        #: One writer at a time per process (SQLite allows one per database anyway): the
        #: others wait on this lock, woken at once, instead of polling in SQLite's busy
        #: handler. Writers in other processes still meet at SQLite's lock.
        self._write_lock = threading.RLock()

    def migrate(self) -> int:
        """Create or upgrade the schema (idempotent); returns the schema version."""
        if not self.path.exists():
            # Created 0600 here; SQLite gives its -wal and -shm files the same mode.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            os.close(fd)
        db = self._connections.get()
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise RuntimeError(f"cannot put {self.path} in WAL mode (got {mode})")
        with _write_transaction(db, "migrating the schema"):
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            for number, statements in _upgrade_statements(SQLITE, version, str(self.path)):
                for statement in statements:
                    db.conn.execute(statement)
                db.conn.execute(f"PRAGMA user_version = {number}")
        return SCHEMA_VERSION

    def schema_version(self) -> int:
        return int(self._connections.get().execute("PRAGMA user_version").fetchone()[0])

    def unit_of_work(self) -> SqliteUnitOfWork:
        """A write unit of work (`BEGIN IMMEDIATE`): the `Ports.uow` factory."""
        return SqliteUnitOfWork(
            self._connections.get(), write_lock=self._write_lock, lock_timeout=self.busy_timeout
        )

    def reader(self) -> SqliteUnitOfWork:
        """A read-only unit of work that never takes the write lock: the `Ports.reader`."""
        return SqliteUnitOfWork(self._reader_connections.get(), read_only=True)

    def immediate_reads(self) -> SqliteImmediateReads:
        """Reads on the event loop that never wait (see the module's `nonblocking()`)."""
        return SqliteImmediateReads()

    def job_signal(self) -> None:
        """SQLite has no way to wake another process: idle workers poll."""
        return None

    def views(self) -> SqlViews:
        """The `ReadViews` port: the polling reads in one statement each."""
        return _views(self._reader_connections)

    def rate_counter(self) -> SqliteRateLimiter:
        """The shared per-minute counters, counted exactly (one write per request)."""
        return SqliteRateLimiter(self._limiter_connections, self._write_lock)

    def rate_limiter(self) -> LeasedRateLimiter:
        """The `RateLimiter` port: the shared counters, leased in blocks (`rate_leases`)."""
        return LeasedRateLimiter(self.rate_counter())

    def database(self) -> sqlite_utils.Database:
        """This thread's connection, for maintenance and tests."""
        return self._connections.get()

    def close(self) -> None:
        """Close every connection opened so far (any thread's)."""
        self._connections.close_all()
        self._reader_connections.close_all()
        self._limiter_connections.close_all()


def open_storage(path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> SqliteStorage:
    """Open the database at `path`, creating or upgrading its schema."""
    storage = SqliteStorage(path, busy_timeout=busy_timeout)
    storage.migrate()
    return storage


__all__ = [
    "BUSY_RETRY_AFTER",
    "SCHEMA_VERSION",
    "SchemaError",
    "SqliteImmediateReads",
    "SqliteRateLimiter",
    "SqliteStorage",
    "SqliteUnitOfWork",
    "WouldBlock",
    "format_time",
    "nonblocking",
    "open_storage",
    "parse_time",
]
