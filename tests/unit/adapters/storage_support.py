"""Values and helpers the storage tests share: accounts, keys, jobs and records of fixed
shapes, and a thread that holds a write unit of work open."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import attrs

from printjob_core.model import (
    Account,
    ApiKey,
    IdempotencyRecord,
    Job,
    JobOptions,
    JobResult,
    JobStatus,
    OutputFormat,
    Phase,
)
from printjob_core.ports import RateLimiter, ReadViews, UnitOfWork

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


class Storage(Protocol):
    """What the shared storage tests use: the fake's stand-in, SQLite or PostgreSQL."""

    def unit_of_work(self) -> UnitOfWork: ...

    def reader(self) -> UnitOfWork: ...

    def views(self) -> ReadViews: ...

    def rate_limiter(self) -> RateLimiter: ...

    def rate_counter(self) -> RateLimiter:
        """The shared counter counted exactly, without leases."""
        ...


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


def succeeded(n: int, expires: datetime, result_key: str | None) -> Job:
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


def api_key(n: int, account_id: str, minute: int = 0) -> ApiKey:
    return ApiKey(
        id=f"key_{n:016x}",
        account_id=account_id,
        key_hash=f"{n:064x}",
        hint="pjk1_abcd…",
        created_at=T0 + timedelta(minutes=minute),
    )


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


def add_account(storage: Storage, acct: Account | None = None) -> Account:
    acct = acct or account()
    with storage.unit_of_work() as uow:
        uow.accounts.add(acct)
        uow.commit()
    return acct


def balance(storage: Storage, account_id: str | None = None) -> int:
    with storage.reader() as uow:
        found = uow.accounts.get(account_id or account().id)
    assert found is not None
    return found.credits_balance


class Holder(threading.Thread):
    """Holds the write lock (an open write unit of work) until told to let go."""

    def __init__(self, storage: Storage, new_balance: int = 50) -> None:
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
