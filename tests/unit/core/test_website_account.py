"""The account page and its API keys."""

from __future__ import annotations

from datetime import timedelta

import attrs
import pytest

from printjob_core.errors import (
    InvalidParameter,
    KeyLimitReached,
    NotFound,
    OperatorError,
    ServerBusy,
    Unauthenticated,
)
from printjob_core.model import JobChannel, Plan
from printjob_core.ports import UnitOfWork
from printjob_core.services import ApiService
from tests.keyed_reads import ADDRESS
from tests.unit.core.conftest import World
from tests.unit.core.website_support import Site, make_site


@pytest.fixture
def site(world: World) -> Site:
    return make_site(world)


def test_the_account_page_shows_plan_quota_credits_jobs_and_keys(site: Site) -> None:
    me = site.person()
    site.world.operator.add_credits(me.account_id, 7)
    site.world.operator.set_plan(me.account_id, "monthly")
    created = site.website.create_key(me, "laptop")
    site.world.submit(site.world.fresh(me.account_id))
    site.convert(me)
    page = site.website.account_page(me)
    assert (page.email, page.account_id, page.plan) == (
        "ada@example.com",
        me.account_id,
        Plan.MONTHLY,
    )
    assert (page.quota.used, page.quota.limit) == (0, None)
    assert (page.credits_balance, page.credits_held, page.credits_available) == (7, 1, 6)
    assert (page.active_jobs, page.website_active_jobs, page.active_jobs_max) == (1, 1, 3)
    assert page.keys == (created.key,) and page.keys_max == 5
    assert [job.channel for job in page.recent_jobs] == [JobChannel.WEBSITE, JobChannel.API]


def test_a_key_made_on_the_page_works_on_the_api_and_is_shown_once(site: Site) -> None:
    me = site.person()
    created = site.website.create_key(me, "  CI runner ")
    assert created.key.label == "CI runner"
    assert created.key.hint == "pjk1_…" + created.api_key[-4:]
    stored = site.world.store.state.keys[created.key.id]
    assert created.api_key not in (stored.key_hash, stored.hint)
    account = site.world.api.authenticate(f"Bearer {created.api_key}", ADDRESS)
    assert account.id == me.account_id


def test_a_sixth_live_key_is_refused_until_one_is_revoked(site: Site) -> None:
    me = site.person()
    keys = [site.website.create_key(me, f"key {n}") for n in range(5)]
    with pytest.raises(KeyLimitReached, match="Revoke one"):
        site.website.create_key(me, "sixth")
    site.website.revoke_key(me, keys[0].key.id)
    assert site.website.create_key(me, "sixth").key.label == "sixth"
    assert len(site.website.account_page(me).keys) == 5


def test_a_revoked_key_stops_working_at_once(site: Site) -> None:
    me = site.person()
    created = site.website.create_key(me, "")
    site.website.revoke_key(me, created.key.id)
    with pytest.raises(Unauthenticated):
        site.world.api.authenticate(f"Bearer {created.api_key}", ADDRESS)
    site.website.revoke_key(me, created.key.id)  # again: nothing changes
    assert site.website.account_page(me).keys == ()


def test_only_the_accounts_own_keys_can_be_revoked(site: Site) -> None:
    me, other = site.person(), site.person("bob@example.com")
    theirs = site.website.create_key(other, "theirs")
    for key_id in (theirs.key.id, "key_0000000000000099", "not-a-key", "key_\x00"):
        with pytest.raises(NotFound):
            site.website.revoke_key(me, key_id)
    assert site.world.store.state.keys[theirs.key.id].is_live


@pytest.mark.parametrize("label", ["x" * 101, "two\nlines", "tab\there"])
def test_a_key_label_is_one_short_line(site: Site, label: str) -> None:
    with pytest.raises(InvalidParameter) as refused:
        site.website.create_key(site.person(), label)
    assert refused.value.param == "label"


def test_last_used_is_written_on_authentication_at_most_once_a_minute(site: Site) -> None:
    me = site.person()
    created = site.website.create_key(me, "")
    assert created.key.last_used_at is None
    authorization = f"Bearer {created.api_key}"
    site.world.api.account_for_key(authorization, ADDRESS)
    first = site.world.clock.now()
    commits = site.world.store.commits
    site.world.clock.advance(59)
    site.world.api.account_for_key(authorization, ADDRESS)
    site.world.api.authenticate(authorization, ADDRESS)
    assert site.world.store.commits == commits
    assert site.website.account_page(me).keys[0].last_used_at == first
    site.world.clock.advance(1)
    site.world.api.authenticate(authorization, ADDRESS)
    assert site.website.account_page(me).keys[0].last_used_at == site.world.clock.now()


def test_a_revoke_is_never_undone_by_a_late_last_used_write(world: World) -> None:
    key, secret = world.operator.create_key(world.account().id)
    world.operator.revoke_key(key.id)
    with world.store.unit_of_work() as uow:
        uow.keys.touch(key.id, world.clock.now())
        uow.commit()
    assert not world.store.state.keys[key.id].is_live
    with pytest.raises(Unauthenticated):
        world.api.authenticate(f"Bearer {secret}", ADDRESS)


def test_the_operator_sets_the_plan_and_refuses_other_plans(world: World) -> None:
    account = world.account()
    assert account.plan is Plan.FREE
    assert world.operator.set_plan(account.id, "monthly").plan is Plan.MONTHLY
    assert world.fresh(account).plan is Plan.MONTHLY
    with pytest.raises(OperatorError, match="free or monthly, not 'gold'"):
        world.operator.set_plan(account.id, "gold")
    with pytest.raises(OperatorError, match="no account"):
        world.operator.set_plan("acct_nope", Plan.FREE)


def test_the_operator_invites_by_email_to_an_existing_account(site: Site) -> None:
    account = site.world.account()
    invite, token = site.world.operator.invite(account.id, " Bob@Example.com ")
    assert (invite.email, invite.account_id) == ("bob@example.com", account.id)
    assert invite.expires_at == invite.created_at + timedelta(days=7)
    assert len(token) >= 40
    with pytest.raises(OperatorError, match="no account"):
        site.world.operator.invite("acct_nope", "bob@example.com")
    with pytest.raises(OperatorError, match="--email"):
        site.world.operator.invite(account.id, "bob")
    site.person("carol@example.com")
    with pytest.raises(OperatorError, match="already signs in"):
        site.world.operator.invite(account.id, "Carol@example.com")


def test_a_busy_database_never_fails_a_request_for_the_keys_last_use(world: World) -> None:
    key, secret = world.operator.create_key(world.account().id)

    def busy() -> UnitOfWork:
        raise ServerBusy("the database is busy")

    api = ApiService(attrs.evolve(world.ports, uow=busy))
    assert api.authenticate(f"Bearer {secret}", ADDRESS).id == key.account_id
    assert api.account_for_key(f"Bearer {secret}", ADDRESS).credits_balance == 10
    assert world.store.state.keys[key.id].last_used_at is None
