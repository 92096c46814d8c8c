"""What every service shares: the ports they are wired with, and the steps of a unit of
work more than one actor takes (saving a transition, dropping an ended job's upload)."""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from printjob_core import credits, ledger, lifecycle
from printjob_core.errors import InternalError, NotFound
from printjob_core.lifecycle import CreditMove, Transition
from printjob_core.limits import Policy
from printjob_core.model import Account, Job, JobChannel, LedgerKind
from printjob_core.ports import (
    BlobStore,
    Clock,
    IdSource,
    ImageProbe,
    RateLimiter,
    ReadViews,
    UnitOfWork,
    UnitOfWorkFactory,
)
from printjob_core.views import UnitOfWorkViews

JOB_ID = re.compile(r"job_[0-9a-f]{32}")


@attrs.frozen
class Ports:
    """Everything the services need from the world, wired once by the composition root."""

    uow: UnitOfWorkFactory
    #: A unit of work for reads only: it never takes the write lock.
    reader: UnitOfWorkFactory
    clock: Clock
    ids: IdSource
    blobs: BlobStore
    limiter: RateLimiter
    probe: ImageProbe
    policy: Policy = attrs.field(factory=Policy)
    #: The one-read views of the polling path; by default answered through `reader`.
    views: ReadViews = attrs.field(
        default=attrs.Factory(lambda ports: UnitOfWorkViews(ports.reader), takes_self=True)
    )


def apply_transition(uow: UnitOfWork, transition: Transition) -> None:
    """Save a transition's job, move its credit and write the ledger entry for the move,
    all in the caller's transaction."""
    job = transition.job
    if transition.credit is not CreditMove.NONE and not lifecycle.moves_credits(job):
        raise InternalError(f"website job {job.id} would move a credit")
    uow.jobs.save(job)
    if transition.credit is CreditMove.NONE:
        return
    account = uow.accounts.get(job.account_id)
    if account is None:
        raise InternalError(f"job {job.id} belongs to missing account {job.account_id}")
    if job.finished_at is None:
        raise InternalError(f"job {job.id} moved a credit without finishing")
    if transition.credit is CreditMove.CHARGE:
        moved, kind = credits.charge(account), LedgerKind.CHARGE
    else:
        moved, kind = credits.release(account), LedgerKind.RELEASE
    uow.accounts.save(moved)
    amount = account.credits_held - moved.credits_held
    uow.ledger.add(ledger.entry(moved, kind, amount, job.finished_at, job_id=job.id))


def save_hold(uow: UnitOfWork, held: Account, job: Job, cost: int) -> None:
    """Save the account that now holds `cost` credits for the new `job`, and write the
    ledger entry for the hold, in the caller's transaction."""
    uow.accounts.save(held)
    uow.ledger.add(ledger.entry(held, LedgerKind.HOLD, cost, job.created_at, job_id=job.id))


def drop_upload(blobs: BlobStore, before: Job, after: Job | None) -> None:
    """Delete the uploaded image once its job has ended (design decision 10)."""
    if after is not None and after.is_final and before.image_key is not None:
        blobs.delete(before.image_key)


def cancel_job(ports: Ports, find: Callable[[UnitOfWork], Job]) -> Job:
    """Cancel the job `find` reads in one transaction (nothing charged, a hold returned;
    repeated, no change), then delete its upload. Both doors cancel this way."""
    with ports.uow() as uow:
        job = find(uow)
        transition = lifecycle.cancel(job, ports.clock.now())
        if transition.job is not job:
            apply_transition(uow, transition)
            uow.commit()
    drop_upload(ports.blobs, job, transition.job)
    return transition.job


def stored_account(uow: UnitOfWork, account_id: str) -> Account:
    """The account as stored now; a client's account that vanished is a server fault."""
    account = uow.accounts.get(account_id)
    if account is None:
        raise InternalError(f"account {account_id} vanished")
    return account


def job_not_found(job_id: str) -> NotFound:
    return NotFound(f"No job {job_id!r} in this account.")


def api_job(job: Job | None) -> Job | None:
    """`job` if the API may see it: website jobs do not exist under `/v1`."""
    return job if job is not None and job.channel is JobChannel.API else None


__all__ = [
    "JOB_ID",
    "Ports",
    "api_job",
    "apply_transition",
    "drop_upload",
    "job_not_found",
    "save_hold",
    "stored_account",
]
