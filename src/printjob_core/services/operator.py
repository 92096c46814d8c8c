"""The operator's commands: accounts, credits and keys (design.md, operator interface).

They raise `OperatorError`, never a Problem: the operator is not an API client.
"""

from __future__ import annotations

import re
import unicodedata

import attrs

from printjob_core import credits, ledger, lifecycle
from printjob_core.errors import OperatorError
from printjob_core.keys import MAX_LIVE_KEYS, new_key
from printjob_core.model import Account, ApiKey, Invite, Job, LedgerEntry, LedgerKind, Plan
from printjob_core.ports import UnitOfWork
from printjob_core.services.common import Ports, apply_transition, drop_upload
from printjob_core.sessions import hash_token, new_invite
from printjob_core.shapes import AccountView, account_view

#: What `--active-jobs-max` may be: the contract offers 3, 5 or 10 (decision 16).
ACTIVE_JOBS_CHOICES = (3, 5, 10)
#: The longest account name and reason kept (they are shown in one table row).
MAX_NAME_LENGTH = 200
MAX_REASON_LENGTH = 500
#: RFC 5321's limit on a forward path.
MAX_EMAIL_LENGTH = 254
#: One `@`, something before it, a dotted domain after it, no spaces: a shape check that
#: catches typing mistakes, not a proof that the mailbox exists.
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+")
#: The reason the opening credits of `accounts create --credits N` are recorded with.
OPENING_CREDITS = "opening credits"


def clean_name(name: str | None) -> str | None:
    """An account name as kept: trimmed, one line, at most `MAX_NAME_LENGTH` characters."""
    return _one_line(name, "--name", MAX_NAME_LENGTH)


def clean_email(email: str | None) -> str | None:
    """An e-mail address as kept: trimmed and lower-cased, of the shape `name@domain.tld`."""
    if email is None:
        return None
    address = email.strip().lower()
    if len(address) > MAX_EMAIL_LENGTH:
        raise OperatorError(f"--email may be at most {MAX_EMAIL_LENGTH} characters")
    if not _EMAIL.fullmatch(address) or _has_control(address):
        raise OperatorError(f"--email must look like name@example.com, not {email!r}")
    return address


def clean_reason(reason: str | None) -> str:
    """The reason an operator gives for taking credits back: required, one line."""
    kept = _one_line(reason, "--reason", MAX_REASON_LENGTH)
    if kept is None:
        raise OperatorError("--reason must say why the credits are taken back")
    return kept


def _one_line(text: str | None, what: str, limit: int) -> str | None:
    if text is None:
        return None
    kept = text.strip()
    if not kept:
        raise OperatorError(f"{what} must not be empty")
    if _has_control(kept):
        raise OperatorError(f"{what} must be one line of printable text")
    if len(kept) > limit:
        raise OperatorError(f"{what} may be at most {limit} characters, not {len(kept)}")
    return kept


def _has_control(text: str) -> bool:
    # Line breaks, tabs and escapes would break the one-row-per-account tables.
    return any(unicodedata.category(char).startswith("C") for char in text)


@attrs.frozen
class AccountSummary:
    """What the operator sees of an account."""

    account: Account
    view: AccountView
    live_keys: int


class OperatorService:
    """Accounts, credits and keys, as the `printjob` command line offers them."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.policy = ports.policy

    def create_account(
        self,
        credits_balance: int = 0,
        active_jobs_max: int = 3,
        *,
        name: str | None = None,
        email: str | None = None,
    ) -> Account:
        """A new account; opening credits are written to the ledger as an `add`."""
        if credits_balance < 0:
            raise OperatorError(f"credits must be 0 or more, not {credits_balance}")
        _check_active_jobs_max(active_jobs_max)
        account = Account(
            id=self.ports.ids.account_id(),
            created_at=self.ports.clock.now(),
            credits_balance=credits_balance,
            active_jobs_max=active_jobs_max,
            name=clean_name(name),
            email=clean_email(email),
        )
        with self.ports.uow() as uow:
            uow.accounts.add(account)
            if credits_balance:
                uow.ledger.add(
                    ledger.entry(
                        account,
                        LedgerKind.ADD,
                        credits_balance,
                        account.created_at,
                        reason=OPENING_CREDITS,
                    )
                )
            uow.commit()
        return account

    def list_accounts(self, *, disabled_only: bool = False) -> list[Account]:
        """Every account (or only the disabled ones), oldest first."""
        with self.ports.reader() as uow:
            return uow.accounts.list_all(disabled_only=disabled_only)

    def credit_history(self, account_id: str) -> list[LedgerEntry]:
        """The account's credit ledger, oldest entry first."""
        with self.ports.reader() as uow:
            _operator_account(uow, account_id)
            return uow.ledger.history(account_id)

    def set_active_jobs_max(self, account_id: str, active_jobs_max: int) -> Account:
        """Change how many unfinished jobs the account may have; jobs already accepted
        stay, only new submissions meet the new limit."""
        _check_active_jobs_max(active_jobs_max)
        with self.ports.uow() as uow:
            account = _operator_account(uow, account_id)
            account = attrs.evolve(account, active_jobs_max=active_jobs_max)
            uow.accounts.save(account)
            uow.commit()
        return account

    def show_account(self, account_id: str) -> AccountSummary:
        with self.ports.reader() as uow:
            account = _operator_account(uow, account_id)
            active = uow.jobs.count_unfinished(account_id)
            live = sum(1 for key in uow.keys.list_for(account_id) if key.is_live)
        return AccountSummary(account, account_view(account, active, self.policy), live)

    def add_credits(self, account_id: str, amount: int, reason: str | None = None) -> Account:
        kept_reason = _one_line(reason, "--reason", MAX_REASON_LENGTH)
        with self.ports.uow() as uow:
            account = credits.add(_operator_account(uow, account_id), amount)
            uow.accounts.save(account)
            uow.ledger.add(
                ledger.entry(
                    account, LedgerKind.ADD, amount, self.ports.clock.now(), reason=kept_reason
                )
            )
            uow.commit()
        return account

    def remove_credits(self, account_id: str, amount: int, reason: str) -> Account:
        """Take credits back, never below what unfinished jobs hold; the reason is kept."""
        kept_reason = clean_reason(reason)
        if amount <= 0:
            raise OperatorError(f"the amount must be a positive whole number, not {amount}")
        with self.ports.uow() as uow:
            account = _operator_account(uow, account_id)
            if amount > account.credits_available:
                raise OperatorError(
                    f"cannot remove {amount} credits from {account_id}: it has "
                    f"{max(account.credits_available, 0)} available ({account.credits_balance} "
                    f"balance, {account.credits_held} held by unfinished jobs)"
                )
            account = attrs.evolve(account, credits_balance=account.credits_balance - amount)
            uow.accounts.save(account)
            uow.ledger.add(
                ledger.entry(
                    account, LedgerKind.REMOVE, amount, self.ports.clock.now(), reason=kept_reason
                )
            )
            uow.commit()
        return account

    def disable_account(self, account_id: str) -> list[Job]:
        """Disable the account; its unfinished jobs become canceled, nothing charged."""
        now = self.ports.clock.now()
        changed: list[tuple[Job, Job]] = []
        with self.ports.uow() as uow:
            account = _operator_account(uow, account_id)
            uow.accounts.save(attrs.evolve(account, disabled=True))
            # Signed-in browsers of the account are signed out in the same transaction.
            uow.sessions.delete_for_account(account_id)
            for job in uow.jobs.unfinished_for(account_id):
                transition = lifecycle.cancel(job, now)
                apply_transition(uow, transition)
                changed.append((job, transition.job))
            uow.commit()
        for before, after in changed:
            drop_upload(self.ports.blobs, before, after)
        return [after for _, after in changed]

    def set_plan(self, account_id: str, plan: Plan | str) -> Account:
        """Put the account on the `free` or `monthly` plan; the website's quota follows at
        once (downloads already counted today stay counted)."""
        try:
            chosen = Plan(plan)
        except ValueError:
            raise OperatorError(f"the plan must be free or monthly, not {plan!r}") from None
        with self.ports.uow() as uow:
            account = attrs.evolve(_operator_account(uow, account_id), plan=chosen)
            uow.accounts.save(account)
            uow.commit()
        return account

    def invite(self, account_id: str, email: str) -> tuple[Invite, str]:
        """A one-time invite for someone to set a password for the account; the token is
        returned once (for the link) and only its hash is kept."""
        address = clean_email(email)
        if address is None:
            raise OperatorError("--email is required")
        token = self.ports.ids.secret_token()
        now = self.ports.clock.now()
        with self.ports.uow() as uow:
            _operator_account(uow, account_id)
            if uow.people.find_by_email(address) is not None:
                raise OperatorError(f"{address} already signs in to the website")
            invite = new_invite(hash_token(token), account_id, address, now)
            uow.invites.add(invite)
            uow.commit()
        return invite, token

    def enable_account(self, account_id: str) -> Account:
        with self.ports.uow() as uow:
            account = attrs.evolve(_operator_account(uow, account_id), disabled=False)
            uow.accounts.save(account)
            uow.commit()
        return account

    def create_key(self, account_id: str) -> tuple[ApiKey, str]:
        """A new key for the account; the secret is returned once and never stored."""
        secret = self.ports.ids.api_key()
        with self.ports.uow() as uow:
            _operator_account(uow, account_id)
            live = [key for key in uow.keys.list_for(account_id) if key.is_live]
            if len(live) >= MAX_LIVE_KEYS:
                raise OperatorError(
                    f"account {account_id} already has {MAX_LIVE_KEYS} live keys, the most "
                    "allowed; revoke one first"
                )
            key = new_key(self.ports.ids.key_id(), account_id, secret, self.ports.clock.now())
            uow.keys.add(key)
            uow.commit()
        return key, secret

    def list_keys(self, account_id: str) -> list[ApiKey]:
        with self.ports.reader() as uow:
            _operator_account(uow, account_id)
            return uow.keys.list_for(account_id)

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key; it stops working at once. Revoking a revoked key changes nothing."""
        with self.ports.uow() as uow:
            key = uow.keys.get(key_id)
            if key is None:
                raise OperatorError(f"no key {key_id!r}")
            if key.is_live:
                key = attrs.evolve(key, revoked_at=self.ports.clock.now())
                uow.keys.save(key)
                uow.commit()
        return key


def _check_active_jobs_max(active_jobs_max: int) -> None:
    if active_jobs_max not in ACTIVE_JOBS_CHOICES:
        raise OperatorError(f"--active-jobs-max must be 3, 5 or 10, not {active_jobs_max}")


def _operator_account(uow: UnitOfWork, account_id: str) -> Account:
    account = uow.accounts.get(account_id)
    if account is None:
        raise OperatorError(f"no account {account_id!r}")
    return account


__all__ = [
    "ACTIVE_JOBS_CHOICES",
    "MAX_EMAIL_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_REASON_LENGTH",
    "OPENING_CREDITS",
    "AccountSummary",
    "OperatorService",
    "clean_email",
    "clean_name",
    "clean_reason",
]
