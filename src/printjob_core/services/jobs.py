"""A client's jobs and account once submitted: polling, cancel, download (contract 4.2-4.5).

The two polling reads (`job_for_key`, `account_for_key`) are what the server answers
most; each reads the key, its account and the answer in one read of storage.
"""

from __future__ import annotations

from collections.abc import Callable

from printjob_core.errors import ResultExpired, ResultNotReady
from printjob_core.model import Account, Job, JobStatus
from printjob_core.ports import BlobReader, JobByKey
from printjob_core.services.access import Access
from printjob_core.services.common import (
    JOB_ID,
    Ports,
    api_job,
    cancel_job,
    job_not_found,
)
from printjob_core.shapes import AccountView, account_view

#: Seconds a client should wait before polling an unfinished job again (contract section 3).
POLL_RETRY_AFTER = {JobStatus.QUEUED: 5, JobStatus.RUNNING: 3}


def poll_retry_after(job: Job) -> int | None:
    """The `Retry-After` of an answer carrying `job`: None once the job is final."""
    return POLL_RETRY_AFTER.get(job.status)


class Jobs:
    """Reading, canceling and downloading a client's jobs; reading its account."""

    def __init__(self, ports: Ports, access: Access) -> None:
        self.ports = ports
        self.policy = ports.policy
        self.access = access

    def job_for_key(self, authorization: str | None, client_address: str, job_id: str) -> Job:
        """GET /v1/jobs/{job_id}: the key's account's job, in one read of storage."""
        views = self.ports.views

        def read(token_hash: str) -> JobByKey | None:
            if JOB_ID.fullmatch(job_id):
                return views.job_by_key(token_hash, job_id)
            # A malformed id never reaches storage (PostgreSQL refuses a NUL in text, for
            # one): the key and its account are read, and the answer is 404.
            by_account = views.account_by_key(token_hash)
            return None if by_account is None else JobByKey(by_account.key, by_account.account)

        found = self.access.keyed_read(authorization, client_address, read)
        return _own_job(found.job, found.account, job_id)

    def account_for_key(self, authorization: str | None, client_address: str) -> AccountView:
        """GET /v1/account: credits and limits of the key's account, in one read of storage."""
        found = self.access.keyed_read(
            authorization, client_address, self.ports.views.account_by_key
        )
        return account_view(found.account, found.active_jobs, self.policy)

    def cancel(self, account: Account, job_id: str) -> Job:
        """Cancel a queued or running job (contract 4.3): nothing charged, hold returned."""
        self.access.count_read(account)
        return cancel_job(
            self.ports, lambda uow: _own_job(_stored_job(uow.jobs.get, job_id), account, job_id)
        )

    def result(self, account: Account, job_id: str) -> tuple[Job, bytes]:
        """The job and its file (contract 4.4), whole."""
        job, key = self._downloadable(account, job_id)
        try:
            data = self.ports.blobs.get(key)
        except KeyError:
            raise _no_longer_kept() from None
        return job, data

    def download(self, account: Account, job_id: str) -> tuple[Job, BlobReader]:
        """The job and its file (contract 4.4), open to be sent piece by piece: the
        refusals of `result`, without holding the file in memory. The caller closes it."""
        job, key = self._downloadable(account, job_id)
        try:
            return job, self.ports.blobs.open(key)
        except KeyError:
            raise _no_longer_kept() from None

    def _downloadable(self, account: Account, job_id: str) -> tuple[Job, str]:
        """The account's job and its file's key when the file can be downloaded; else the
        refusal (404, 409, 410). Counted as a read."""
        self.access.count_read(account)
        with self.ports.reader() as uow:
            job = _own_job(_stored_job(uow.jobs.get, job_id), account, job_id)
        if job.status is not JobStatus.SUCCEEDED or job.result is None:
            if job.is_final:
                reason = f"the job {job.status.value}, so no file exists"
            else:
                reason = f"the job is still {job.status.value}; poll it until it succeeds"
            raise ResultNotReady(f"No file to download: {reason}.")
        if job.result_key is None or self.ports.clock.now() > job.result.expires_at:
            raise ResultExpired(
                f"The file was deleted {self.policy.result_ttl_seconds // 3600} hours after "
                "the job ended; submit the image again to get a new one."
            )
        return job, job.result_key


def _no_longer_kept() -> ResultExpired:
    return ResultExpired("The file is no longer kept; submit the image again.")


def _stored_job(get: Callable[[str], Job | None], job_id: str) -> Job | None:
    """The stored job `job_id`; a malformed id is never looked up."""
    return get(job_id) if JOB_ID.fullmatch(job_id) else None


def _own_job(job: Job | None, account: Account, job_id: str) -> Job:
    """`job` when it is the account's API job; 404 otherwise, also for another account's
    job and for a website job (the API answers as if website jobs did not exist)."""
    job = api_job(job)
    if job is None or job.account_id != account.id:
        raise job_not_found(job_id)
    return job


__all__ = ["POLL_RETRY_AFTER", "Jobs", "poll_retry_after"]
