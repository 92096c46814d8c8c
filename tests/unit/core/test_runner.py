"""The job runner's side (design decisions 9, 10, 14): claim, report, finish, recover."""

from __future__ import annotations

from datetime import timedelta

from printjob_core.model import JobErrorCode, JobStatus, Phase

from .conftest import World, output


def img(i: int) -> bytes:
    return f"IMG PNG 100 100 {i}".encode()


def test_claim_takes_queued_jobs_oldest_first(world: World):
    one = world.account(credits=10)
    two = world.account(credits=10)
    a = world.submit(one, image=img(1)).job
    world.clock.advance(1)
    b = world.submit(two, image=img(2)).job
    world.clock.advance(1)
    c = world.submit(one, image=img(3)).job
    claims = [world.claim() for _ in range(3)]
    assert [cl.job.id for cl in claims] == [a.id, b.id, c.id]
    assert world.runner.claim() is None


def test_claim_starts_the_job_under_a_lease(world: World):
    account = world.account()
    job = world.submit(account).job
    claim = world.claim()
    assert claim.attempt == 1
    assert claim.job.status is JobStatus.RUNNING
    assert claim.job.phase is Phase.ANALYSING
    assert claim.job.progress == 0
    assert claim.job.lease_expires_at == world.clock.now() + timedelta(seconds=60)
    assert world.job(job.id) == claim.job
    assert world.runner.image(claim) == world.blobs.get(job.image_key)
    assert world.runner.still_running(claim)


def test_claim_skips_canceled_jobs(world: World):
    account = world.account()
    a = world.submit(account, image=img(1)).job
    b = world.submit(account, image=img(2)).job
    world.api.cancel(world.fresh(account), a.id)
    assert world.claim().job.id == b.id
    assert world.runner.claim() is None


def test_report_renews_the_lease_and_never_lowers_progress(world: World):
    account = world.account()
    job = world.submit(account).job
    claim = world.claim()
    world.clock.advance(50)
    assert world.runner.report(claim, Phase.BUILDING, 40)
    stored = world.job(job.id)
    assert stored.phase is Phase.BUILDING and stored.progress == 40
    assert stored.lease_expires_at == world.clock.now() + timedelta(seconds=60)
    world.clock.advance(50)  # 100 s after the claim: alive thanks to the renewal
    assert world.runner.recover() == []
    assert world.runner.report(claim, Phase.BUILDING, 20)
    assert world.job(job.id).progress == 40
    assert world.runner.report(claim, Phase.FINISHING, 150)
    assert world.job(job.id).progress == 99  # only success reaches 100
    assert world.runner.report(claim, Phase.FINISHING, -5)
    assert world.job(job.id).progress == 99
    done = world.runner.succeed(claim, output())
    assert done is not None and done.progress == 100


def test_canceled_running_job_drops_succeed_and_charges_nothing(world: World):
    account = world.account(credits=2)
    job = world.submit(account).job
    claim = world.claim()
    canceled = world.api.cancel(world.fresh(account), job.id)
    assert world.runner.still_running(claim) is False
    assert world.runner.report(claim, Phase.BUILDING, 50) is False
    assert world.runner.succeed(claim, output()) is None
    assert world.job(job.id) == canceled
    assert world.results() == set()  # the file written for it is removed again
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held) == (2, 0)


def test_canceled_running_job_drops_fail(world: World):
    account = world.account(credits=2)
    job = world.submit(account).job
    claim = world.claim()
    canceled = world.api.cancel(world.fresh(account), job.id)
    assert world.runner.fail(claim, "boom") is None
    assert world.job(job.id) == canceled
    assert world.fresh(account).credits_held == 0


def test_finishing_twice_is_dropped(world: World):
    account = world.account(credits=2)
    job = world.submit(account).job
    claim = world.claim()
    assert world.runner.succeed(claim, output(b"ONE")) is not None
    assert world.runner.succeed(claim, output(b"TWO")) is None
    assert world.runner.fail(claim, "late") is None
    assert world.fresh(account).credits_balance == 1
    assert world.api.result(world.fresh(account), job.id)[1] == b"ONE"


def test_a_reclaimed_jobs_old_worker_cannot_finish_it(world: World):
    account = world.account(credits=2)
    job = world.submit(account).job
    old = world.claim()
    world.clock.advance(61)
    [requeued] = world.runner.recover()
    assert requeued.status is JobStatus.QUEUED and requeued.attempts == 1
    new = world.claim()
    assert new.job.id == job.id and new.attempt == 2
    # the first worker wakes up: all its writes are fenced off
    assert world.runner.still_running(old) is False
    assert world.runner.report(old, Phase.BUILDING, 90) is False
    assert world.runner.succeed(old, output(b"OLD")) is None
    assert world.runner.fail(old, "old") is None
    current = world.job(job.id)
    assert current.status is JobStatus.RUNNING and current.attempts == 2
    assert current.progress == 0
    assert world.fresh(account).credits_held == 1
    # the new worker can
    done = world.runner.succeed(new, output(b"NEW"))
    assert done is not None
    assert world.api.result(world.fresh(account), job.id)[1] == b"NEW"
    assert world.fresh(account).credits_balance == 1


def test_recover_leaves_live_leases_and_queued_jobs_alone(world: World):
    account = world.account(credits=5)
    queued = world.submit(account, image=img(1)).job
    running = world.submit(account, image=img(2)).job
    world.claim()  # takes `queued` (oldest)
    world.clock.advance(60)
    assert world.runner.recover() == []  # lease ends exactly now: not yet before now
    assert world.job(queued.id).status is JobStatus.RUNNING
    assert world.job(running.id).status is JobStatus.QUEUED
    world.clock.advance(1)
    assert [j.id for j in world.runner.recover()] == [queued.id]
    assert world.job(running.id).status is JobStatus.QUEUED


def test_recover_requeues_until_three_attempts_then_fails_interrupted(world: World):
    account = world.account(credits=1)
    job = world.submit(account).job
    for attempt in (1, 2, 3):
        claim = world.claim()
        assert claim.attempt == attempt
        world.clock.advance(61)
        [changed] = world.runner.recover()
        if attempt < 3:
            assert changed.status is JobStatus.QUEUED
            assert world.uploads() == {job.image_key}
            assert world.fresh(account).credits_held == 1
    assert changed.status is JobStatus.FAILED
    assert changed.error is not None and changed.error.code is JobErrorCode.INTERRUPTED
    assert changed.credits_charged == 0
    assert changed.finished_at == world.clock.now()
    assert changed.phase is None and changed.progress is None
    assert world.job(job.id) == changed
    fresh = world.fresh(account)
    assert (fresh.credits_balance, fresh.credits_held) == (1, 0)
    assert world.uploads() == set()
    assert world.runner.claim() is None


def test_recover_fails_a_job_whose_image_is_gone(world: World):
    account = world.account(credits=1)
    job = world.submit(account).job
    world.claim()
    world.blobs.delete(job.image_key)
    world.clock.advance(61)
    [failed] = world.runner.recover()
    assert failed.status is JobStatus.FAILED
    assert failed.error is not None and failed.error.code is JobErrorCode.INTERRUPTED
    assert world.fresh(account).credits_held == 0
    assert world.fresh(account).credits_balance == 1


def test_uploads_are_deleted_when_the_job_ends_in_any_way(world: World):
    account = world.account(credits=10, active_jobs_max=10)
    jobs = [world.submit(account, image=img(i)).job for i in range(4)]
    assert world.uploads() == {j.image_key for j in jobs}
    world.runner.succeed(world.claim(), output())
    world.runner.fail(world.claim(), "x")
    world.api.cancel(world.fresh(account), jobs[2].id)
    assert world.uploads() == {jobs[3].image_key}
    world.claim()
    world.blobs.delete(jobs[3].image_key)
    world.clock.advance(61)
    world.runner.recover()
    assert world.uploads() == set()
    for j in jobs:
        assert world.job(j.id).image_key is None


def test_results_are_stored_under_the_format_extension(world: World):
    account = world.account()
    job = world.submit(account, [("format", "eps")]).job
    done = world.runner.succeed(world.claim(), output(b"%!PS"))
    assert done is not None and done.id == job.id
    assert done is not None and done.result is not None
    assert done.result.format.value == "eps"
    assert done.result_key is not None and done.result_key.endswith(".eps")
    assert world.results() == {done.result_key}


def test_old_worker_finishing_late_leaves_the_new_workers_result_intact(world: World):
    account = world.account(credits=2)
    job = world.submit(account).job
    old = world.claim()
    world.clock.advance(61)
    world.runner.recover()
    new = world.claim()
    assert world.runner.succeed(new, output(b"NEW")) is not None
    # the first worker was only slow, not dead: its late result must not touch the file
    assert world.runner.succeed(old, output(b"OLD")) is None
    stored = world.job(job.id)
    assert stored.status is JobStatus.SUCCEEDED and stored.result_key is not None
    assert world.results() == {stored.result_key}
    assert world.api.result(world.fresh(account), job.id)[1] == b"NEW"
    assert world.fresh(account).credits_balance == 1
