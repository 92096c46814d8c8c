"""The credit ledger and the operator's commands that move credits or change limits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from printjob_core import ledger
from printjob_core.errors import OperatorError
from printjob_core.model import LedgerEntry, LedgerKind
from printjob_core.services.operator import (
    MAX_NAME_LENGTH,
    OPENING_CREDITS,
    clean_email,
    clean_name,
    clean_reason,
)

from .conftest import World, output


def history(world: World, account_id: str) -> list[tuple[LedgerKind, int, str | None]]:
    return [(e.kind, e.amount, e.job_id) for e in world.operator.credit_history(account_id)]


def replays(world: World, account_id: str) -> bool:
    account = world.fresh(account_id)
    entries = world.operator.credit_history(account_id)
    return ledger.replay(entries) == (account.credits_balance, account.credits_held)


def test_opening_credits_are_an_add_and_none_writes_nothing(world: World) -> None:
    funded = world.operator.create_account(5)
    empty = world.operator.create_account(0)
    (entry,) = world.operator.credit_history(funded.id)
    assert entry == LedgerEntry(
        account_id=funded.id,
        at=world.clock.now(),
        kind=LedgerKind.ADD,
        amount=5,
        balance_after=5,
        held_after=0,
        reason=OPENING_CREDITS,
        id=entry.id,
    )
    assert world.operator.credit_history(empty.id) == []


def test_hold_charge_and_release_are_written_with_their_job(world: World) -> None:
    account = world.account(credits=3)
    kept = world.submit(account).job
    dropped = world.submit(account).job
    world.clock.advance(5)
    claim = world.claim()
    assert claim.job.id == kept.id
    world.runner.succeed(claim, output())
    world.api.cancel(world.fresh(account), dropped.id)
    assert history(world, account.id) == [
        (LedgerKind.ADD, 3, None),
        (LedgerKind.HOLD, 1, kept.id),
        (LedgerKind.HOLD, 1, dropped.id),
        (LedgerKind.CHARGE, 1, kept.id),
        (LedgerKind.RELEASE, 1, dropped.id),
    ]
    entries = world.operator.credit_history(account.id)
    assert entries[1].at == kept.created_at
    assert entries[3].at == world.job(kept.id).finished_at == world.clock.now()
    assert [(e.balance_after, e.held_after) for e in entries] == [
        (3, 0),
        (3, 1),
        (3, 2),
        (2, 1),
        (2, 0),
    ]
    assert replays(world, account.id)


def test_a_refused_submission_writes_nothing(world: World) -> None:
    account = world.account(credits=0)
    with pytest.raises(Exception, match="credit"):
        world.submit(account)
    assert world.operator.credit_history(account.id) == []


def test_disable_releases_every_unfinished_job_in_the_ledger(world: World) -> None:
    account = world.account(credits=4)
    jobs = [world.submit(account).job for _ in range(2)]
    world.operator.disable_account(account.id)
    released = [
        e for e in world.operator.credit_history(account.id) if e.kind is LedgerKind.RELEASE
    ]
    assert sorted(e.job_id or "" for e in released) == sorted(j.id for j in jobs)
    assert replays(world, account.id)


def test_add_and_remove_keep_their_reason(world: World) -> None:
    account = world.account(credits=10)
    world.operator.add_credits(account.id, 2, reason="  goodwill ")
    after = world.operator.remove_credits(account.id, 7, "refund for job 12")
    assert (after.credits_balance, world.fresh(account).credits_balance) == (5, 5)
    entries = world.operator.credit_history(account.id)
    assert [(e.kind, e.amount, e.reason) for e in entries[1:]] == [
        (LedgerKind.ADD, 2, "goodwill"),
        (LedgerKind.REMOVE, 7, "refund for job 12"),
    ]
    assert entries[-1].balance_after == 5
    assert replays(world, account.id)


def test_remove_never_goes_below_what_is_held(world: World) -> None:
    account = world.account(credits=3)
    world.submit(account)
    world.submit(account)
    with pytest.raises(OperatorError, match="1 available"):
        world.operator.remove_credits(account.id, 2, "refund")
    assert world.fresh(account).credits_balance == 3
    assert world.operator.remove_credits(account.id, 1, "refund").credits_available == 0
    with pytest.raises(OperatorError, match="0 available"):
        world.operator.remove_credits(account.id, 1, "refund")
    assert replays(world, account.id)


@pytest.mark.parametrize("reason", [None, "", "   ", "two\nlines", "x" * 501])
def test_remove_needs_a_one_line_reason(world: World, reason: str | None) -> None:
    account = world.account(credits=3)
    with pytest.raises(OperatorError, match="--reason"):
        world.operator.remove_credits(account.id, 1, reason)  # type: ignore[arg-type]
    assert world.fresh(account).credits_balance == 3
    assert len(world.operator.credit_history(account.id)) == 1


@pytest.mark.parametrize("amount", [0, -1])
def test_remove_positive_amounts_only(world: World, amount: int) -> None:
    account = world.account(credits=3)
    with pytest.raises(OperatorError, match="amount"):
        world.operator.remove_credits(account.id, amount, "refund")


def test_limits_change_what_new_submissions_meet(world: World) -> None:
    account = world.account(credits=20, active_jobs_max=3)
    for _ in range(3):
        world.submit(account)
    world.operator.set_active_jobs_max(account.id, 5)
    assert world.fresh(account).active_jobs_max == 5
    world.submit(account)
    world.operator.set_active_jobs_max(account.id, 3)
    assert len(world.store.state.jobs) == 4, "lowering the limit cancels nothing"
    with pytest.raises(OperatorError, match="3, 5 or 10"):
        world.operator.set_active_jobs_max(account.id, 4)
    with pytest.raises(OperatorError, match="no account"):
        world.operator.set_active_jobs_max("acct_nobody", 5)


def test_accounts_are_listed_oldest_first(world: World) -> None:
    first = world.operator.create_account(name="First", email="First@Example.com")
    world.clock.advance(1)
    second = world.operator.create_account()
    world.operator.disable_account(first.id)
    assert [a.id for a in world.operator.list_accounts()] == [first.id, second.id]
    (disabled,) = world.operator.list_accounts(disabled_only=True)
    assert (disabled.id, disabled.name, disabled.email) == (first.id, "First", "first@example.com")


def test_names_emails_and_reasons_are_cleaned_or_refused() -> None:
    assert clean_name(None) is None and clean_email(None) is None
    assert clean_name(" Ada ") == "Ada"
    assert clean_name("x" * MAX_NAME_LENGTH) == "x" * MAX_NAME_LENGTH
    assert clean_email(" Ada.L+print@Example.co.UK ") == "ada.l+print@example.co.uk"
    assert clean_reason(" refund ") == "refund"
    for bad_email in ("ada", "@example.com", "ada@", "ada@example", "a@b@c.d", "a d@e.f", "a@.b"):
        with pytest.raises(OperatorError, match="--email"):
            clean_email(bad_email)
    for bad_name in ("", " ", "a\tb", "a\x1bb", "x" * (MAX_NAME_LENGTH + 1)):
        with pytest.raises(OperatorError, match="--name"):
            clean_name(bad_name)


def test_replay_folds_each_kind() -> None:
    def entry(kind: LedgerKind, amount: int) -> LedgerEntry:
        return LedgerEntry("acct", datetime(2026, 1, 1, tzinfo=UTC), kind, amount, 0, 0)

    moves = [
        entry(LedgerKind.ADD, 10),
        entry(LedgerKind.HOLD, 3),
        entry(LedgerKind.CHARGE, 1),
        entry(LedgerKind.RELEASE, 1),
        entry(LedgerKind.REMOVE, 2),
    ]
    assert ledger.replay(moves) == (7, 1)
    assert ledger.replay([]) == (0, 0)
