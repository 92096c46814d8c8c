"""The core as a whole, driven by random sequences of what clients, workers and the operator do.

A Hypothesis `RuleBasedStateMachine` calls the services exactly as the HTTP shell and the
job runner would (authenticate, then submit / cancel / download; the polling reads by key,
`job_for_key` and `account_for_key`, as the server answers them; claim, report, succeed, fail;
workers dying and the service restarting; the operator disabling accounts and adding
credits; time passing) against a small model of what every job's status should be, and
checks the contract's invariants after every step (contract section 3, 1.3-1.4, 4.1 rule 3,
design decisions 9-10). Website conversions run on the same queue and workers: they never
hold, charge or release a credit nor write a ledger entry, never appear under `/v1`, have
their own cap and per-minute bucket, and their downloads are counted by the plan's quota.

The storage is a parameter: `TestCoreWithFakes` runs the machine over the in-memory fakes,
`TestCoreWithSqlite` over the real SQLite adapter and the filesystem blob store (a fresh
directory per example), `TestCoreWithPostgres` over the PostgreSQL adapter (one database
for the session, emptied before each example; fewer examples, each costs round trips).
Time and ids stay fake in all three, so leases and expiries are exact.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from printjob_core import ledger
from printjob_core.errors import (
    AccountDisabled,
    IdempotencyKeyReused,
    InsufficientCredits,
    InvalidParameter,
    JobNotCancelable,
    NotFound,
    OperatorError,
    PrintjobError,
    ProblemError,
    QuotaExhausted,
    RateLimited,
    ResultExpired,
    ResultNotReady,
    TooManyActiveJobs,
    Unauthenticated,
)
from printjob_core.fakes import (
    FakeBlobStore,
    FakeClock,
    FakeIds,
    FakeImageProbe,
    FakePasswordHasher,
    FakeRateLimiter,
    FakeStore,
    fake_image,
)
from printjob_core.model import (
    Account,
    ConversionOutput,
    Job,
    JobChannel,
    JobErrorCode,
    JobStatus,
    LedgerKind,
    Phase,
    Plan,
)
from printjob_core.quota import DAILY_DOWNLOADS, quota_day
from printjob_core.services import (
    ApiService,
    Claim,
    JobProcessing,
    OperatorService,
    Ports,
    SignedIn,
    WebsiteService,
    conversion_options,
)

LEASE = timedelta(seconds=60)
_Error = TypeVar("_Error", bound=PrintjobError)


def _set(moment: datetime | None) -> datetime:
    """A time the model's state says is set here (a succeeded job's expiry, a running
    job's lease)."""
    assert moment is not None
    return moment


RESULT_TTL = timedelta(hours=24)
IDEMPOTENCY_TTL = timedelta(hours=24)
MAX_ATTEMPTS = 3
SUBMISSIONS_PER_MINUTE = 10
READS_PER_MINUTE = 120
WRONG_KEYS_PER_MINUTE = 30
UNFINISHED = (JobStatus.QUEUED, JobStatus.RUNNING)
SUCCEEDED = JobStatus.SUCCEEDED
#: The final statuses whose hold was given back.
RELEASED = (JobStatus.FAILED, JobStatus.CANCELED)
#: The address every valid client request comes from.
CLIENT = "192.0.2.10"
#: Client addresses and the network each counts as for the wrong-key limit (decision 7).
NETWORKS = {
    "198.51.100.1": "a",
    "198.51.100.2": "b",
    "2001:db8:5::1": "c",
    "2001:db8:5::ffff": "c",
}
#: The requests a client may send: format field (None: refused as invalid) per choice.
FORMATS = ("svg", "pdf", None)
CLOCK_STEPS = (1, 20, 59, 61, 3600, 86_399, 86_400, 86_401)
INDEX = st.integers(min_value=0, max_value=50)
#: Mostly the job's own account; sometimes any account (then often another one: 404).
STRANGER = st.sampled_from([False, False, False, True])

STEP_COUNT = 50


@attrs.define
class ModelAccount:
    id: str
    secret: str
    initial: int
    active_jobs_max: int
    added: int = 0
    #: Taken back by the operator (`credits remove`).
    removed: int = 0
    disabled: bool = False
    plan: Plan = Plan.FREE
    #: Website results downloaded, and the UTC day each was first counted against.
    downloads: dict[str, object] = attrs.Factory(dict)


@attrs.define
class ModelJob:
    id: str
    account_id: str
    request: tuple[int, str]
    image_key: str
    status: JobStatus = JobStatus.QUEUED
    attempts: int = 0
    progress: int | None = 0
    lease_until: datetime | None = None
    image_kept: bool = True
    result_data: bytes | None = None
    result_key: str | None = None
    result_expires: datetime | None = None
    result_swept: bool = False
    error_code: JobErrorCode | None = None
    channel: JobChannel = JobChannel.API

    @property
    def format(self) -> str:
        return self.request[1]


@attrs.define
class ModelKey:
    request: tuple[int, str]
    job_id: str
    expires_at: datetime


def _minute(moment: datetime) -> int:
    return int(moment.timestamp()) // 60


class CoreMachine(RuleBasedStateMachine):
    """The machine; subclasses say which storage the ports use (`make_ports`)."""

    def make_ports(self, clock: FakeClock, ids: FakeIds) -> Ports:
        raise NotImplementedError

    def close_ports(self) -> None:
        """Release what `make_ports` opened."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.ids = FakeIds()
        self.ports = self.make_ports(self.clock, self.ids)
        self.api = ApiService(self.ports)
        self.runner = JobProcessing(self.ports)
        self.operator = OperatorService(self.ports)
        self.website = WebsiteService(self.ports, FakePasswordHasher())
        self.accounts: list[ModelAccount] = []
        self.jobs: dict[str, ModelJob] = {}  # in submission order, as the queue is
        self.claims: list[Claim] = []
        self.keys: dict[tuple[str, str], ModelKey] = {}
        self.finals_seen: dict[str, Job] = {}
        self.counts: dict[tuple[str, int], int] = {}

    def teardown(self) -> None:
        self.close_ports()

    # -- helpers --

    def _count(self, bucket: str) -> int:
        """Count one request against a per-minute bucket, as the limiter does."""
        slot = (bucket, _minute(self.clock.now()))
        self.counts[slot] = self.counts.get(slot, 0) + 1
        return self.counts[slot]

    def _account(self, index: int) -> ModelAccount:
        return self.accounts[index % len(self.accounts)]

    def _owner(self, job: ModelJob) -> ModelAccount:
        return next(acc for acc in self.accounts if acc.id == job.account_id)

    def _job(self, index: int) -> ModelJob:
        ids = list(self.jobs)
        return self.jobs[ids[index % len(ids)]]

    def _succeeded(self, account: ModelAccount) -> int:
        """The account's charged jobs: its succeeded API jobs."""
        return sum(
            1
            for j in self.jobs.values()
            if j.account_id == account.id
            and j.status is JobStatus.SUCCEEDED
            and j.channel is JobChannel.API
        )

    def _unfinished(self, account: ModelAccount, channel: JobChannel = JobChannel.API) -> int:
        return sum(
            1
            for j in self.jobs.values()
            if j.account_id == account.id and j.status in UNFINISHED and j.channel is channel
        )

    @staticmethod
    def _person(account: ModelAccount) -> SignedIn:
        """A signed-in person of the account (the conversions read only the account)."""
        return SignedIn("session", "person", "someone@example.com", account.id, "csrf")

    def _balance(self, account: ModelAccount) -> int:
        return account.initial + account.added - account.removed - self._succeeded(account)

    def _login(self, account: ModelAccount) -> Account | None:
        """Authenticate as the shell does; None (after checking the 403) when disabled."""
        if account.disabled:
            try:
                self.api.authenticate(f"Bearer {account.secret}", CLIENT)
            except AccountDisabled:
                return None
            raise AssertionError("a disabled account's key was accepted")
        current = self.api.authenticate(f"Bearer {account.secret}", CLIENT)
        assert current.id == account.id
        return current

    @staticmethod
    def _bearer(account: ModelAccount) -> str:
        return f"Bearer {account.secret}"

    def _read_allowed(self, account: ModelAccount) -> bool:
        return self._count(f"read:{account.id}") <= READS_PER_MINUTE

    def _stored(self, job_id: str) -> Job:
        with self.ports.reader() as uow:
            job = uow.jobs.get(job_id)
        assert job is not None, job_id
        return job

    def _expect(self, call: Callable[[], object], error: type[_Error]) -> _Error:
        try:
            call()
        except error as exc:
            return exc
        except (ProblemError, QuotaExhausted) as exc:
            raise AssertionError(f"expected {error.__name__}, got {exc!r}") from exc
        raise AssertionError(f"expected {error.__name__}, nothing was raised")

    def _output(self, job: ModelJob, attempt: int) -> ConversionOutput:
        data = f"{job.format}:{job.id}:{attempt}".encode()
        return ConversionOutput(data=data, width=64, height=48, colors=2, background_removed=False)

    # -- setting up --

    @initialize(
        credits=st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=3),
        big_limit=st.booleans(),
    )
    def create_accounts(self, credits: list[int], big_limit: bool) -> None:
        for n, amount in enumerate(credits):
            active_max = 5 if big_limit and n == 0 else 3
            account = self.operator.create_account(amount, active_max)
            _, secret = self.operator.create_key(account.id)
            self.accounts.append(ModelAccount(account.id, secret, amount, active_max))

    # -- clients --

    @rule(
        a=INDEX,
        image=st.integers(min_value=0, max_value=1),
        fmt=st.sampled_from(FORMATS),
        key=st.sampled_from([None, None, "k0", "k1", '"k1"', "k1"]),
    )
    def submit(self, a: int, image: int, fmt: str | None, key: str | None) -> None:
        account = self._account(a)
        current = self._login(account)
        if current is None:
            return
        now = self.clock.now()
        fields = [("format", fmt if fmt is not None else "tiff")]
        data = fake_image(100, 100, salt=str(image))

        def call() -> Any:
            return self.api.submit(current, fields, data, key)

        if self._count(f"submit:{account.id}") > SUBMISSIONS_PER_MINUTE:
            exc = self._expect(call, RateLimited)
            assert exc.retry_after is not None and 1 <= exc.retry_after <= 60
            event("submit: rate limited")
            return
        if fmt is None:
            self._expect(call, InvalidParameter)
            return
        request = (image, fmt)
        norm_key = None if key is None else key.strip('"')
        record = self.keys.get((account.id, norm_key)) if norm_key else None
        if record is not None and record.expires_at > now:
            if record.request != request:
                self._expect(call, IdempotencyKeyReused)
                event("submit: key reused")
                return
            submission = call()
            assert submission.replayed is True
            assert submission.job.id == record.job_id
            assert submission.job.status is self.jobs[record.job_id].status
            event("submit: replayed")
            return
        if self._balance(account) - self._unfinished(account) < 1:
            self._expect(call, InsufficientCredits)
            event("submit: 402")
            return
        if self._unfinished(account) >= account.active_jobs_max:
            too_many = self._expect(call, TooManyActiveJobs)
            assert str(account.active_jobs_max) in too_many.detail
            event("submit: too many active jobs")
            return
        submission = call()
        assert submission.replayed is False
        job = submission.job
        assert job.id not in self.jobs
        assert job.status is JobStatus.QUEUED and job.progress == 0 and job.credits_charged == 0
        assert job.account_id == account.id and job.created_at == now
        assert job.image_key is not None
        self.jobs[job.id] = ModelJob(job.id, account.id, request, job.image_key)
        if norm_key:
            event("submit: accepted with a key")
            if (account.id, norm_key) in self.keys:
                event("submit: expired key made a new job")
            self.keys[(account.id, norm_key)] = ModelKey(request, job.id, now + IDEMPOTENCY_TTL)

    @precondition(lambda self: self.jobs)
    @rule(a=INDEX, j=INDEX, stranger=STRANGER)
    def cancel(self, a: int, j: int, stranger: bool) -> None:
        job = self._job(j)
        account = self._account(a) if stranger else self._owner(job)
        current = self._login(account)
        if current is None:
            return

        def call() -> Any:
            return self.api.cancel(current, job.id)

        if not self._read_allowed(account):
            self._expect(call, RateLimited)
            return
        if job.account_id != account.id or job.channel is JobChannel.WEBSITE:
            self._expect(call, NotFound)
            return
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            self._expect(call, JobNotCancelable)
            event("cancel: 409")
            return
        before = self._stored(job.id)
        answer = call()
        assert answer.status is JobStatus.CANCELED
        assert answer.credits_charged == 0
        event(f"cancel: {job.status.value}")
        if job.status is JobStatus.CANCELED:
            assert answer == before  # a repeated cancel changes nothing
        job.status = JobStatus.CANCELED
        job.progress = None
        job.lease_until = None

    @precondition(lambda self: self.jobs)
    @rule(a=INDEX, j=INDEX, stranger=STRANGER)
    def read_job_and_result(self, a: int, j: int, stranger: bool) -> None:
        job = self._job(j)
        account = self._account(a) if stranger else self._owner(job)
        current = self._login(account)
        if current is None:
            return
        if not self._read_allowed(account):
            self._expect(
                lambda: self.api.job_for_key(self._bearer(account), CLIENT, job.id), RateLimited
            )
            return
        if job.account_id != account.id or job.channel is JobChannel.WEBSITE:
            self._expect(
                lambda: self.api.job_for_key(self._bearer(account), CLIENT, job.id), NotFound
            )
            if job.channel is JobChannel.WEBSITE:
                event("read: website job not found under /v1")
        else:
            assert self.api.job_for_key(self._bearer(account), CLIENT, job.id).status is job.status
        if not self._read_allowed(account):
            self._expect(lambda: self.api.result(current, job.id), RateLimited)
            return

        def download() -> Any:
            return self.api.result(current, job.id)

        if job.account_id != account.id or job.channel is JobChannel.WEBSITE:
            self._expect(download, NotFound)
        elif job.status is not JobStatus.SUCCEEDED:
            self._expect(download, ResultNotReady)
        elif job.result_swept or self.clock.now() > _set(job.result_expires):
            # 410 only more than 24 hours after the job ended (contract 4.4)
            self._expect(download, ResultExpired)
            event("result: expired")
        else:
            got, data = download()
            assert got.id == job.id and data == job.result_data
            event("result: downloaded")

    @rule(a=INDEX)
    def read_account(self, a: int) -> None:
        account = self._account(a)
        current = self._login(account)
        if current is None:
            return
        if not self._read_allowed(account):
            self._expect(
                lambda: self.api.account_for_key(self._bearer(account), CLIENT), RateLimited
            )
            return
        view = self.api.account_for_key(self._bearer(account), CLIENT)
        assert view.credits_balance == self._balance(account)
        assert view.active_jobs == self._unfinished(account)

    # -- people on the website --

    @rule(a=INDEX, image=st.integers(min_value=0, max_value=1), fmt=st.sampled_from(FORMATS))
    def website_convert(self, a: int, image: int, fmt: str | None) -> None:
        account = self._account(a)
        if fmt is None:
            self._expect(lambda: conversion_options([("format", "tiff")]), InvalidParameter)
            return
        data = fake_image(100, 100, salt=str(image))

        def call() -> Any:
            options = conversion_options([("format", fmt)])
            return self.website.submit_conversion(self._person(account), data, options)

        if self._count(f"websubmit:{account.id}") > SUBMISSIONS_PER_MINUTE:
            self._expect(call, RateLimited)
            event("website: rate limited")
            return
        if account.disabled:
            self._expect(call, AccountDisabled)
            return
        if self._unfinished(account, JobChannel.WEBSITE) >= account.active_jobs_max:
            self._expect(call, TooManyActiveJobs)
            event("website: too many active jobs")
            return
        job = call()
        assert job.channel is JobChannel.WEBSITE and job.status is JobStatus.QUEUED
        assert job.image_key is not None and job.id not in self.jobs
        self.jobs[job.id] = ModelJob(
            job.id, account.id, (image, fmt), job.image_key, channel=JobChannel.WEBSITE
        )
        event("website: accepted")

    @precondition(lambda self: self.jobs)
    @rule(a=INDEX, j=INDEX, stranger=STRANGER)
    def website_cancel(self, a: int, j: int, stranger: bool) -> None:
        job = self._job(j)
        account = self._account(a) if stranger else self._owner(job)

        def call() -> Any:
            return self.website.cancel_conversion(self._person(account), job.id)

        if job.account_id != account.id or job.channel is JobChannel.API:
            self._expect(call, NotFound)
            return
        if job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            self._expect(call, JobNotCancelable)
            return
        assert call().status is JobStatus.CANCELED
        event(f"website cancel: {job.status.value}")
        job.status = JobStatus.CANCELED
        job.progress = None
        job.lease_until = None

    @precondition(lambda self: self.jobs)
    @rule(a=INDEX, j=INDEX, stranger=STRANGER, done=st.booleans())
    def website_download(self, a: int, j: int, stranger: bool, done: bool) -> None:
        """Download a job's file on the website; with `done`, one of the succeeded website
        jobs when there are any (so downloads, repeats and the quota are reached often)."""
        finished = [
            job
            for job in self.jobs.values()
            if job.channel is JobChannel.WEBSITE and job.status is JobStatus.SUCCEEDED
        ]
        job = finished[j % len(finished)] if done and finished else self._job(j)
        account = self._account(a) if stranger else self._owner(job)

        def call() -> Any:
            return self.website.download(self._person(account), job.id)

        if job.account_id != account.id or job.channel is JobChannel.API:
            self._expect(call, NotFound)
            return
        if job.status is not JobStatus.SUCCEEDED:
            self._expect(call, ResultNotReady)
            return
        if job.result_swept or self.clock.now() > _set(job.result_expires):
            self._expect(call, ResultExpired)
            return
        day = quota_day(self.clock.now())
        limit = DAILY_DOWNLOADS[account.plan]
        used = sum(1 for counted in account.downloads.values() if counted == day)
        if job.id not in account.downloads and limit is not None and used >= limit:
            self._expect(call, QuotaExhausted)
            event("website download: quota used up")
            return
        download = call()
        assert download.data == job.result_data
        assert download.counted is (job.id not in account.downloads)
        event(f"website download: counted={download.counted}")
        account.downloads.setdefault(job.id, day)

    @rule(a=INDEX, plan=st.sampled_from(list(Plan)))
    def set_plan(self, a: int, plan: Plan) -> None:
        account = self._account(a)
        assert self.operator.set_plan(account.id, plan.value).plan is plan
        account.plan = plan

    @rule(address=st.sampled_from(sorted(NETWORKS)))
    def wrong_key(self, address: str) -> None:
        header = "Bearer pjk1_" + "W" * 38

        def call() -> Any:
            return self.api.authenticate(header, address)

        if self._count(f"wrongkey:{NETWORKS[address]}") > WRONG_KEYS_PER_MINUTE:
            self._expect(call, RateLimited)
            event("wrong key: rate limited")
            # a valid key from the same network keeps working
            live = [acc for acc in self.accounts if not acc.disabled]
            if live:
                assert self.api.authenticate(f"Bearer {live[0].secret}", address).id == live[0].id
        else:
            exc = self._expect(call, Unauthenticated)
            assert exc.key_sent is True

    # -- workers --

    def _claim(self) -> Claim | None:
        jobs = list(self.jobs.values())
        running = Counter(j.account_id for j in jobs if j.status is JobStatus.RUNNING)
        # When each account's last job ended (the invariants check the stored times).
        served: dict[str, datetime] = {}
        for j in jobs:
            ended = self._stored(j.id).finished_at
            if ended is not None:
                served[j.account_id] = max(ended, served.get(j.account_id, ended))
        queued = [
            (
                running[j.account_id],
                j.account_id in served,
                served.get(j.account_id, datetime.min),
                n,
            )
            for n, j in enumerate(jobs)
            if j.status is JobStatus.QUEUED
        ]
        claim = self.runner.claim()
        if not queued:
            assert claim is None
            return None
        expected = jobs[min(queued)[-1]]
        assert claim is not None
        assert claim.job.id == expected.id, (
            "jobs are claimed in fair order (JobRepository.next_queued)"
        )
        expected.status = JobStatus.RUNNING
        expected.attempts += 1
        expected.lease_until = self.clock.now() + LEASE
        expected.progress = expected.progress or 0
        assert claim.attempt == expected.attempts
        assert claim.job.lease_expires_at == expected.lease_until
        self.claims.append(claim)
        return claim

    def _ours(self, claim: Claim) -> bool:
        job = self.jobs[claim.job.id]
        return job.status is JobStatus.RUNNING and job.attempts == claim.attempt

    def _finish(self, claim: Claim, succeed: bool) -> None:
        job = self.jobs[claim.job.id]
        ours = self._ours(claim)
        if succeed:
            output = self._output(job, claim.attempt)
            done = self.runner.succeed(claim, output)
        else:
            done = self.runner.fail(claim, "no shapes found")
        verb = "succeed" if succeed else "fail"
        if not ours:
            assert done is None, "a job that moved on cannot be finished by its old worker"
            event(f"{verb}: dropped ({job.status.value})")
            return
        event(f"{verb}: applied")
        assert done is not None
        if succeed:
            assert done.status is JobStatus.SUCCEEDED
            job.status = JobStatus.SUCCEEDED
            job.progress = 100
            job.result_data = output.data
            job.result_key = done.result_key
            assert job.result_key is not None and job.result_key.endswith(f".{job.format}")
            job.result_expires = self.clock.now() + RESULT_TTL
            assert done.result is not None and done.result.expires_at == job.result_expires
        else:
            assert done.status is JobStatus.FAILED
            job.status = JobStatus.FAILED
            job.progress = None
            job.error_code = JobErrorCode.PROCESSING_FAILED
        job.lease_until = None

    @rule()
    def claim(self) -> None:
        """A worker takes the oldest queued job and keeps working on it."""
        self._claim()

    @rule(succeed=st.booleans())
    def process(self, succeed: bool) -> None:
        """A worker takes the oldest queued job and finishes it at once."""
        claim = self._claim()
        if claim is not None:
            self._finish(claim, succeed)

    @precondition(lambda self: self.claims)
    @rule(c=INDEX, succeed=st.booleans(), stale=STRANGER)
    def finish(self, c: int, succeed: bool, stale: bool) -> None:
        """A worker finishes a job it took earlier (maybe long ago: then it is fenced off)."""
        live = [claim for claim in self.claims if self._ours(claim)]
        pool = self.claims if stale or not live else live
        self._finish(pool[c % len(pool)], succeed)

    @precondition(lambda self: self.claims)
    @rule(c=INDEX, percent=st.integers(min_value=-5, max_value=120))
    def report(self, c: int, percent: int) -> None:
        claim = self.claims[c % len(self.claims)]
        ours = self._ours(claim)
        assert self.runner.report(claim, Phase.BUILDING, percent) is ours
        if ours:
            job = self.jobs[claim.job.id]
            job.lease_until = self.clock.now() + LEASE
            job.progress = max(job.progress or 0, max(0, min(99, percent)))

    @precondition(lambda self: any(j.status is JobStatus.RUNNING for j in self.jobs.values()))
    @rule(j=INDEX)
    def lose_upload(self, j: int) -> None:
        """A running job's stored image disappears (disk trouble): it cannot run again."""
        running = [job for job in self.jobs.values() if job.status is JobStatus.RUNNING]
        job = running[j % len(running)]
        self.ports.blobs.delete(job.image_key)
        job.image_kept = False

    def _recover(self) -> None:
        now = self.clock.now()
        changed = {job.id: job for job in self.runner.recover()}
        expected = set()
        for job in self.jobs.values():
            if job.status is not JobStatus.RUNNING or _set(job.lease_until) >= now:
                continue
            expected.add(job.id)
            if job.attempts < MAX_ATTEMPTS and job.image_kept:
                job.status = JobStatus.QUEUED
                event("recover: requeued")
            else:
                event("recover: interrupted")
                job.status = JobStatus.FAILED
                job.progress = None
                job.error_code = JobErrorCode.INTERRUPTED
            job.lease_until = None
            assert changed[job.id].status is job.status
        assert set(changed) == expected

    @rule(take=st.booleans(), wait=st.booleans(), times=st.integers(min_value=1, max_value=3))
    def restart(self, take: bool, wait: bool, times: int) -> None:
        """Recovery (design decision 9), `times` times over. With `wait`, every worker has
        died (one of them just after taking the oldest queued job, if `take`) and the
        service comes back after every lease has run out; without, it is the periodic
        pass, where only leases already over count."""
        for _ in range(times):
            if take:
                self._claim()
            if wait:
                self.clock.advance(LEASE.total_seconds() + 1)
            self._recover()

    def _sweep(self) -> None:
        now = self.clock.now()
        expected = 0
        for job in self.jobs.values():
            expiring = job.result_expires is not None and job.result_expires < now
            if job.status is JobStatus.SUCCEEDED and not job.result_swept and expiring:
                event("sweep: result deleted")
                job.result_swept = True
                expected += 1
        assert self.runner.sweep() == expected

    # -- the operator and time --

    @rule(a=INDEX, disabled=st.booleans())
    def set_disabled(self, a: int, disabled: bool) -> None:
        account = self._account(a)
        if not disabled:
            assert self.operator.enable_account(account.id).disabled is False
            account.disabled = False
            return
        canceled = self.operator.disable_account(account.id)
        expected = {
            j.id
            for j in self.jobs.values()
            if j.account_id == account.id and j.status in UNFINISHED
        }
        assert {j.id for j in canceled} == expected
        if expected:
            event("disable: canceled jobs")
        for job_id in expected:
            self.jobs[job_id].status = JobStatus.CANCELED
            self.jobs[job_id].progress = None
            self.jobs[job_id].lease_until = None
        account.disabled = True

    @rule(a=INDEX, amount=st.integers(min_value=1, max_value=3))
    def add_credits(self, a: int, amount: int) -> None:
        account = self._account(a)
        self.operator.add_credits(account.id, amount)
        account.added += amount

    @rule(a=INDEX, amount=st.integers(min_value=1, max_value=4))
    def remove_credits(self, a: int, amount: int) -> None:
        """The operator takes credits back, never below what unfinished jobs hold."""
        account = self._account(a)
        available = self._balance(account) - self._unfinished(account)
        if amount > available:
            with pytest.raises(OperatorError, match="held by unfinished jobs"):
                self.operator.remove_credits(account.id, amount, "refund")
            event("remove: refused below held")
            return
        after = self.operator.remove_credits(account.id, amount, "refund")
        account.removed += amount
        assert after.credits_balance == self._balance(account)
        event("remove: taken back")

    @rule(a=INDEX, active_jobs_max=st.sampled_from([3, 5, 10]))
    def set_limits(self, a: int, active_jobs_max: int) -> None:
        account = self._account(a)
        self.operator.set_active_jobs_max(account.id, active_jobs_max)
        account.active_jobs_max = active_jobs_max

    @rule(seconds=st.sampled_from(CLOCK_STEPS), sweep=st.booleans())
    def advance_clock(self, seconds: int, sweep: bool) -> None:
        """Time passes (results and idempotency keys expire); maybe the sweeper runs."""
        self.clock.advance(seconds)
        if sweep:
            self._sweep()

    # -- invariants, checked after every step --

    @invariant()
    def credits_add_up(self) -> None:
        for account in self.accounts:
            summary = self.operator.show_account(account.id)
            view = summary.view
            assert view.credits_balance - view.credits_held == view.credits_available
            unfinished = self._unfinished(account)
            assert view.credits_held == unfinished * 1
            assert view.active_jobs == unfinished
            assert view.credits_held >= 0
            charged = account.initial + account.added - account.removed - view.credits_balance
            assert charged == self._succeeded(account)
            assert summary.account.disabled is account.disabled

    @invariant()
    def the_ledger_replays_to_the_account(self) -> None:
        """Every credit movement has its entry: folded up, the ledger is the account, at
        every step; each entry states the figures it left; each job held once and was
        charged (succeeded) or released (failed, canceled) once it ended."""
        for account in self.accounts:
            stored = self.operator.show_account(account.id).account
            history = self.operator.credit_history(account.id)
            assert ledger.replay(history) == (stored.credits_balance, stored.credits_held)
            ids = [entry.id for entry in history]
            assert ids == sorted(set(ids))
            for n, entry in enumerate(history):
                assert entry.account_id == account.id and entry.amount > 0
                assert ledger.replay(history[: n + 1]) == (entry.balance_after, entry.held_after)
            jobs = {
                j.id: j
                for j in self.jobs.values()
                if j.account_id == account.id and j.channel is JobChannel.API
            }
            for kind in (LedgerKind.HOLD, LedgerKind.CHARGE, LedgerKind.RELEASE):
                moved = [e.job_id for e in history if e.kind is kind]
                assert len(moved) == len(set(moved)), (kind, moved)
                expected = {
                    LedgerKind.HOLD: set(jobs),
                    LedgerKind.CHARGE: {i for i, j in jobs.items() if j.status is SUCCEEDED},
                    LedgerKind.RELEASE: {i for i, j in jobs.items() if j.status in RELEASED},
                }[kind]
                assert set(moved) == expected, kind
            operator_moves = [e for e in history if e.job_id is None]
            assert all(e.kind in (LedgerKind.ADD, LedgerKind.REMOVE) for e in operator_moves)
            added = sum(e.amount for e in operator_moves if e.kind is LedgerKind.ADD)
            removed = sum(e.amount for e in operator_moves if e.kind is LedgerKind.REMOVE)
            assert (added, removed) == (account.initial + account.added, account.removed)
            assert all(e.reason == "refund" for e in history if e.kind is LedgerKind.REMOVE)

    @invariant()
    def website_jobs_never_move_credits(self) -> None:
        """No ledger entry names a website job, and what the API says of an account is
        what it would say if the website's jobs did not exist."""
        website = {j.id for j in self.jobs.values() if j.channel is JobChannel.WEBSITE}
        for account in self.accounts:
            history = self.operator.credit_history(account.id)
            assert not website & {entry.job_id for entry in history}
            summary = self.operator.show_account(account.id)
            assert summary.view.active_jobs == self._unfinished(account, JobChannel.API)
            with self.ports.reader() as uow:
                assert uow.jobs.count_unfinished(account.id, JobChannel.WEBSITE) == (
                    self._unfinished(account, JobChannel.WEBSITE)
                )

    @invariant()
    def jobs_match_the_model(self) -> None:
        for job in self.jobs.values():
            stored = self._stored(job.id)
            assert stored.status is job.status, (job.id, stored.status, job.status)
            assert stored.account_id == job.account_id
            charged = job.status is JobStatus.SUCCEEDED and job.channel is JobChannel.API
            assert stored.credits_charged == (1 if charged else 0)
            assert stored.channel is job.channel
            assert stored.attempts == job.attempts
            assert stored.progress == job.progress
            assert (stored.finished_at is None) is (job.status in UNFINISHED)
            assert (stored.result is not None) is (job.status is JobStatus.SUCCEEDED)
            if job.status is JobStatus.SUCCEEDED:
                assert stored.result is not None
                assert stored.result.expires_at == job.result_expires
                assert stored.result.bytes == len(job.result_data or b"")
            assert (stored.error is not None) is (job.status is JobStatus.FAILED)
            if stored.error is not None:
                assert stored.error.code is job.error_code
            if job.status in UNFINISHED:
                assert stored.image_key == job.image_key
            else:
                assert stored.image_key is None
            if job.status is JobStatus.SUCCEEDED and not job.result_swept:
                assert stored.result_key == job.result_key
            else:
                assert stored.result_key is None
            if job.status is JobStatus.RUNNING:
                assert stored.lease_expires_at == job.lease_until
            else:
                assert stored.lease_expires_at is None

    @invariant()
    def final_statuses_never_change(self) -> None:
        for job_id, seen in self.finals_seen.items():
            stored = self._stored(job_id)
            assert stored.status is seen.status
            assert stored.finished_at == seen.finished_at
            assert stored.credits_charged == seen.credits_charged
            assert stored.result == seen.result and stored.error == seen.error
        for job in self.jobs.values():
            if job.status not in UNFINISHED and job.id not in self.finals_seen:
                self.finals_seen[job.id] = self._stored(job.id)

    @invariant()
    def stored_files_match_the_jobs(self) -> None:
        blobs = self.ports.blobs
        uploads = set(blobs.keys("uploads/"))
        expected_uploads = {
            j.image_key for j in self.jobs.values() if j.status in UNFINISHED and j.image_kept
        }
        assert uploads == expected_uploads, "an upload is kept exactly while its job runs"
        results = set(blobs.keys("results/"))
        expected_results = {
            j.result_key
            for j in self.jobs.values()
            if j.status is JobStatus.SUCCEEDED and not j.result_swept
        }
        assert results == expected_results, "a result file is kept until it is swept"
        for job in self.jobs.values():
            if job.status is JobStatus.SUCCEEDED and not job.result_swept:
                assert job.result_key is not None
                assert blobs.get(job.result_key) == job.result_data


def _fast_temp_root() -> str | None:
    """A memory-backed temporary directory where the system has one (unless TMPDIR says
    where temporary files go), else the default."""
    if os.environ.get("TMPDIR"):
        return None
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class FakesMachine(CoreMachine):
    def make_ports(self, clock: FakeClock, ids: FakeIds) -> Ports:
        store = FakeStore()
        return Ports(
            uow=store.unit_of_work,
            reader=store.unit_of_work,
            clock=clock,
            ids=ids,
            blobs=FakeBlobStore(),
            limiter=FakeRateLimiter(),
            probe=FakeImageProbe(),
        )


class SqliteMachine(CoreMachine):
    def make_ports(self, clock: FakeClock, ids: FakeIds) -> Ports:
        from printjob_adapters.blobs import FilesystemBlobStore
        from printjob_adapters.sqlite import open_storage

        self.directory = tempfile.mkdtemp(prefix="printjob-machine-", dir=_fast_temp_root())
        self.storage = open_storage(Path(self.directory) / "printjob.sqlite3")
        return Ports(
            uow=self.storage.unit_of_work,
            reader=self.storage.reader,
            clock=clock,
            ids=ids,
            blobs=FilesystemBlobStore(Path(self.directory) / "blobs"),
            limiter=self.storage.rate_limiter(),
            probe=FakeImageProbe(),
        )

    def close_ports(self) -> None:
        with contextlib.suppress(AttributeError):
            self.storage.close()
        with contextlib.suppress(AttributeError):
            shutil.rmtree(self.directory, ignore_errors=True)


_POSTGRES: dict[str, object] = {}


def _postgres_storage() -> object:
    """One PostgreSQL storage for the session (tests/postgres_support.py starts the server)."""
    if "storage" not in _POSTGRES:
        from printjob_adapters.postgres import open_storage as open_postgres
        from tests.postgres_support import create_database

        _POSTGRES["storage"] = open_postgres(create_database())
    return _POSTGRES["storage"]


class PostgresMachine(CoreMachine):
    def make_ports(self, clock: FakeClock, ids: FakeIds) -> Ports:
        from printjob_adapters.blobs import FilesystemBlobStore

        storage = _postgres_storage()
        with storage.connection() as conn:  # type: ignore[attr-defined]
            conn.execute(
                "TRUNCATE rate_counts, idempotency_keys, credit_ledger, website_downloads, "
                "invites, web_sessions, people, sign_in_failures, jobs, api_keys, accounts"
            )
        self.directory = tempfile.mkdtemp(prefix="printjob-machine-", dir=_fast_temp_root())
        return Ports(
            uow=storage.unit_of_work,  # type: ignore[attr-defined]
            reader=storage.reader,  # type: ignore[attr-defined]
            clock=clock,
            ids=ids,
            blobs=FilesystemBlobStore(Path(self.directory) / "blobs"),
            limiter=storage.rate_limiter(),  # type: ignore[attr-defined]
            probe=FakeImageProbe(),
        )

    def close_ports(self) -> None:
        with contextlib.suppress(AttributeError):
            shutil.rmtree(self.directory, ignore_errors=True)


# The profile (tests/conftest.py) sets max_examples: a few dozen locally, 200 in CI.
_SETTINGS = settings(
    stateful_step_count=STEP_COUNT,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

FakesMachine.TestCase.settings = _SETTINGS
SqliteMachine.TestCase.settings = _SETTINGS
# Kept cheap: the same rules as SQLite, a fixed few dozen examples.
PostgresMachine.TestCase.settings = settings(_SETTINGS, max_examples=25)

TestCoreWithFakes = FakesMachine.TestCase
TestCoreWithSqlite = SqliteMachine.TestCase
TestCoreWithPostgres = PostgresMachine.TestCase
