"""Contract section 3: every row of the state table, through the services."""

from __future__ import annotations

from datetime import timedelta

import pytest

from printjob_core import lifecycle
from printjob_core.errors import JobNotCancelable
from printjob_core.model import JobErrorCode, JobStatus, Phase

from .conftest import World, output


def test_accepted_submission_is_queued_holds_one_credit_and_counts_as_active(world: World):
    account = world.account(credits=5)
    sub = world.submit(account)
    job = sub.job
    assert sub.replayed is False
    assert job.status is JobStatus.QUEUED
    assert job.phase is Phase.QUEUED
    assert job.progress == 0
    assert job.credits_charged == 0
    assert job.result is None and job.error is None and job.finished_at is None
    assert job.created_at == world.clock.now()
    assert world.job(job.id) == job
    view = world.reads.account(world.fresh(account))
    assert (view.credits_balance, view.credits_held, view.credits_available) == (5, 1, 4)
    assert view.active_jobs == 1
    assert world.uploads() == {job.image_key}


@pytest.mark.parametrize("running", [False, True], ids=["queued", "running"])
def test_cancel_unfinished_job_charges_nothing_and_returns_the_hold(world: World, running: bool):
    account = world.account(credits=2)
    job = world.submit(account).job
    if running:
        assert world.claim().job.id == job.id
    world.clock.advance(7)
    canceled = world.api.cancel(world.fresh(account), job.id)
    assert canceled.status is JobStatus.CANCELED
    assert canceled.phase is None and canceled.progress is None
    assert canceled.finished_at == world.clock.now()
    assert canceled.credits_charged == 0
    assert canceled.result is None and canceled.error is None
    assert world.job(job.id) == canceled
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held) == (2, 0)
    assert world.reads.account(fresh).active_jobs == 0
    assert world.uploads() == set()


def test_repeated_cancel_changes_nothing(world: World):
    account = world.account(credits=2)
    job = world.submit(account).job
    first = world.api.cancel(world.fresh(account), job.id)
    commits = world.store.commits
    world.clock.advance(100)
    again = world.api.cancel(world.fresh(account), job.id)
    assert again == first
    assert again.finished_at == first.finished_at
    assert world.store.commits == commits
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held) == (2, 0)


def test_running_job_succeeds_charges_one_credit_and_keeps_file_24h(world: World):
    account = world.account(credits=3)
    job = world.submit(account).job
    claim = world.claim()
    world.clock.advance(30)
    done = world.runner.succeed(claim, output(b"<svg>file</svg>", 4500, 5400))
    assert done is not None
    assert done.status is JobStatus.SUCCEEDED
    assert done.phase is Phase.FINISHING and done.progress == 100
    assert done.credits_charged == 1
    assert done.finished_at == world.clock.now()
    assert done.error is None
    assert done.result is not None
    assert done.result.expires_at == world.clock.now() + timedelta(hours=24)
    assert (done.result.width, done.result.height, done.result.bytes) == (4500, 5400, 15)
    assert done.result.format.value == "svg"
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held, fresh.credits_available) == (2, 0, 2)
    got, data = world.api.result(fresh, job.id)
    assert data == b"<svg>file</svg>"
    assert got == done
    assert world.uploads() == set()


def test_processing_failure_fails_with_processing_failed_and_charges_nothing(world: World):
    account = world.account(credits=1)
    job = world.submit(account).job
    claim = world.claim()
    failed = world.runner.fail(claim, "no shapes found")
    assert failed is not None
    assert failed.id == job.id
    assert failed.status is JobStatus.FAILED
    assert failed.error is not None and failed.error.code is JobErrorCode.PROCESSING_FAILED
    assert failed.error.detail == "no shapes found"
    assert failed.phase is None and failed.progress is None
    assert failed.finished_at == world.clock.now()
    assert failed.credits_charged == 0 and failed.result is None
    assert world.job(job.id) == failed
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held) == (1, 0)
    assert world.uploads() == set()


def test_queued_job_can_fail_with_processing_failed_and_release_its_hold():
    from datetime import UTC, datetime

    from printjob_core.model import JobOptions, OutputFormat

    now = datetime(2026, 1, 1, tzinfo=UTC)
    job = lifecycle.submitted("job_" + "0" * 32, "a", JobOptions(OutputFormat.PDF), now, "u")
    moved = lifecycle.fail(job, JobErrorCode.PROCESSING_FAILED, "bad", now)
    assert moved.credit is lifecycle.CreditMove.RELEASE
    assert moved.job.status is JobStatus.FAILED
    assert moved.job.error is not None
    assert moved.job.error.code is JobErrorCode.PROCESSING_FAILED
    assert moved.job.credits_charged == 0


def test_queued_job_can_fail_as_interrupted_and_release_its_hold():
    from datetime import UTC, datetime

    from printjob_core.model import JobOptions, OutputFormat

    now = datetime(2026, 1, 1, tzinfo=UTC)
    job = lifecycle.submitted("job_" + "0" * 32, "a", JobOptions(OutputFormat.PDF), now, "u")
    moved = lifecycle.fail(job, JobErrorCode.INTERRUPTED, "restart", now)
    assert moved.credit is lifecycle.CreditMove.RELEASE
    assert moved.job.status is JobStatus.FAILED
    assert moved.job.image_key is None


def test_disabling_account_cancels_its_unfinished_jobs_only(world: World):
    account = world.account(credits=5, active_jobs_max=5)
    other = world.account(credits=5)
    jobs = [world.submit(account, image=f"IMG PNG 100 100 {i}".encode()).job for i in range(4)]
    succeeded = world.claim()
    assert succeeded.job.id == jobs[0].id
    world.runner.succeed(succeeded, output())
    running = world.claim()
    assert running.job.id == jobs[1].id
    # Queued after the claims: the fair queue would otherwise run it before jobs[1].
    other_job = world.submit(other).job
    changed = world.operator.disable_account(account.id)
    assert sorted(j.id for j in changed) == sorted(j.id for j in jobs[1:])
    for job in jobs[1:]:
        after = world.job(job.id)
        assert after.status is JobStatus.CANCELED
        assert after.credits_charged == 0
        assert after.finished_at == world.clock.now()
    assert world.job(jobs[0].id).status is JobStatus.SUCCEEDED
    fresh = world.fresh(account)
    assert fresh.disabled
    assert (fresh.credits_balance, fresh.credits_held) == (4, 0)
    assert world.job(other_job.id).status is JobStatus.QUEUED
    assert world.fresh(other).credits_held == 1
    assert world.uploads() == {other_job.image_key}
    # the canceled running job's worker reports: told to stop, nothing changes
    assert world.runner.report(running, Phase.BUILDING, 50) is False
    assert world.runner.fail(running, "late") is None
    assert world.job(jobs[1].id).status is JobStatus.CANCELED
    assert world.fresh(account).credits_balance == 4


def test_disabled_account_can_be_enabled_and_submit_again(world: World):
    from printjob_core.errors import AccountDisabled

    account = world.account(credits=5)
    _, secret = world.operator.create_key(account.id)
    world.operator.disable_account(account.id)
    with pytest.raises(AccountDisabled):
        world.api.authenticate(f"Bearer {secret}", "192.0.2.1")
    with pytest.raises(AccountDisabled):
        # the account the shell authenticated a moment ago is stale: still refused
        world.api.submit(account, [("format", "svg")], b"IMG PNG 100 100")
    assert world.store.state.jobs == {}
    world.operator.enable_account(account.id)
    current = world.api.authenticate(f"Bearer {secret}", "192.0.2.1")
    assert world.api.submit(current, [("format", "pdf")], b"IMG PNG 100 100").job.status is (
        JobStatus.QUEUED
    )


def test_disabling_cancels_queued_and_running_jobs_together(world: World):
    account = world.account(credits=5)
    first = world.submit(account, image=b"IMG PNG 100 100 a").job
    second = world.submit(account, image=b"IMG PNG 100 100 b").job
    claim = world.claim()
    assert claim.job.id == first.id
    world.operator.disable_account(account.id)
    assert world.job(first.id).status is JobStatus.CANCELED
    assert world.job(second.id).status is JobStatus.CANCELED
    # the worker of the running job finishes after all: nothing changes, nothing is charged
    assert world.runner.succeed(claim, output()) is None
    assert world.job(first.id).status is JobStatus.CANCELED
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held) == (5, 0)
    assert world.results() == set()


@pytest.mark.parametrize("final", ["succeeded", "failed", "interrupted"])
def test_cancel_of_succeeded_or_failed_job_is_409_and_changes_nothing(world: World, final):
    account = world.account(credits=2)
    job = world.submit(account).job
    claim = world.claim()
    if final == "succeeded":
        world.runner.succeed(claim, output())
    elif final == "failed":
        world.runner.fail(claim, "nope")
    else:
        for _ in range(3):
            world.clock.advance(61)
            world.runner.recover()
            if world.job(job.id).status is JobStatus.QUEUED:
                world.claim()
        assert world.job(job.id).error is not None
        assert world.job(job.id).error.code is JobErrorCode.INTERRUPTED
    before = world.job(job.id)
    account_before = world.fresh(account)
    with pytest.raises(JobNotCancelable) as info:
        world.api.cancel(world.fresh(account), job.id)
    assert info.value.code == "job_not_cancelable" and info.value.status == 409
    assert world.job(job.id) == before
    assert world.fresh(account) == account_before


def test_final_statuses_never_change_through_the_lifecycle():
    from datetime import UTC, datetime

    from printjob_core.model import JobOptions, JobResult, OutputFormat

    now = datetime(2026, 1, 1, tzinfo=UTC)
    base = lifecycle.submitted("job_" + "1" * 32, "a", JobOptions(OutputFormat.SVG), now, "u")
    running = lifecycle.start(base, now).job
    result = JobResult(OutputFormat.SVG, 1, 1, 1, 1, False, now)
    finals = [
        lifecycle.succeed(running, result, "r", now).job,
        lifecycle.fail(running, JobErrorCode.PROCESSING_FAILED, "x", now).job,
        lifecycle.cancel(running, now).job,
    ]
    for job in finals:
        assert job.is_final
        with pytest.raises(lifecycle.IllegalTransition):
            lifecycle.start(job, now)
        with pytest.raises(lifecycle.IllegalTransition):
            lifecycle.advance(job, Phase.BUILDING, 50, now)
        with pytest.raises(lifecycle.IllegalTransition):
            lifecycle.succeed(job, result, "r", now)
        with pytest.raises(lifecycle.IllegalTransition):
            lifecycle.fail(job, JobErrorCode.PROCESSING_FAILED, "x", now)
        with pytest.raises(lifecycle.IllegalTransition):
            lifecycle.requeue(job)
    # succeed needs running: a queued job cannot jump to succeeded
    with pytest.raises(lifecycle.IllegalTransition):
        lifecycle.succeed(base, result, "r", now)
    # a canceled job stays canceled; a succeeded or failed one refuses
    assert lifecycle.cancel(finals[2], now).job is finals[2]
    assert lifecycle.cancel(finals[2], now).credit is lifecycle.CreditMove.NONE
    for job in finals[:2]:
        with pytest.raises(JobNotCancelable):
            lifecycle.cancel(job, now)


def test_credit_moves_of_each_transition():
    from datetime import UTC, datetime

    from printjob_core.model import JobOptions, JobResult, OutputFormat

    now = datetime(2026, 1, 1, tzinfo=UTC)
    base = lifecycle.submitted("job_" + "2" * 32, "a", JobOptions(OutputFormat.SVG), now, "u")
    running = lifecycle.start(base, now)
    assert running.credit is lifecycle.CreditMove.NONE
    assert running.job.attempts == 1 and running.job.lease_expires_at == now
    result = JobResult(OutputFormat.SVG, 1, 1, 1, 1, False, now)
    assert lifecycle.succeed(running.job, result, "r", now).credit is lifecycle.CreditMove.CHARGE
    assert lifecycle.cancel(base, now).credit is lifecycle.CreditMove.RELEASE
    assert lifecycle.cancel(running.job, now).credit is lifecycle.CreditMove.RELEASE
    requeued = lifecycle.requeue(running.job)
    assert requeued.credit is lifecycle.CreditMove.NONE
    assert requeued.job.status is JobStatus.QUEUED and requeued.job.phase is Phase.QUEUED
    assert requeued.job.lease_expires_at is None and requeued.job.attempts == 1
