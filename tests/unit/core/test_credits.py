"""Credit holds (contract 1.3-1.4, section 3): hold, charge, release; balance/held/available."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from printjob_core import credits
from printjob_core.errors import InsufficientCredits, OperatorError
from printjob_core.model import Account, JobStatus

from .conftest import World, output

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_pure_hold_charge_release_add():
    account = Account(id="a", created_at=NOW, credits_balance=2)
    held = credits.hold(account)
    assert (held.credits_balance, held.credits_held, held.credits_available) == (2, 1, 1)
    charged = credits.charge(held)
    assert (charged.credits_balance, charged.credits_held) == (1, 0)
    released = credits.release(held)
    assert (released.credits_balance, released.credits_held) == (2, 0)
    assert credits.add(account, 3).credits_balance == 5
    assert account.credits_balance == 2  # values are immutable


@pytest.mark.parametrize("amount", [0, -1, -100])
def test_add_refuses_non_positive_amounts(amount):
    with pytest.raises(OperatorError):
        credits.add(Account(id="a", created_at=NOW), amount)


def test_hold_refuses_when_available_below_cost_and_detail_states_both():
    account = Account(id="a", created_at=NOW, credits_balance=1, credits_held=1)
    with pytest.raises(InsufficientCredits) as info:
        credits.hold(account)
    assert info.value.code == "insufficient_credits" and info.value.status == 402
    assert "costs 1 credit" in info.value.detail
    assert "0 available" in info.value.detail


def test_charge_or_release_without_a_hold_is_refused():
    account = Account(id="a", created_at=NOW, credits_balance=3)
    with pytest.raises(AssertionError):
        credits.charge(account)
    with pytest.raises(AssertionError):
        credits.release(account)


def _triple(world: World, account: Account) -> tuple[int, int, int]:
    view = world.reads.account(world.fresh(account))
    return view.credits_balance, view.credits_held, view.credits_available


def test_zero_credits_is_402_and_nothing_is_kept(world: World):
    account = world.account(credits=0)
    with pytest.raises(InsufficientCredits):
        world.submit(account)
    assert world.store.state.jobs == {}
    assert world.uploads() == set()
    assert _triple(world, account) == (0, 0, 0)


def test_holds_add_up_and_available_blocks_the_next_job(world: World):
    account = world.account(credits=2, active_jobs_max=5)
    world.submit(account, image=b"IMG PNG 100 100 a")
    assert _triple(world, account) == (2, 1, 1)
    world.submit(account, image=b"IMG PNG 100 100 b")
    assert _triple(world, account) == (2, 2, 0)
    with pytest.raises(InsufficientCredits) as info:
        world.submit(account, image=b"IMG PNG 100 100 c")
    assert "0 available" in info.value.detail
    assert len(world.store.state.jobs) == 2
    world.operator.add_credits(account.id, 1)
    world.submit(account, image=b"IMG PNG 100 100 c")
    assert _triple(world, account) == (3, 3, 0)


def test_success_charges_exactly_one_credit(world: World):
    account = world.account(credits=2)
    world.submit(account)
    world.runner.succeed(world.claim(), output())
    assert _triple(world, account) == (1, 0, 1)


def test_failure_cancel_and_interruption_release_the_hold(world: World):
    account = world.account(credits=3)
    failed = world.submit(account, image=b"IMG PNG 100 100 f").job
    world.runner.fail(world.claim(), "x")
    canceled = world.submit(account, image=b"IMG PNG 100 100 c").job
    world.api.cancel(world.fresh(account), canceled.id)
    interrupted = world.submit(account, image=b"IMG PNG 100 100 i").job
    claim = world.claim()
    assert claim.job.id == interrupted.id
    world.blobs.delete(interrupted.image_key)  # the upload is gone: cannot run again
    world.clock.advance(61)
    world.runner.recover()
    assert world.job(failed.id).status is JobStatus.FAILED
    assert world.job(canceled.id).status is JobStatus.CANCELED
    assert world.job(interrupted.id).status is JobStatus.FAILED
    assert _triple(world, account) == (3, 0, 3)
    assert all(world.job(j.id).credits_charged == 0 for j in (failed, canceled, interrupted))


def test_requeue_after_a_dead_worker_keeps_the_hold(world: World):
    account = world.account(credits=1)
    job = world.submit(account).job
    world.claim()
    world.clock.advance(61)
    [requeued] = world.runner.recover()
    assert requeued.id == job.id and requeued.status is JobStatus.QUEUED
    assert _triple(world, account) == (1, 1, 0)
    world.runner.succeed(world.claim(), output())
    assert _triple(world, account) == (0, 0, 0)
