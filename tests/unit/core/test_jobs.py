"""Reading jobs and results (contract 4.2-4.4, design decision 10)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from printjob_core.errors import NotFound, ResultExpired, ResultNotReady
from printjob_core.model import JobStatus

from .conftest import World, output


@pytest.mark.parametrize(
    "job_id",
    [
        "job_" + "A" * 32,
        "job_" + "0" * 31,
        "job_" + "0" * 33,
        "JOB_" + "0" * 32,
        "job_../../etc/passwd",
        "../job_" + "0" * 32,
        "job_" + "0" * 31 + "g",
        "",
        "job_" + "0" * 32 + "\n",
        "job_" + "0" * 32 + "/",
        "job_" + "０" * 32,
    ],
)
def test_malformed_job_ids_are_not_found(world: World, job_id: str):
    account = world.account()
    fresh = world.fresh(account)
    for call in (world.reads.job, world.api.cancel, world.api.result):
        with pytest.raises(NotFound) as info:
            call(fresh, job_id)
        assert info.value.status == 404 and info.value.code == "not_found"


def test_upper_case_id_of_an_existing_job_is_not_found(world: World):
    account = world.account()
    world.ids.job_id = lambda: "job_" + "0123456789abcdef" * 2  # type: ignore[method-assign]
    job = world.submit(account).job
    fresh = world.fresh(account)
    assert world.reads.job(fresh, job.id) == job
    upper = "job_" + job.id[4:].upper()
    assert upper != job.id
    with pytest.raises(NotFound):
        world.reads.job(fresh, upper)
    with pytest.raises(NotFound):
        world.reads.job(fresh, job.id[:-1])


def test_unknown_well_formed_id_is_not_found(world: World):
    account = world.account()
    with pytest.raises(NotFound):
        world.reads.job(world.fresh(account), "job_" + "e" * 32)


def test_another_accounts_job_is_not_found_on_get_cancel_and_result(world: World):
    owner = world.account()
    stranger = world.account()
    job = world.submit(owner).job
    world.runner.succeed(world.claim(), output())
    other = world.fresh(stranger)
    for call in (world.reads.job, world.api.cancel, world.api.result):
        with pytest.raises(NotFound):
            call(other, job.id)
    # and the owner still sees it, unchanged
    assert world.reads.job(world.fresh(owner), job.id).status is JobStatus.SUCCEEDED


def test_another_account_cannot_cancel_a_queued_job(world: World):
    owner = world.account()
    stranger = world.account()
    job = world.submit(owner).job
    with pytest.raises(NotFound):
        world.api.cancel(world.fresh(stranger), job.id)
    assert world.job(job.id).status is JobStatus.QUEUED
    assert world.fresh(owner).credits_held == 1


@pytest.mark.parametrize("state", ["queued", "running", "failed", "canceled"])
def test_result_not_ready(world: World, state: str):
    account = world.account()
    job = world.submit(account).job
    if state == "running":
        world.claim()
    elif state == "failed":
        world.runner.fail(world.claim(), "x")
    elif state == "canceled":
        world.api.cancel(world.fresh(account), job.id)
    assert world.job(job.id).status.value == state
    with pytest.raises(ResultNotReady) as info:
        world.api.result(world.fresh(account), job.id)
    assert info.value.status == 409 and info.value.code == "result_not_ready"


def test_result_is_kept_24_hours_then_expired_while_the_job_stays_readable(world: World):
    account = world.account()
    job = world.submit(account).job
    done = world.runner.succeed(world.claim(), output(b"DATA"))
    assert done is not None and done.result is not None
    world.clock.advance(24 * 3600 - 1)
    assert world.api.result(world.fresh(account), job.id)[1] == b"DATA"
    world.clock.advance(1.5)
    with pytest.raises(ResultExpired) as info:
        world.api.result(world.fresh(account), job.id)
    assert info.value.status == 410 and info.value.code == "result_expired"
    readable = world.reads.job(world.fresh(account), job.id)
    assert readable.status is JobStatus.SUCCEEDED
    assert readable.result == done.result


def test_result_is_still_served_at_exactly_24_hours(world: World):
    """Contract 4.4: 410 only *more than* 24 hours after the job ended; the sweeper agrees
    (it deletes files whose `expires_at` is before now), so the download must too."""
    account = world.account()
    job = world.submit(account).job
    done = world.runner.succeed(world.claim(), output(b"DATA"))
    assert done is not None and done.result is not None
    world.clock.advance(24 * 3600)
    assert world.clock.now() == done.result.expires_at
    assert world.runner.sweep() == 0
    assert world.api.result(world.fresh(account), job.id)[1] == b"DATA"


def test_sweep_deletes_expired_files_and_keeps_the_job(world: World):
    account = world.account(credits=5)
    old = world.submit(account, image=b"IMG PNG 100 100 old").job
    world.runner.succeed(world.claim(), output(b"OLD"))
    world.clock.advance(3600)
    new = world.submit(account, image=b"IMG PNG 100 100 new").job
    world.runner.succeed(world.claim(), output(b"NEW"))
    old_key, new_key = world.job(old.id).result_key, world.job(new.id).result_key
    assert old_key is not None and new_key is not None
    assert world.results() == {old_key, new_key}
    world.clock.advance(24 * 3600 - 1800)
    assert world.runner.sweep() == 1
    assert world.results() == {new_key}
    swept = world.job(old.id)
    assert swept.result_key is None
    assert swept.result is not None and swept.status is JobStatus.SUCCEEDED
    assert swept.credits_charged == 1
    with pytest.raises(ResultExpired):
        world.api.result(world.fresh(account), old.id)
    assert world.api.result(world.fresh(account), new.id)[1] == b"NEW"
    assert world.runner.sweep() == 0
    world.clock.advance(3600)
    assert world.runner.sweep() == 1
    assert world.results() == set()
    assert world.fresh(account).credits_balance == 3


def test_sweep_forgets_expired_idempotency_keys(world: World):
    account = world.account(credits=5)
    world.submit(account, key="k")
    world.clock.advance(3600)
    world.submit(account, image=b"IMG PNG 100 100 b", key="k2")
    world.clock.advance(24 * 3600 - 1800)
    world.runner.sweep()
    assert set(world.store.state.idempotency) == {(account.id, "k2")}


def test_result_file_missing_from_the_store_is_expired_not_a_crash(world: World):
    account = world.account()
    job = world.submit(account).job
    world.runner.succeed(world.claim(), output())
    result_key = world.job(job.id).result_key
    assert result_key is not None
    world.blobs.delete(result_key)
    with pytest.raises(ResultExpired):
        world.api.result(world.fresh(account), job.id)


def test_result_expires_at_is_24_hours_after_the_job_ended(world: World):
    account = world.account()
    job = world.submit(account).job
    claim = world.claim()
    world.clock.advance(250)
    done = world.runner.succeed(claim, output())
    assert done is not None and done.result is not None and done.finished_at is not None
    assert done.result.expires_at - done.finished_at == timedelta(hours=24)
    assert done.finished_at - job.created_at == timedelta(seconds=250)
