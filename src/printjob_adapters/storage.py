"""What a process needs of a storage adapter (SQLite or PostgreSQL), its optional
abilities included, as typed ports.

The core's ports (`printjob_core.ports`) are what the rules need; these are what the
composition root, the runner and the HTTP shell need besides. An ability one database has
and the other lacks is a method that returns the ability or None, never an attribute to
probe for:

* `immediate_reads()`: SQLite can run a poll's read on the event loop itself, because it
  can promise never to wait for a lock there; PostgreSQL cannot (None).
* `job_signal()`: PostgreSQL wakes idle workers with `NOTIFY`; SQLite has no such call
  (None), so its workers poll.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from printjob_core.errors import ServerBusy
from printjob_core.ports import RateLimiter, ReadViews, UnitOfWork

T = TypeVar("T")

#: Seconds a client is told to wait when the database stayed locked.
BUSY_RETRY_AFTER = 2


class StorageBusy(ServerBusy):
    """503 `server_busy` from storage, keeping what it gave up on (`what`): a client is
    told only to resend, but an operator command says whether the database was locked
    or could not be reached at all."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"The service is busy ({what}); nothing was changed. Wait and send the same "
            "request again with the same Idempotency-Key.",
            retry_after=BUSY_RETRY_AFTER,
        )
        self.what = what


def busy(what: str) -> StorageBusy:
    """503 `server_busy` (design decision 8) for a storage call that gave up waiting on
    `what`: the transaction changed nothing, so resending the request is safe."""
    return StorageBusy(what)


class WouldWait(Exception):
    """An immediate read would have had to wait for a lock; nothing was changed.

    The caller runs the same read again where waiting is fine (a worker thread).
    """


class ImmediateReads(Protocol):
    """Runs a storage read on the calling thread with the promise never to wait."""

    def attempt(self, read: Callable[[], T]) -> T:
        """`read()`, run so that no storage call in it waits; `WouldWait` instead."""
        ...


class JobSignal(Protocol):
    """A wake-up call for idle workers when a job may have been queued."""

    def wait(self, timeout: float) -> bool:
        """Block until a job may have been queued (True) or `timeout` passed (False)."""
        ...

    def close(self) -> None: ...


class Storage(Protocol):
    """A database holding accounts, keys, jobs, idempotency records and rate counters."""

    def migrate(self) -> int:
        """Create or upgrade the schema (idempotent); the schema version."""
        ...

    def schema_version(self) -> int: ...

    def unit_of_work(self) -> UnitOfWork:
        """A write unit of work: the core's `Ports.uow` factory."""
        ...

    def reader(self) -> UnitOfWork:
        """A read-only unit of work that never takes the write lock: `Ports.reader`."""
        ...

    def rate_limiter(self) -> RateLimiter: ...

    def views(self) -> ReadViews: ...

    def immediate_reads(self) -> ImmediateReads | None:
        """The ability to read on the event loop without waiting, where the database has it."""
        ...

    def job_signal(self) -> JobSignal | None:
        """A new wake-up call for idle workers, where the database can send one."""
        ...

    def close(self) -> None:
        """Close the connections this process opened."""
        ...


__all__ = [
    "BUSY_RETRY_AFTER",
    "ImmediateReads",
    "JobSignal",
    "Storage",
    "WouldWait",
    "busy",
]
