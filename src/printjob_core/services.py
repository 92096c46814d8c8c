"""The service layer: every use case of the API, the job runner and the operator.

Each method is one unit of work over the ports, so the rules hold whatever storage is
plugged in. Client-facing methods raise `ProblemError`s with the contract's codes;
operator methods raise `OperatorError`; the runner's methods never raise for a job that
moved on meanwhile (canceled while running, say): they report it and drop their change.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TypeVar

import attrs

from printjob_core import credits, idempotency, lifecycle
from printjob_core.errors import (
    AccountDisabled,
    ImageTooLarge,
    InternalError,
    InvalidParameter,
    NotFound,
    OperatorError,
    RateLimited,
    ResultExpired,
    ResultNotReady,
    ServerBusy,
    TooManyActiveJobs,
    Unauthenticated,
    UnsupportedImage,
)
from printjob_core.keys import (
    MAX_LIVE_KEYS,
    bearer_token,
    hash_key,
    key_hint,
    looks_like_key,
    same_hash,
)
from printjob_core.lifecycle import CreditMove, IllegalTransition, Transition
from printjob_core.limits import (
    Policy,
    reads_bucket,
    submissions_bucket,
    wrong_keys_bucket,
)
from printjob_core.model import (
    Account,
    ApiKey,
    ConversionOutput,
    Job,
    JobErrorCode,
    JobResult,
    JobStatus,
    Phase,
)
from printjob_core.options import IMAGE_FIELD, check_fields, parse_idempotency_key, parse_options
from printjob_core.ports import (
    AccountByKey,
    BlobStore,
    Clock,
    IdSource,
    ImageInfo,
    ImageProbe,
    JobByKey,
    RateLimiter,
    ReadViews,
    UnitOfWork,
    UnitOfWorkFactory,
)
from printjob_core.shapes import AccountView, account_view
from printjob_core.views import UnitOfWorkViews

JOB_ID = re.compile(r"job_[0-9a-f]{32}")
#: What a keyed read found: the key and its account, with the data asked for.
_Found = TypeVar("_Found", JobByKey, AccountByKey)
ACTIVE_JOBS_CHOICES = (3, 5, 10)
#: A queued job is polled every 5 s (contract section 3), so that is when a slot may free up.
ACTIVE_JOBS_RETRY_AFTER = 5


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


@attrs.frozen
class Submission:
    """A submission's outcome: the job, and whether an earlier request made it."""

    job: Job
    replayed: bool


def check_image(info: ImageInfo, policy: Policy) -> None:
    """The image rules of contract 4.1 and section 8, from the header alone."""
    pixels = info.width * info.height
    if pixels > policy.max_upload_pixels:
        raise ImageTooLarge(
            f"The image is {info.width}x{info.height} = {pixels:,} pixels; at most "
            f"{policy.max_upload_pixels:,} pixels (3 megapixels) are accepted. Scale it down "
            "and send it again.",
            param=IMAGE_FIELD,
        )
    short, long = sorted((info.width, info.height))
    if short < policy.min_side:
        raise UnsupportedImage(
            f"The image is {info.width}x{info.height}; each side must be at least "
            f"{policy.min_side} pixels.",
            param=IMAGE_FIELD,
        )
    if long > policy.max_aspect_ratio * short:
        raise UnsupportedImage(
            f"The image is {info.width}x{info.height}; its long side may be at most "
            f"{policy.max_aspect_ratio} times its short side.",
            param=IMAGE_FIELD,
        )


class ApiService:
    """The six operations of the API, minus the OpenAPI document."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.policy = ports.policy

    # -- authentication and per-minute limits (contract section 5, section 8) --

    def authenticate(self, authorization: str | None, client_address: str) -> Account:
        """The account behind a Bearer key; 401, 403, or 429 for a network sending wrong keys."""
        token = _token(authorization)
        with self.ports.reader() as uow:
            owner = _owner(uow, token)
        return self._admit(owner, client_address)

    def _admit(self, owner: Account | None, client_address: str) -> Account:
        """Raise what a request with this key's owner gets (401, 403, 429); else the owner.

        A wrong key is counted against its network's limit (contract 5.5), so a network
        guessing keys gets 429 while requests with a valid key go on.
        """
        if owner is None:
            decision = self.ports.limiter.hit(
                wrong_keys_bucket(client_address),
                self.policy.wrong_keys_per_minute,
                self.ports.clock.now(),
            )
            if not decision.allowed:
                raise RateLimited(
                    f"More than {self.policy.wrong_keys_per_minute} wrong API keys came from "
                    f"your network this minute; wait {decision.retry_after} s. Requests with "
                    "a valid key are not affected.",
                    retry_after=decision.retry_after,
                )
            raise Unauthenticated(
                "The API key is not valid: it is mistyped, revoked, or not a printjob key.",
                key_sent=True,
            )
        if owner.disabled:
            raise AccountDisabled(
                "This account is disabled; its keys cannot be used. Contact the operator."
            )
        return owner

    def _count(self, bucket: str, limit: int, what: str) -> None:
        decision = self.ports.limiter.hit(bucket, limit, self.ports.clock.now())
        if not decision.allowed:
            raise RateLimited(
                f"At most {limit} {what} per minute are allowed for an account; wait "
                f"{decision.retry_after} s and send it again.",
                retry_after=decision.retry_after,
            )

    def count_submission(self, account: Account) -> None:
        """Count a submission against the per-minute limit; raise `RateLimited` when over.

        `submit` does this itself; the shell calls it for a request it refuses before
        `submit` can run (an oversized body, say), so a client over the limit still gets
        429 first (design decision 6).
        """
        self._count(
            submissions_bucket(account.id), self.policy.submissions_per_minute, "submissions"
        )

    def _count_read(self, account: Account) -> None:
        self._count(reads_bucket(account.id), self.policy.reads_per_minute, "requests")

    # -- POST /v1/jobs (contract 4.1) --

    def submit(
        self,
        account: Account,
        fields: Iterable[tuple[str, str]],
        image: bytes | None,
        idempotency_key: str | None = None,
    ) -> Submission:
        """Accept an image for conversion, in the order of checks of design decision 6."""
        self.count_submission(account)
        options = parse_options(check_fields(fields))
        key = parse_idempotency_key(idempotency_key)
        if image is None:
            raise InvalidParameter(
                "image is required: send the picture as a multipart file part named image.",
                param=IMAGE_FIELD,
            )
        if len(image) > self.policy.max_upload_bytes:
            raise ImageTooLarge(
                f"The upload is {len(image):,} bytes; at most {self.policy.max_upload_bytes:,} "
                "bytes (30 MB) are accepted.",
                param=IMAGE_FIELD,
            )
        check_image(self.ports.probe.probe(image), self.policy)
        digest = hashlib.sha256(image).hexdigest()
        key_fingerprint = idempotency.fingerprint(account.id, options, digest) if key else ""
        now = self.ports.clock.now()

        if key is not None:
            # Cheap path for retries: a replay needs neither a blob write nor the write lock.
            with self.ports.reader() as uow:
                replay = self._replay(uow, account.id, key, key_fingerprint)
            if replay is not None:
                return replay

        job_id = self.ports.ids.job_id()
        image_key = f"uploads/{job_id}"
        self.ports.blobs.put(image_key, image)
        keep_blob = False
        try:
            with self.ports.uow() as uow:
                if key is not None:
                    replay = self._replay(uow, account.id, key, key_fingerprint)
                    if replay is not None:
                        return replay
                current = self._account(uow, account.id)
                if current.disabled:
                    raise AccountDisabled("This account is disabled; contact the operator.")
                held = credits.hold(current, self.policy.job_cost)
                active = uow.jobs.count_unfinished(current.id)
                if active >= current.active_jobs_max:
                    raise TooManyActiveJobs(
                        f"This account already has {active} unfinished jobs, the most it may "
                        f"have at once ({current.active_jobs_max}). Wait for one to finish.",
                        retry_after=ACTIVE_JOBS_RETRY_AFTER,
                    )
                if uow.jobs.count_queued() >= self.policy.max_queue_depth:
                    raise ServerBusy(
                        "The queue is full; wait and send the same request again with the "
                        "same Idempotency-Key.",
                        retry_after=30,
                    )
                job = lifecycle.submitted(job_id, current.id, options, now, image_key)
                uow.jobs.add(job)
                uow.accounts.save(held)
                if key is not None:
                    uow.idempotency.put(
                        idempotency.remember(
                            current.id,
                            key,
                            key_fingerprint,
                            job_id,
                            now,
                            self.policy.idempotency_ttl,
                        )
                    )
                uow.commit()
                keep_blob = True
        finally:
            if not keep_blob:
                self.ports.blobs.delete(image_key)
        return Submission(job, replayed=False)

    def _replay(
        self, uow: UnitOfWork, account_id: str, key: str, key_fingerprint: str
    ) -> Submission | None:
        record = uow.idempotency.get(account_id, key)
        job_id = idempotency.replayed_job_id(record, key_fingerprint, self.ports.clock.now())
        if job_id is None:
            return None
        job = uow.jobs.get(job_id)
        if job is None:
            raise InternalError(f"idempotency record points at missing job {job_id}")
        return Submission(job, replayed=True)

    # -- the two reads clients repeat most: key, account and answer in one snapshot --

    def job_for_key(self, authorization: str | None, client_address: str, job_id: str) -> Job:
        """`authenticate` then `get_job` in one read of storage (`ReadViews.job_by_key`):
        polling is most of the API's traffic."""
        views = self.ports.views

        def read(token_hash: str) -> JobByKey | None:
            if JOB_ID.fullmatch(job_id):
                return views.job_by_key(token_hash, job_id)
            # A malformed id never reaches storage (PostgreSQL refuses a NUL in text, for
            # one): the key and its account are read, and the answer is 404.
            by_account = views.account_by_key(token_hash)
            return None if by_account is None else JobByKey(by_account.key, by_account.account)

        found = self._keyed_read(authorization, client_address, read)
        if found.job is None or found.job.account_id != found.account.id:
            raise _job_not_found(job_id)
        return found.job

    def account_for_key(self, authorization: str | None, client_address: str) -> AccountView:
        """`authenticate` then `account` in one read of storage (`ReadViews.account_by_key`)."""
        found = self._keyed_read(authorization, client_address, self.ports.views.account_by_key)
        return account_view(found.account, found.active_jobs, self.policy)

    def _keyed_read(
        self, authorization: str | None, client_address: str, read: Callable[[str], _Found | None]
    ) -> _Found:
        """`read(key_hash)` for the request's key, then what `authenticate` would raise
        for its owner (401, 403, 429), then the read counted against the account."""
        token = _token(authorization)
        token_hash = hash_key(token)
        found = read(token_hash) if looks_like_key(token) else None
        owner = None if found is None else _live_owner(found.key, found.account, token_hash)
        account = self._admit(owner, client_address)
        self._count_read(account)
        assert found is not None  # `_admit` refuses a request without an owner
        return found

    # -- GET /v1/jobs/{id}, POST /v1/jobs/{id}/cancel, GET /v1/jobs/{id}/result --

    def get_job(self, account: Account, job_id: str) -> Job:
        self._count_read(account)
        with self.ports.reader() as uow:
            return self._job(uow, account, job_id)

    def cancel(self, account: Account, job_id: str) -> Job:
        """Cancel a queued or running job (contract 4.3): nothing charged, hold returned."""
        self._count_read(account)
        with self.ports.uow() as uow:
            job = self._job(uow, account, job_id)
            transition = lifecycle.cancel(job, self.ports.clock.now())
            if transition.job is not job:
                _apply(uow, transition)
                uow.commit()
        _drop_upload(self.ports.blobs, job, transition.job)
        return transition.job

    def result(self, account: Account, job_id: str) -> tuple[Job, bytes]:
        """The job and its file (contract 4.4)."""
        self._count_read(account)
        with self.ports.reader() as uow:
            job = self._job(uow, account, job_id)
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
        try:
            data = self.ports.blobs.get(job.result_key)
        except KeyError:
            raise ResultExpired("The file is no longer kept; submit the image again.") from None
        return job, data

    def account(self, account: Account) -> AccountView:
        """Credits and limits (contract 4.5)."""
        self._count_read(account)
        with self.ports.reader() as uow:
            current = self._account(uow, account.id)
            active = uow.jobs.count_unfinished(account.id)
        return account_view(current, active, self.policy)

    def _job(self, uow: UnitOfWork, account: Account, job_id: str) -> Job:
        job = _job_of(uow, account, job_id)
        if job is None:
            raise _job_not_found(job_id)
        return job

    @staticmethod
    def _account(uow: UnitOfWork, account_id: str) -> Account:
        account = uow.accounts.get(account_id)
        if account is None:
            raise InternalError(f"account {account_id} vanished")
        return account


@attrs.frozen
class Claim:
    """A job a worker took, with the attempt number that fences its later writes."""

    job: Job
    attempt: int


class JobProcessing:
    """What the job runner does: claim, report, finish, and recover after a crash."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.policy = ports.policy
        #: Stored files found unneeded, and since when (see `sweep_orphans`).
        self._unneeded_since: dict[str, datetime] = {}

    def claim(self) -> Claim | None:
        """Take the oldest queued job: queued -> running, under a lease."""
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            job = uow.jobs.next_queued()
            if job is None:
                return None
            transition = lifecycle.start(job, now + self.policy.lease)
            _apply(uow, transition)
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
            _apply(uow, lifecycle.advance(job, phase, percent, now + self.policy.lease))
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
                _apply(uow, transition)
                uow.commit()
                finished = transition.job
        finally:
            if finished is None:
                self._discard_result(job_id, result_key)
        _drop_upload(self.ports.blobs, claim.job, finished)
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
            _apply(uow, transition)
            uow.commit()
        _drop_upload(self.ports.blobs, claim.job, transition.job)
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
            _apply(uow, transition)
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
                _apply(uow, transition)
                changed.append((job, transition.job))
            uow.commit()
        for before, after in changed:
            _drop_upload(self.ports.blobs, before, after)
        return [after for _, after in changed]

    def sweep_orphans(self) -> int:
        """Delete stored files no job needs any more; the number deleted.

        A crash can leave them: an image stored by a submission whose transaction never
        committed, the image of a job that ended just before its deletion, a result written
        by a worker killed before it recorded success. The image of a job that no longer
        runs must not be kept (contract section 1, design decision 10). A submission stores
        the image, and a worker the result, just before the transaction that records it, so
        a file is deleted only once it has been seen unneeded for a whole lease; calls every
        few seconds from one long-lived object (the job runner) are expected.
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
        seen = {key: self._unneeded_since.get(key, now) for key in unneeded}
        due = [key for key, since in seen.items() if now - since >= self.policy.lease]
        for key in due:
            self.ports.blobs.delete(key)
            del seen[key]
        self._unneeded_since = seen
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


@attrs.frozen
class AccountSummary:
    """What the operator sees of an account."""

    account: Account
    view: AccountView
    live_keys: int


class OperatorService:
    """The operator's commands: accounts, credits and keys (design.md, operator interface)."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.policy = ports.policy

    def create_account(self, credits_balance: int = 0, active_jobs_max: int = 3) -> Account:
        if credits_balance < 0:
            raise OperatorError(f"credits must be 0 or more, not {credits_balance}")
        if active_jobs_max not in ACTIVE_JOBS_CHOICES:
            raise OperatorError(f"--active-jobs-max must be 3, 5 or 10, not {active_jobs_max}")
        account = Account(
            id=self.ports.ids.account_id(),
            created_at=self.ports.clock.now(),
            credits_balance=credits_balance,
            active_jobs_max=active_jobs_max,
        )
        with self.ports.uow() as uow:
            uow.accounts.add(account)
            uow.commit()
        return account

    def show_account(self, account_id: str) -> AccountSummary:
        with self.ports.reader() as uow:
            account = _operator_account(uow, account_id)
            active = uow.jobs.count_unfinished(account_id)
            live = sum(1 for key in uow.keys.list_for(account_id) if key.is_live)
        return AccountSummary(account, account_view(account, active, self.policy), live)

    def add_credits(self, account_id: str, amount: int) -> Account:
        with self.ports.uow() as uow:
            account = credits.add(_operator_account(uow, account_id), amount)
            uow.accounts.save(account)
            uow.commit()
        return account

    def disable_account(self, account_id: str) -> list[Job]:
        """Disable the account; its unfinished jobs become canceled, nothing charged."""
        now = self.ports.clock.now()
        changed: list[tuple[Job, Job]] = []
        with self.ports.uow() as uow:
            account = _operator_account(uow, account_id)
            uow.accounts.save(attrs.evolve(account, disabled=True))
            for job in uow.jobs.unfinished_for(account_id):
                transition = lifecycle.cancel(job, now)
                _apply(uow, transition)
                changed.append((job, transition.job))
            uow.commit()
        for before, after in changed:
            _drop_upload(self.ports.blobs, before, after)
        return [after for _, after in changed]

    def enable_account(self, account_id: str) -> Account:
        with self.ports.uow() as uow:
            account = attrs.evolve(_operator_account(uow, account_id), disabled=False)
            uow.accounts.save(account)
            uow.commit()
        return account

    def create_key(self, account_id: str) -> tuple[ApiKey, str]:
        """A new key for the account; the secret is returned once and never stored."""
        secret = self.ports.ids.api_key()
        with self.ports.uow() as uow:
            _operator_account(uow, account_id)
            live = [key for key in uow.keys.list_for(account_id) if key.is_live]
            if len(live) >= MAX_LIVE_KEYS:
                raise OperatorError(
                    f"account {account_id} already has {MAX_LIVE_KEYS} live keys, the most "
                    "allowed; revoke one first"
                )
            key = ApiKey(
                id=self.ports.ids.key_id(),
                account_id=account_id,
                key_hash=hash_key(secret),
                hint=key_hint(secret),
                created_at=self.ports.clock.now(),
            )
            uow.keys.add(key)
            uow.commit()
        return key, secret

    def list_keys(self, account_id: str) -> list[ApiKey]:
        with self.ports.reader() as uow:
            _operator_account(uow, account_id)
            return uow.keys.list_for(account_id)

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key; it stops working at once. Revoking a revoked key changes nothing."""
        with self.ports.uow() as uow:
            key = uow.keys.get(key_id)
            if key is None:
                raise OperatorError(f"no key {key_id!r}")
            if key.is_live:
                key = attrs.evolve(key, revoked_at=self.ports.clock.now())
                uow.keys.save(key)
                uow.commit()
        return key


def _token(authorization: str | None) -> str:
    """The Bearer token of an Authorization header; 401 when there is none."""
    token = bearer_token(authorization)
    if token is None:
        raise Unauthenticated(
            "Send your API key as 'Authorization: Bearer <API_KEY>'.", key_sent=False
        )
    return token


def _owner(uow: UnitOfWork, token: str) -> Account | None:
    """The account of a live key, or None for a token that is no key of ours."""
    if not looks_like_key(token):
        return None
    token_hash = hash_key(token)
    key = uow.keys.find_by_hash(token_hash)
    if key is None:
        return None
    return _live_owner(key, uow.accounts.get(key.account_id), token_hash)


def _live_owner(key: ApiKey, account: Account | None, token_hash: str) -> Account | None:
    """The key's account if the key is live and its stored hash is the token's.

    Storage found the key by its hash; comparing again in constant time keeps a timing
    difference of the lookup from ever deciding who gets in.
    """
    if not key.is_live or not same_hash(key.key_hash, token_hash):
        return None
    return account


def _job_of(uow: UnitOfWork, account: Account, job_id: str) -> Job | None:
    """The account's job `job_id`; None for a malformed id or another account's job."""
    job = uow.jobs.get(job_id) if JOB_ID.fullmatch(job_id) else None
    return job if job is not None and job.account_id == account.id else None


def _job_not_found(job_id: str) -> NotFound:
    return NotFound(f"No job {job_id!r} in this account.")


def _operator_account(uow: UnitOfWork, account_id: str) -> Account:
    account = uow.accounts.get(account_id)
    if account is None:
        raise OperatorError(f"no account {account_id!r}")
    return account


def _apply(uow: UnitOfWork, transition: Transition) -> None:
    """Save a transition's job and move its credit, in the caller's transaction."""
    job = transition.job
    uow.jobs.save(job)
    if transition.credit is CreditMove.NONE:
        return
    account = uow.accounts.get(job.account_id)
    if account is None:
        raise InternalError(f"job {job.id} belongs to missing account {job.account_id}")
    move = credits.charge if transition.credit is CreditMove.CHARGE else credits.release
    uow.accounts.save(move(account))


def _still_ours(job: Job, claim: Claim) -> bool:
    return job.status is JobStatus.RUNNING and job.attempts == claim.attempt


def _drop_upload(blobs: BlobStore, before: Job, after: Job | None) -> None:
    """Delete the uploaded image once its job has ended (design decision 10)."""
    if after is not None and after.is_final and before.image_key is not None:
        blobs.delete(before.image_key)


__all__ = [
    "ApiService",
    "Claim",
    "IllegalTransition",
    "JobProcessing",
    "OperatorService",
    "Ports",
    "Submission",
    "check_image",
]
