"""The job state machine of contract section 3, as pure functions.

Each transition takes a Job (and the time) and returns the new Job together with the
credit movement it implies, so the caller applies both in one transaction. A final
status never changes again: every function here refuses to move a final job, except
`cancel`, which answers a repeated cancel with the job unchanged (contract 4.3).
"""

from __future__ import annotations

import enum
from datetime import datetime

import attrs

from printjob_core.errors import JobNotCancelable
from printjob_core.model import (
    Job,
    JobChannel,
    JobError,
    JobErrorCode,
    JobOptions,
    JobResult,
    JobStatus,
    Phase,
)


class CreditMove(enum.Enum):
    """What a transition does to the job's held credit."""

    NONE = "none"
    CHARGE = "charge"
    RELEASE = "release"


@attrs.frozen
class Transition:
    job: Job
    credit: CreditMove = CreditMove.NONE


class IllegalTransition(Exception):
    """A transition was asked of a job in a status that does not allow it.

    Raised to the runner, never to a client: it means the job moved on meanwhile
    (canceled while running, say), and the caller drops its own change.
    """


def submitted(
    job_id: str,
    account_id: str,
    options: JobOptions,
    now: datetime,
    image_key: str,
    channel: JobChannel = JobChannel.API,
) -> Job:
    """A newly accepted job: queued; an API job's 1 credit is held by the caller."""
    return Job(
        channel=channel,
        id=job_id,
        account_id=account_id,
        status=JobStatus.QUEUED,
        phase=Phase.QUEUED,
        progress=0,
        created_at=now,
        finished_at=None,
        options=options,
        image_key=image_key,
    )


def start(job: Job, lease_until: datetime) -> Transition:
    """queued -> running: a worker took the job (attempt counted, lease given)."""
    _require(job, JobStatus.QUEUED)
    return Transition(
        attrs.evolve(
            job,
            status=JobStatus.RUNNING,
            phase=Phase.ANALYSING,
            progress=job.progress or 0,
            attempts=job.attempts + 1,
            lease_expires_at=lease_until,
        )
    )


def advance(job: Job, phase: Phase, percent: int, lease_until: datetime) -> Transition:
    """A running job reports progress; progress never goes down and the lease is renewed."""
    _require(job, JobStatus.RUNNING)
    percent = max(0, min(99, percent))
    return Transition(
        attrs.evolve(
            job,
            phase=phase,
            progress=max(job.progress or 0, percent),
            lease_expires_at=lease_until,
        )
    )


def succeed(job: Job, result: JobResult, result_key: str, now: datetime) -> Transition:
    """running -> succeeded: 1 credit charged, result kept until `result.expires_at`."""
    _require(job, JobStatus.RUNNING)
    return Transition(
        attrs.evolve(
            job,
            status=JobStatus.SUCCEEDED,
            phase=Phase.FINISHING,
            progress=100,
            finished_at=now,
            credits_charged=1 if moves_credits(job) else 0,
            result=result,
            result_key=result_key,
            image_key=None,
            lease_expires_at=None,
        ),
        _credit(job, CreditMove.CHARGE),
    )


def fail(job: Job, code: JobErrorCode, detail: str, now: datetime) -> Transition:
    """queued or running -> failed: nothing charged, hold released."""
    _require(job, JobStatus.QUEUED, JobStatus.RUNNING)
    return Transition(
        attrs.evolve(
            job,
            status=JobStatus.FAILED,
            phase=None,
            progress=None,
            finished_at=now,
            error=JobError(code=code, detail=detail),
            image_key=None,
            lease_expires_at=None,
        ),
        _credit(job, CreditMove.RELEASE),
    )


def cancel(job: Job, now: datetime) -> Transition:
    """queued or running -> canceled (hold released); canceled stays canceled; else 409."""
    if job.status is JobStatus.CANCELED:
        return Transition(job)
    if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        raise JobNotCancelable(
            f"Job {job.id} already {job.status.value}; only queued or running jobs can be canceled."
        )
    return Transition(
        attrs.evolve(
            job,
            status=JobStatus.CANCELED,
            phase=None,
            progress=None,
            finished_at=now,
            image_key=None,
            lease_expires_at=None,
        ),
        _credit(job, CreditMove.RELEASE),
    )


def requeue(job: Job) -> Transition:
    """running -> queued after its worker died; the hold stays (design decision 9)."""
    _require(job, JobStatus.RUNNING)
    return Transition(
        attrs.evolve(job, status=JobStatus.QUEUED, phase=Phase.QUEUED, lease_expires_at=None)
    )


def expire_result(job: Job) -> Job:
    """The result file was deleted; the job and its `result` stay readable (decision 10)."""
    return attrs.evolve(job, result_key=None)


def moves_credits(job: Job) -> bool:
    """Whether the job's transitions hold, charge and release credits: API jobs do,
    website jobs never (the website's downloads are counted by a quota instead)."""
    return job.channel is JobChannel.API


def _credit(job: Job, move: CreditMove) -> CreditMove:
    return move if moves_credits(job) else CreditMove.NONE


def _require(job: Job, *allowed: JobStatus) -> None:
    if job.status not in allowed:
        wanted = " or ".join(s.value for s in allowed)
        raise IllegalTransition(f"job {job.id} is {job.status.value}, not {wanted}")
