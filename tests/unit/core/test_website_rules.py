"""The website's pure rules: password policy, sessions, CSRF tokens, the quota, the
sign-in limit's arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from printjob_core.errors import InvalidParameter, PasswordRejected
from printjob_core.model import Person, Plan
from printjob_core.passwords import check_password, clean_email, password_problem
from printjob_core.quota import next_reset, quota_day, quota_exhausted, quota_view
from printjob_core.sessions import (
    csrf_token_for,
    csrf_valid,
    hash_token,
    is_live,
    needs_touch,
    new_session,
    plausible_token,
    session_ends_at,
)
from printjob_core.signins import address_bucket, seconds_to_wait

NOW = datetime(2026, 3, 4, 22, 30, tzinfo=UTC)
PERSON = Person("person_1", "acct_1", "ada@example.com", "h", NOW, NOW)


@pytest.mark.parametrize(
    ("password", "reason"),
    [
        ("short1234", "at least 10 characters"),
        ("x" * 257, "at most 256 characters"),
        ("aaaaaaaaaaaa", "one character repeated"),
        ("Ada@Example.com", "not be your email"),
    ],
)
def test_the_password_policy_says_which_rule_a_password_breaks(password: str, reason: str) -> None:
    with pytest.raises(PasswordRejected, match=reason) as refused:
        check_password(password, "ada@example.com")
    assert refused.value.code == "password_rejected"


@pytest.mark.parametrize(
    "password", ["correct horse", "0123456789", "ŵŷŵŷŵŷŵŷŵŷ", "xy" * 128, "lowercaseonly"]
)
def test_no_composition_rules_length_is_enough(password: str) -> None:
    assert password_problem(password, "ada@example.com") is None


def test_emails_are_trimmed_lower_cased_and_of_a_plausible_shape() -> None:
    assert clean_email("  Ada@Example.COM ") == "ada@example.com"
    for bad in ("", "ada", "ada@example", "a b@example.com", "ada@@example.com", "a\x00@x.io"):
        with pytest.raises(InvalidParameter) as refused:
            clean_email(bad)
        assert refused.value.param == "email"


def test_a_session_ends_after_a_week_idle_or_a_month_whatever_happens() -> None:
    session = new_session(hash_token("t"), PERSON, NOW)
    assert session.expires_at == NOW + timedelta(days=30)
    assert is_live(session, NOW + timedelta(days=7) - timedelta(seconds=1))
    assert not is_live(session, NOW + timedelta(days=7))
    busy = session
    for day in range(1, 30):
        busy = attrs.evolve(busy, last_seen_at=NOW + timedelta(days=day))
        assert session_ends_at(busy) == min(busy.last_seen_at + timedelta(days=7), busy.expires_at)
    assert not is_live(busy, NOW + timedelta(days=30))


def test_last_seen_is_written_at_most_once_a_minute() -> None:
    session = new_session(hash_token("t"), PERSON, NOW)
    assert not needs_touch(session, NOW + timedelta(seconds=59))
    assert needs_touch(session, NOW + timedelta(seconds=60))


def test_tokens_are_stored_as_sha256_and_odd_cookies_are_not_looked_up() -> None:
    assert hash_token("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert plausible_token("x" * 43)
    for odd in (None, "", "x" * 129, "tökén"):
        assert not plausible_token(odd)


def test_csrf_tokens_belong_to_one_session_and_reveal_nothing_of_it() -> None:
    token = "a-session-token"
    csrf = csrf_token_for(token)
    assert csrf == csrf_token_for(token) and token not in csrf
    assert csrf_valid(token, csrf)
    assert not csrf_valid("another-session", csrf)
    assert not csrf_valid(token, "")
    assert not csrf_valid(token, csrf[:-1] + ("0" if csrf[-1] != "0" else "1"))


def test_the_quota_day_is_the_utc_day_and_resets_at_utc_midnight() -> None:
    late = datetime(2026, 3, 4, 23, 59, 59, tzinfo=UTC)
    assert quota_day(late).isoformat() == "2026-03-04"
    assert next_reset(late) == datetime(2026, 3, 5, tzinfo=UTC)
    assert next_reset(datetime(2026, 3, 5, tzinfo=UTC)) == datetime(2026, 3, 6, tzinfo=UTC)


def test_free_is_five_a_day_and_monthly_has_no_cap() -> None:
    free = quota_view(Plan.FREE, 4, NOW)
    assert (free.limit, free.remaining, free.exhausted) == (5, 1, False)
    assert quota_view(Plan.FREE, 5, NOW).exhausted
    monthly = quota_view(Plan.MONTHLY, 500, NOW)
    assert (monthly.limit, monthly.remaining, monthly.exhausted) == (None, None, False)


def test_the_quota_refusal_says_when_it_resets_and_that_monthly_has_no_cap() -> None:
    refusal = quota_exhausted(quota_view(Plan.FREE, 5, NOW), NOW)
    assert refusal.code == "quota_exhausted" and refusal.status == 429
    assert refusal.resets_at == datetime(2026, 3, 5, tzinfo=UTC)
    assert refusal.retry_after == 90 * 60
    assert "2026-03-05 00:00 UTC" in refusal.detail and "1 h 30 min" in refusal.detail
    assert "monthly plan has no daily cap" in refusal.detail


def test_the_sign_in_limit_waits_until_enough_failures_age_out() -> None:
    failures = [NOW - timedelta(minutes=14), NOW - timedelta(minutes=10), NOW]
    assert seconds_to_wait(failures, 4, NOW) is None
    assert seconds_to_wait(failures, 3, NOW) == 60
    assert seconds_to_wait(failures, 2, NOW) == 5 * 60
    assert address_bucket("2001:db8::1") == address_bucket("2001:db8::2")
