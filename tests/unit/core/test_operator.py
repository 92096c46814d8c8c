"""The operator's commands (design.md, operator interface)."""

from __future__ import annotations

import pytest

from printjob_core.errors import OperatorError
from printjob_core.model import JobStatus

from .conftest import World


@pytest.mark.parametrize(("credits", "active"), [(0, 3), (5, 5), (1_000_000, 10)])
def test_create_account(world: World, credits: int, active: int):
    account = world.operator.create_account(credits, active)
    assert account.credits_balance == credits
    assert account.credits_held == 0
    assert account.active_jobs_max == active
    assert account.disabled is False
    assert account.created_at == world.clock.now()
    assert world.fresh(account) == account


def test_create_account_defaults(world: World):
    account = world.operator.create_account()
    assert (account.credits_balance, account.active_jobs_max) == (0, 3)


@pytest.mark.parametrize(("credits", "active"), [(-1, 3), (0, 0), (0, 1), (0, 4), (0, 11)])
def test_create_account_refuses_out_of_bounds(world: World, credits: int, active: int):
    with pytest.raises(OperatorError):
        world.operator.create_account(credits, active)
    assert world.store.state.accounts == {}


def test_accounts_get_distinct_ids(world: World):
    ids = {world.operator.create_account().id for _ in range(5)}
    assert len(ids) == 5


def test_show_account(world: World):
    account = world.account(credits=4, active_jobs_max=5)
    world.operator.create_key(account.id)
    world.submit(account)
    summary = world.operator.show_account(account.id)
    assert summary.account.id == account.id
    assert summary.view.credits_balance == 4
    assert summary.view.credits_held == 1
    assert summary.view.credits_available == 3
    assert summary.view.active_jobs == 1
    assert summary.view.active_jobs_max == 5
    assert summary.live_keys == 1


def test_add_credits(world: World):
    account = world.account(credits=1)
    assert world.operator.add_credits(account.id, 9).credits_balance == 10
    assert world.fresh(account).credits_balance == 10


@pytest.mark.parametrize("amount", [0, -1])
def test_add_credits_positive_only(world: World, amount: int):
    account = world.account(credits=1)
    with pytest.raises(OperatorError):
        world.operator.add_credits(account.id, amount)
    assert world.fresh(account).credits_balance == 1


def test_unknown_ids_are_operator_errors(world: World):
    for call in (
        lambda: world.operator.show_account("acct_nope"),
        lambda: world.operator.add_credits("acct_nope", 1),
        lambda: world.operator.disable_account("acct_nope"),
        lambda: world.operator.enable_account("acct_nope"),
        lambda: world.operator.create_key("acct_nope"),
        lambda: world.operator.list_keys("acct_nope"),
        lambda: world.operator.revoke_key("key_nope"),
    ):
        with pytest.raises(OperatorError):
            call()
    assert world.store.state.keys == {}


def test_five_live_keys_at_most(world: World):
    account = world.account()
    made = [world.operator.create_key(account.id) for _ in range(5)]
    assert len({secret for _, secret in made}) == 5
    with pytest.raises(OperatorError):
        world.operator.create_key(account.id)
    assert len(world.operator.list_keys(account.id)) == 5
    world.operator.revoke_key(made[0][0].id)
    _, secret = world.operator.create_key(account.id)
    assert world.api.authenticate(f"Bearer {secret}", "192.0.2.1").id == account.id
    listed = world.operator.list_keys(account.id)
    assert len(listed) == 6
    assert sum(1 for k in listed if k.is_live) == 5
    with pytest.raises(OperatorError):
        world.operator.create_key(account.id)


def test_keys_are_per_account_for_the_limit(world: World):
    one = world.account()
    two = world.account()
    for _ in range(5):
        world.operator.create_key(one.id)
    world.operator.create_key(two.id)
    assert len(world.operator.list_keys(two.id)) == 1


def test_revoke_twice_is_harmless(world: World):
    account = world.account()
    key, _ = world.operator.create_key(account.id)
    first = world.operator.revoke_key(key.id)
    assert first.revoked_at == world.clock.now()
    world.clock.advance(100)
    second = world.operator.revoke_key(key.id)
    assert second.revoked_at == first.revoked_at
    assert world.store.state.keys[key.id] == first


def test_disable_and_enable(world: World):
    account = world.account(credits=3)
    job = world.submit(account).job
    canceled = world.operator.disable_account(account.id)
    assert [j.id for j in canceled] == [job.id]
    assert world.job(job.id).status is JobStatus.CANCELED
    assert world.fresh(account).disabled
    assert world.operator.disable_account(account.id) == []  # twice: nothing more happens
    enabled = world.operator.enable_account(account.id)
    assert enabled.disabled is False
    assert world.job(job.id).status is JobStatus.CANCELED  # enabling does not revive jobs
    assert world.fresh(account).credits_balance == 3
