"""Signing up, in and out; sessions; the sign-in limit; invites; password changes."""

from __future__ import annotations

import pytest

from printjob_core.errors import (
    BadCredentials,
    EmailTaken,
    InvalidParameter,
    InviteInvalid,
    NotSignedIn,
    PasswordRejected,
    SignInDisabled,
    SignInThrottled,
    SignUpClosed,
    SignUpThrottled,
)
from printjob_core.model import Plan
from printjob_core.sessions import csrf_valid, hash_token
from tests.unit.core.conftest import World
from tests.unit.core.website_support import CLIENT, PASSWORD, Site, make_site


@pytest.fixture
def site(world: World) -> Site:
    return make_site(world)


def test_sign_up_makes_a_free_account_with_no_credits_and_signs_in(site: Site) -> None:
    issued = site.website.sign_up("  Ada@Example.com ", PASSWORD, CLIENT)
    state = site.world.store.state
    account = state.accounts[issued.signed_in.account_id]
    assert (account.plan, account.credits_balance, account.email) == (
        Plan.FREE,
        0,
        "ada@example.com",
    )
    person = state.people[issued.signed_in.person_id]
    assert person.email == "ada@example.com"
    assert PASSWORD not in person.password_hash
    # Only the token's hash is kept; the session is the cookie's.
    assert issued.token not in state.sessions
    assert hash_token(issued.token) in state.sessions
    assert site.website.session(issued.token) == issued.signed_in
    assert csrf_valid(issued.token, issued.signed_in.csrf_token)


def test_sign_up_refuses_a_taken_email_a_bad_email_and_a_weak_password(site: Site) -> None:
    site.sign_up("ada@example.com")
    with pytest.raises(EmailTaken):
        site.website.sign_up("ADA@example.com", PASSWORD, CLIENT)
    with pytest.raises(InvalidParameter) as bad_email:
        site.website.sign_up("ada", PASSWORD, CLIENT)
    assert bad_email.value.param == "email"
    with pytest.raises(PasswordRejected):
        site.website.sign_up("bob@example.com", "short", CLIENT)
    assert len(site.world.store.state.accounts) == 1


def test_closed_sign_up_is_refused_but_invites_still_work(world: World) -> None:
    site = make_site(world, signup_open=False)
    with pytest.raises(SignUpClosed, match="Ask the operator for an invite"):
        site.sign_up()
    account = world.operator.create_account(5)
    _, token = world.operator.invite(account.id, "Bob@Example.com")
    assert site.website.invite(token).email == "bob@example.com"
    issued = site.website.accept_invite(token, PASSWORD)
    assert issued.signed_in.account_id == account.id
    assert site.website.sign_in("bob@example.com", PASSWORD, CLIENT).signed_in.account_id == (
        account.id
    )


def test_an_invite_works_once_and_not_after_seven_days(site: Site) -> None:
    account = site.world.operator.create_account()
    _, token = site.world.operator.invite(account.id, "bob@example.com")
    assert token not in site.world.store.state.invites
    site.website.accept_invite(token, PASSWORD)
    for use in (
        lambda: site.website.invite(token),
        lambda: site.website.accept_invite(token, PASSWORD),
    ):
        with pytest.raises(InviteInvalid):
            use()
    _, late = site.world.operator.invite(account.id, "carol@example.com")
    site.world.clock.advance(7 * 86400)
    with pytest.raises(InviteInvalid):
        site.website.accept_invite(late, PASSWORD)
    for odd in ("", "nonsense", "x" * 500):
        with pytest.raises(InviteInvalid):
            site.website.invite(odd)


def test_an_invite_keeps_the_password_policy_and_spends_nothing_when_refused(site: Site) -> None:
    account = site.world.operator.create_account()
    _, token = site.world.operator.invite(account.id, "bob@example.com")
    with pytest.raises(PasswordRejected):
        site.website.accept_invite(token, "bob@example.com")
    assert site.website.accept_invite(token, PASSWORD).signed_in.email == "bob@example.com"


def test_sign_in_gives_a_new_session_each_time_and_sign_out_ends_one(site: Site) -> None:
    first = site.sign_up()
    second = site.website.sign_in("ADA@example.com", PASSWORD, CLIENT)
    assert first.token != second.token
    site.website.sign_out(first.token)
    with pytest.raises(NotSignedIn):
        site.website.session(first.token)
    assert site.website.session(second.token).email == "ada@example.com"
    site.website.sign_out(first.token)  # again: nothing to do
    site.website.sign_out(None)


def test_one_wording_for_an_unknown_email_and_a_wrong_password(site: Site) -> None:
    site.sign_up()
    with pytest.raises(BadCredentials) as wrong_password:
        site.website.sign_in("ada@example.com", "not the password", CLIENT)
    with pytest.raises(BadCredentials) as unknown:
        site.website.sign_in("nobody@example.com", PASSWORD, CLIENT)
    assert wrong_password.value.detail == unknown.value.detail


def test_five_failures_for_one_email_stop_even_the_right_password(site: Site) -> None:
    site.sign_up()
    for n in range(5):
        with pytest.raises(BadCredentials):
            site.website.sign_in("ada@example.com", "wrong", f"198.51.100.{n}")
    with pytest.raises(SignInThrottled) as throttled:
        site.website.sign_in("ada@example.com", PASSWORD, "198.51.100.99")
    assert throttled.value.retry_after == 15 * 60
    assert "try again in 15 minutes" in throttled.value.detail
    site.world.clock.advance(15 * 60)
    assert site.website.sign_in("ada@example.com", PASSWORD, CLIENT).signed_in.email


def test_ten_failures_from_one_address_stop_every_email_from_it(site: Site) -> None:
    site.sign_up()
    for n in range(10):
        with pytest.raises(BadCredentials):
            site.website.sign_in(f"guess{n}@example.com", "wrong", CLIENT)
    with pytest.raises(SignInThrottled):
        site.website.sign_in("ada@example.com", PASSWORD, CLIENT)
    # Another address is not affected.
    assert site.website.sign_in("ada@example.com", PASSWORD, "192.0.2.1").signed_in


def test_a_success_forgets_the_emails_failures(site: Site) -> None:
    site.sign_up()
    for _ in range(4):
        with pytest.raises(BadCredentials):
            site.website.sign_in("ada@example.com", "wrong", CLIENT)
    site.website.sign_in("ada@example.com", PASSWORD, CLIENT)
    for _ in range(4):
        with pytest.raises(BadCredentials):
            site.website.sign_in("ada@example.com", "wrong", CLIENT)
    assert site.website.sign_in("ada@example.com", PASSWORD, CLIENT).signed_in


def test_a_huge_password_is_refused_without_hashing_it(site: Site) -> None:
    site.sign_up()
    with pytest.raises(BadCredentials):
        site.website.sign_in("ada@example.com", "x" * 1_000_000, CLIENT)


def test_sessions_end_after_a_week_idle_and_a_month_in_all(site: Site) -> None:
    token = site.sign_up().token
    site.world.clock.advance(7 * 86400 - 1)
    site.website.session(token)  # seen: the idle week starts again
    site.world.clock.advance(7 * 86400 - 1)
    site.website.session(token)
    site.world.clock.advance(7 * 86400)
    with pytest.raises(NotSignedIn):
        site.website.session(token)
    busy = site.website.sign_in("ada@example.com", PASSWORD, CLIENT).token
    for _ in range(29):
        site.world.clock.advance(86400)
        site.website.session(busy)
    site.world.clock.advance(86400)
    with pytest.raises(NotSignedIn):
        site.website.session(busy)


def test_last_seen_is_written_at_most_once_a_minute(site: Site) -> None:
    token = site.sign_up().token
    commits = site.world.store.commits
    site.world.clock.advance(30)
    site.website.session(token)
    assert site.world.store.commits == commits
    site.world.clock.advance(30)
    site.website.session(token)
    assert site.world.store.commits == commits + 1
    stored = site.world.store.state.sessions[hash_token(token)]
    assert stored.last_seen_at == site.world.clock.now()


@pytest.mark.parametrize("cookie", [None, "", "unknown-token", "x" * 1000])
def test_a_missing_or_unknown_cookie_is_not_signed_in(site: Site, cookie: str | None) -> None:
    with pytest.raises(NotSignedIn) as refused:
        site.website.session(cookie)
    assert (refused.value.code, refused.value.status) == ("not_signed_in", 401)


def test_a_disabled_account_is_signed_out_at_once_and_cannot_sign_in(site: Site) -> None:
    issued = site.sign_up()
    site.world.operator.disable_account(issued.signed_in.account_id)
    assert site.world.store.state.sessions == {}
    with pytest.raises(NotSignedIn):
        site.website.session(issued.token)
    with pytest.raises(SignInDisabled, match="disabled"):
        site.website.sign_in("ada@example.com", PASSWORD, CLIENT)
    # The wrong password still says only "wrong": disabled tells a guesser nothing.
    with pytest.raises(BadCredentials):
        site.website.sign_in("ada@example.com", "wrong password", CLIENT)
    site.world.operator.enable_account(issued.signed_in.account_id)
    assert site.website.sign_in("ada@example.com", PASSWORD, CLIENT).signed_in


def test_changing_the_password_ends_every_other_session(site: Site) -> None:
    here = site.sign_up()
    elsewhere = site.website.sign_in("ada@example.com", PASSWORD, "192.0.2.9")
    changed = site.website.change_password(here.signed_in, PASSWORD, "a new passphrase")
    for old in (here.token, elsewhere.token):
        with pytest.raises(NotSignedIn):
            site.website.session(old)
    assert site.website.session(changed.token).person_id == here.signed_in.person_id
    with pytest.raises(BadCredentials):
        site.website.sign_in("ada@example.com", PASSWORD, CLIENT)
    assert site.website.sign_in("ada@example.com", "a new passphrase", CLIENT).signed_in


def test_a_wrong_current_password_changes_nothing_and_counts_as_a_failure(site: Site) -> None:
    here = site.sign_up()
    for _ in range(5):
        with pytest.raises(BadCredentials, match="current password"):
            site.website.change_password(here.signed_in, "wrong", "a new passphrase")
    with pytest.raises(SignInThrottled):
        site.website.change_password(here.signed_in, PASSWORD, "a new passphrase")
    assert site.website.session(here.token).email == "ada@example.com"
    with pytest.raises(PasswordRejected):
        site.world.clock.advance(15 * 60)
        site.website.change_password(here.signed_in, PASSWORD, "short")


def test_five_sign_ups_a_day_from_one_network_then_wait_or_be_invited(site: Site) -> None:
    for n in range(5):
        site.website.sign_up(f"user{n}@example.com", PASSWORD, CLIENT)
        site.world.clock.advance(60)
    with pytest.raises(SignUpThrottled) as refused:
        site.website.sign_up("user5@example.com", PASSWORD, CLIENT)
    # The first of the five (made 5 minutes ago) ages out a day after it was made.
    assert refused.value.retry_after == 86400 - 5 * 60
    assert "invite" in refused.value.detail
    assert len(site.world.store.state.accounts) == 5
    # Failed sign-ins in between do not sweep the day's sign-ups away.
    site.world.clock.advance(20 * 60)
    with pytest.raises(BadCredentials):
        site.website.sign_in("user0@example.com", "wrong", CLIENT)
    with pytest.raises(SignUpThrottled):
        site.website.sign_up("user5@example.com", PASSWORD, CLIENT)
    # Another network signs up at once; the first network once the oldest has aged out.
    site.website.sign_up("other@example.com", PASSWORD, "192.0.2.1")
    site.world.clock.advance(86400 - 25 * 60)
    assert site.website.sign_up("user5@example.com", PASSWORD, CLIENT).signed_in


def test_no_sign_up_limit_when_the_operator_sets_none(world: World) -> None:
    site = make_site(world, sign_ups_per_day=0)
    for n in range(12):
        site.website.sign_up(f"user{n}@example.com", PASSWORD, CLIENT)
    assert len(world.store.state.accounts) == 12
