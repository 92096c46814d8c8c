"""POST /v1/jobs (contract 4.1): accepting an image, and the order its refusals come in.

Design decision 6 fixes which refusal a request gets when several apply, so a client
learns the most basic thing wrong first:

1. the key (401, 403, and 429 for a network sending wrong keys),
2. the per-minute limit (429 `rate_limited`): every submission counts, refused or not,
3. the request's shape and fields (400), the image (413, 422),
4. the idempotency key (422, or the first job again),
5. credits (402), then the account's unfinished jobs (429 `too_many_active_jobs`),
6. a full queue (503, decisions.md 1): it depends on the service, not the client.

The shell refuses some requests before `submit` can run (a body too large, say); it asks
`refuse` which refusal to give, and the answer is 429 for a client over its limit.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable

import attrs

from printjob_core import credits, idempotency, lifecycle
from printjob_core.errors import (
    AccountDisabled,
    ImageTooLarge,
    InternalError,
    InvalidParameter,
    ProblemError,
    RateLimited,
    ServerBusy,
    TooManyActiveJobs,
)
from printjob_core.image_rules import check_image
from printjob_core.limits import Policy, submissions_bucket, website_submissions_bucket
from printjob_core.model import Account, Job, JobChannel, JobOptions, JobStatus
from printjob_core.options import IMAGE_FIELD, check_fields, parse_idempotency_key, parse_options
from printjob_core.ports import ImageBytes, UnitOfWork
from printjob_core.services.access import Access
from printjob_core.services.common import Ports, save_hold, stored_account
from printjob_core.services.jobs import POLL_RETRY_AFTER

#: Codes in the order a submission checks for them (design decision 6, see above).
REFUSAL_ORDER = (
    "unauthenticated",
    "account_disabled",
    "rate_limited",
    "invalid_parameter",
    "image_too_large",
    "unsupported_image",
    "idempotency_key_reused",
    "insufficient_credits",
    "too_many_active_jobs",
    "server_busy",
)
#: A slot frees up when a job ends; a queued job is polled that often, so wait as long.
ACTIVE_JOBS_RETRY_AFTER = POLL_RETRY_AFTER[JobStatus.QUEUED]
QUEUE_FULL_RETRY_AFTER = 30


@attrs.frozen
class Submission:
    """A submission's outcome: the job, and whether an earlier request made it."""

    job: Job
    replayed: bool


def body_too_large(policy: Policy, size: int | None = None) -> ImageTooLarge:
    """The refusal of a request body over `max_upload_bytes` (`size` when it was declared)."""
    limit = policy.max_upload_bytes
    what = f"{size:,} bytes" if size is not None else f"over {limit:,} bytes"
    return ImageTooLarge(
        f"The request is {what}; at most {limit:,} bytes (30 MB) are accepted. "
        "Send a smaller image.",
        param=IMAGE_FIELD,
    )


def declared_length_refusal(declared: str | None, policy: Policy) -> ProblemError | None:
    """What a submission's `Content-Length` alone refuses it for, before any body is read:
    not a number (400), or over `max_upload_bytes` (413)."""
    if declared is None:
        return None
    if not declared.isdigit():
        return InvalidParameter("Content-Length is not a number.", param=IMAGE_FIELD)
    if int(declared) > policy.max_upload_bytes:
        return body_too_large(policy, int(declared))
    return None


class Submissions:
    """Accepting images for conversion."""

    def __init__(self, ports: Ports, access: Access) -> None:
        self.ports = ports
        self.policy = ports.policy
        self.access = access

    def refuse(self, account: Account, error: ProblemError) -> ProblemError:
        """The refusal a submission gets for `error` found before `submit` ran.

        It still counts as a submission, and a client over the per-minute limit gets 429
        first, since that check comes before any about the request (see REFUSAL_ORDER).
        """
        try:
            self.access.count_submission(account)
        except RateLimited as limited:
            return limited
        return error

    def refuse_when_over_limit(self, account: Account) -> None:
        """429 `rate_limited`, before the body is read, for an account whose submissions
        this minute have already reached the limit: the answer would be 429 anyway (it
        comes before any check of the request), and a client past its limit must not
        make the server receive and spool 30 MB per try, or hold a connection doing so.
        """
        now = self.ports.clock.now()
        limit = self.policy.submissions_per_minute
        if self.ports.limiter.count(submissions_bucket(account.id), now) < limit:
            return
        wait = max(1, 60 - int(now.timestamp()) % 60)
        fallback = RateLimited(
            f"At most {limit} submissions per minute are allowed for an account; wait "
            f"{wait} s and send it again.",
            retry_after=wait,
        )
        raise self.refuse(account, fallback)

    def refuse_website_when_over_limit(self, account_id: str) -> None:
        """429 `rate_limited`, before the upload is read, for an account whose website
        conversions this minute have already reached the limit (as `refuse_when_over_limit`
        does for the API): nothing is counted, the refusal is the one `submit_website`
        would give."""
        now = self.ports.clock.now()
        limit = self.policy.submissions_per_minute
        if self.ports.limiter.count(website_submissions_bucket(account_id), now) < limit:
            return
        wait = max(1, 60 - int(now.timestamp()) % 60)
        raise RateLimited(
            f"At most {limit} conversions per minute are allowed for an account; wait "
            f"{wait} s and send it again.",
            retry_after=wait,
        )

    def abandoned(self, account: Account) -> None:
        """An upload cut off before its body was whole (the client went away, or was too
        slow and the server closed its connection) still counts as a submission: else a
        client could hold connections and uploads open for free, past its limit."""
        # Over the limit already: nothing more to count, and no one left to answer.
        with contextlib.suppress(RateLimited):
            self.access.count_submission(account)

    def submit(
        self,
        account: Account,
        fields: Iterable[tuple[str, str]],
        image: ImageBytes | None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> Submission:
        """Accept an image for conversion, checks in the order of REFUSAL_ORDER.

        `request_id` (the request's `X-Request-Id`) is kept with the job for the logs.
        `image` may be a view of the shell's spool file: it is read in place (checked,
        hashed) and copied only into the blob store, once it has passed the checks."""
        self.access.count_submission(account)
        options = parse_options(check_fields(fields))
        key = parse_idempotency_key(idempotency_key)
        if image is None:
            raise InvalidParameter(
                "image is required: send the picture as a multipart file part named image.",
                param=IMAGE_FIELD,
            )
        self._check_upload(image)
        now = self.ports.clock.now()
        # The image's digest serves only to tell a replay from a reused key: without a key
        # a 30 MB upload is not hashed at all.
        key_fingerprint = ""
        if key is not None:
            with self.ports.reader() as uow:
                seen = uow.idempotency.get(account.id, key)
            if seen is not None:
                # Likely a retry: hashed first, so that a replay needs neither a blob
                # write nor the write lock.
                digest = hashlib.sha256(image).hexdigest()
                key_fingerprint = idempotency.fingerprint(account.id, options, digest)
                with self.ports.reader() as uow:
                    replay = self._replay(uow, account.id, key, key_fingerprint)
                if replay is not None:
                    return replay

        job_id = self.ports.ids.job_id()
        image_key = f"uploads/{job_id}"
        if key is not None and not key_fingerprint:
            # A new key: the digest is made while the blob is written (`put_with_digest`);
            # the write transaction below checks for a replay again before anything else.
            digest = self.ports.blobs.put_with_digest(image_key, image)
            key_fingerprint = idempotency.fingerprint(account.id, options, digest)
        else:
            self.ports.blobs.put(image_key, image)
        keep_blob = False
        try:
            with self.ports.uow() as uow:
                if key is not None:
                    replay = self._replay(uow, account.id, key, key_fingerprint)
                    if replay is not None:
                        return replay
                current = stored_account(uow, account.id)
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
                self._check_queue(uow, "send the same request again with the same Idempotency-Key")
                job = lifecycle.submitted(job_id, current.id, options, now, image_key)
                if request_id is not None:
                    job = attrs.evolve(job, request_id=request_id)
                uow.jobs.add(job)
                save_hold(uow, held, job, self.policy.job_cost)
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

    def submit_website(self, account_id: str, options: JobOptions, image: bytes) -> Job:
        """Accept an image from the website: the API's image rules, blob store and queue,
        but no credit hold and no idempotency key. Website jobs have their own per-minute
        bucket and their own cap of unfinished jobs, both of the API's size, so the
        website and the API never use up each other's allowance."""
        self.access.count(
            website_submissions_bucket(account_id),
            self.policy.submissions_per_minute,
            "conversions",
        )
        self._check_upload(image)
        now = self.ports.clock.now()
        job_id = self.ports.ids.job_id()
        image_key = f"uploads/{job_id}"
        self.ports.blobs.put(image_key, image)
        keep_blob = False
        try:
            with self.ports.uow() as uow:
                current = stored_account(uow, account_id)
                if current.disabled:
                    raise AccountDisabled("This account is disabled; contact the operator.")
                active = uow.jobs.count_unfinished(current.id, JobChannel.WEBSITE)
                if active >= current.active_jobs_max:
                    raise TooManyActiveJobs(
                        f"You already have {active} conversions under way, the most at once "
                        f"({current.active_jobs_max}). Wait for one to finish.",
                        retry_after=ACTIVE_JOBS_RETRY_AFTER,
                    )
                self._check_queue(uow, "try again in a little while")
                job = lifecycle.submitted(
                    job_id, current.id, options, now, image_key, JobChannel.WEBSITE
                )
                uow.jobs.add(job)
                uow.commit()
                keep_blob = True
        finally:
            if not keep_blob:
                self.ports.blobs.delete(image_key)
        return job

    def _check_upload(self, image: ImageBytes) -> None:
        """The upload's size in bytes, then its header (pixels, sides, format)."""
        if len(image) > self.policy.max_upload_bytes:
            raise ImageTooLarge(
                f"The upload is {len(image):,} bytes; at most {self.policy.max_upload_bytes:,} "
                "bytes (30 MB) are accepted.",
                param=IMAGE_FIELD,
            )
        check_image(self.ports.probe.probe(image), self.policy)

    def _check_queue(self, uow: UnitOfWork, advice: str) -> None:
        if uow.jobs.count_queued() >= self.policy.max_queue_depth:
            raise ServerBusy(
                f"The queue is full; wait and {advice}.", retry_after=QUEUE_FULL_RETRY_AFTER
            )

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


__all__ = [
    "ACTIVE_JOBS_RETRY_AFTER",
    "REFUSAL_ORDER",
    "Submission",
    "Submissions",
    "body_too_large",
    "check_image",
    "declared_length_refusal",
]
