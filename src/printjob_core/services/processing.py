"""What the job runner does: claim, report, finish, and recover after a crash.

Every method is one unit of work; none raises for a job that moved on meanwhile (canceled
while running, say): it reports that and drops its change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Protocol

import attrs

from printjob_core import lifecycle
from printjob_core.model import ConversionOutput, Job, JobErrorCode, JobResult, JobStatus, Phase
from printjob_core.services.common import JOB_ID, Ports, apply_transition, drop_upload


@attrs.frozen
class Sightings:
    """Stored files an orphan sweep found unneeded, and when each was first seen so.

    A value: `due` returns the files to delete now and the sightings to keep; where they
    are kept between sweeps is a `SightingsStore`.
    """

    since: Mapping[str, datetime] = attrs.field(factory=lambda: MappingProxyType({}))

    def due(
        self, unneeded: Iterable[str], now: datetime, grace: timedelta
    ) -> tuple[list[str], Sightings]:
        """Of `unneeded`, those seen unneeded for `grace` already; the rest, remembered."""
        seen = {key: self.since.get(key, now) for key in unneeded}
        due = [key for key, first in seen.items() if now - first >= grace]
        for key in due:
            del seen[key]
        return due, Sightings(MappingProxyType(seen))


class SightingsStore(Protocol):
    """Where the orphan sweep keeps its `Sightings` from one call to the next."""

    def load(self) -> Sightings: ...

    def store(self, sightings: Sightings) -> None: ...


class MemorySightings:
    """Sightings kept in this process: a restarted process starts looking again, which
    only delays a deletion by one lease."""

    def __init__(self) -> None:
        self._sightings = Sightings()

    def load(self) -> Sightings:
        return self._sightings

    def store(self, sightings: Sightings) -> None:
        self._sightings = sightings


@attrs.frozen
class Claim:
    """A job a worker took, with the attempt number that fences its later writes."""

    job: Job
    attempt: int


class JobProcessing:
    """What the job runner does: claim, report, finish, and recover after a crash."""

    def __init__(self, ports: Ports, sightings: SightingsStore | None = None) -> None:
        self.ports = ports
        self.policy = ports.policy
        self.sightings: SightingsStore = MemorySightings() if sightings is None else sightings

    def claim(self) -> Claim | None:
        """Take the next queued job in fair order (`JobRepository.next_queued`): queued ->
        running, under a lease."""
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            job = uow.jobs.next_queued()
            if job is None:
                return None
            transition = lifecycle.start(job, now + self.policy.lease)
            apply_transition(uow, transition)
            uow.commit()
        return Claim(transition.job, transition.job.attempts)

    def image(self, claim: Claim) -> bytes:
        if claim.job.image_key is None:
            raise KeyError(claim.job.id)
        return self.ports.blobs.get(claim.job.image_key)

    def report(self, claim: Claim, phase: Phase, percent: int) -> bool:
        """Record progress and renew the lease; False when the job should stop (canceled)."""
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            job = uow.jobs.get(claim.job.id)
            if job is None or not _still_ours(job, claim):
                return False
            apply_transition(uow, lifecycle.advance(job, phase, percent, now + self.policy.lease))
            uow.commit()
        return True

    def still_running(self, claim: Claim) -> bool:
        """Whether the job is still this worker's to finish (a cheap read for cancel checks)."""
        with self.ports.reader() as uow:
            job = uow.jobs.get(claim.job.id)
        return job is not None and _still_ours(job, claim)

    def succeed(self, claim: Claim, output: ConversionOutput) -> Job | None:
        """Store the file and charge 1 credit; None when the job moved on meanwhile."""
        job_id = claim.job.id
        options = claim.job.options
        # The attempt in the key keeps a late, superseded worker from overwriting (and then
        # deleting) the file of the attempt that actually succeeded.
        result_key = f"results/{job_id}-{claim.attempt}.{options.format.value}"
        if not self.still_running(claim):
            return None
        self.ports.blobs.put(result_key, output.data)
        now = self.ports.clock.now()
        result = JobResult(
            format=options.format,
            width=output.width,
            height=output.height,
            bytes=len(output.data),
            colors=output.colors,
            background_removed=output.background_removed,
            expires_at=now + self.policy.result_ttl,
        )
        finished: Job | None = None
        try:
            with self.ports.uow() as uow:
                job = uow.jobs.get(job_id)
                if job is None or not _still_ours(job, claim):
                    return None
                transition = lifecycle.succeed(job, result, result_key, now)
                apply_transition(uow, transition)
                uow.commit()
                finished = transition.job
        finally:
            if finished is None:
                self._discard_result(job_id, result_key)
        drop_upload(self.ports.blobs, claim.job, finished)
        return finished

    def _discard_result(self, job_id: str, result_key: str) -> None:
        """Delete a file this call wrote, unless the stored job already points at it."""
        with self.ports.reader() as uow:
            job = uow.jobs.get(job_id)
        if job is None or job.result_key != result_key:
            self.ports.blobs.delete(result_key)

    def fail(
        self, claim: Claim, detail: str, code: JobErrorCode = JobErrorCode.PROCESSING_FAILED
    ) -> Job | None:
        """The image could not be turned into a file: failed, hold released."""
        with self.ports.uow() as uow:
            job = uow.jobs.get(claim.job.id)
            if job is None or not _still_ours(job, claim):
                return None
            transition = lifecycle.fail(job, code, detail, self.ports.clock.now())
            apply_transition(uow, transition)
            uow.commit()
        drop_upload(self.ports.blobs, claim.job, transition.job)
        return transition.job

    def release(self, claim: Claim) -> Job | None:
        """Hand a job this worker is stopping in the middle of back to the queue.

        Used on an orderly shutdown: the job is queued again at once (its hold stays, the
        attempt still counts) instead of waiting for its lease to run out. None when the
        job is no longer this worker's.
        """
        with self.ports.uow() as uow:
            job = uow.jobs.get(claim.job.id)
            if job is None or not _still_ours(job, claim):
                return None
            transition = lifecycle.requeue(job)
            apply_transition(uow, transition)
            uow.commit()
        return transition.job

    def recover(self) -> list[Job]:
        """Requeue or fail the jobs of dead workers (design decision 9).

        A running job whose lease has passed is queued again when its image is still
        stored and it has been started fewer than `max_attempts` times; otherwise it fails
        with `interrupted` and its hold returns.
        """
        now = self.ports.clock.now()
        changed: list[tuple[Job, Job]] = []
        with self.ports.uow() as uow:
            for job in uow.jobs.running_with_lease_before(now):
                can_rerun = (
                    job.attempts < self.policy.max_attempts
                    and job.image_key is not None
                    and self.ports.blobs.exists(job.image_key)
                )
                if can_rerun:
                    transition = lifecycle.requeue(job)
                else:
                    transition = lifecycle.fail(
                        job,
                        JobErrorCode.INTERRUPTED,
                        "A server restart stopped this job and it could not run again; "
                        "nothing was charged. Submit the image again.",
                        now,
                    )
                apply_transition(uow, transition)
                changed.append((job, transition.job))
            uow.commit()
        for before, after in changed:
            drop_upload(self.ports.blobs, before, after)
        return [after for _, after in changed]

    def sweep_orphans(self) -> int:
        """Delete stored files no job needs any more; the number deleted.

        A crash can leave them: an image stored by a submission whose transaction never
        committed, the image of a job that ended just before its deletion, a result written
        by a worker killed before it recorded success. The image of a job that no longer
        runs must not be kept (contract section 1, design decision 10). A submission stores
        the image, and a worker the result, just before the transaction that records it, so
        a file is deleted only once it has been seen unneeded for a whole lease; calls every
        few seconds from the job runner are expected; what was seen when is kept in the
        `SightingsStore` the service was given.
        """
        now = self.ports.clock.now()
        keys = [*self.ports.blobs.keys("uploads/"), *self.ports.blobs.keys("results/")]
        unneeded: set[str] = set()
        with self.ports.reader() as uow:
            for key in keys:
                match = JOB_ID.search(key)
                if match is None:
                    continue  # not a name this service writes: leave it alone
                job = uow.jobs.get(match.group(0))
                if job is None:
                    unneeded.add(key)
                elif key.startswith("uploads/"):
                    if job.is_final or job.image_key != key:
                        unneeded.add(key)
                elif job.result_key != key:
                    unneeded.add(key)
        due, kept = self.sightings.load().due(unneeded, now, self.policy.lease)
        self.sightings.store(kept)
        for key in due:
            self.ports.blobs.delete(key)
        return len(due)

    def sweep(self) -> int:
        """Delete result files past their expiry and forget expired idempotency keys."""
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            expired = uow.jobs.results_expiring_before(now)
            for job in expired:
                uow.jobs.save(lifecycle.expire_result(job))
            uow.idempotency.purge_expired(now)
            uow.commit()
        for job in expired:
            if job.result_key is not None:
                self.ports.blobs.delete(job.result_key)
        return len(expired)


def _still_ours(job: Job, claim: Claim) -> bool:
    return job.status is JobStatus.RUNNING and job.attempts == claim.attempt


__all__ = ["Claim", "JobProcessing", "MemorySightings", "Sightings", "SightingsStore"]
