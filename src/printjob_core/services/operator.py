"""The operator's commands: accounts, credits and keys (design.md, operator interface).

They raise `OperatorError`, never a Problem: the operator is not an API client.
"""

from __future__ import annotations

import attrs

from printjob_core import credits, lifecycle
from printjob_core.errors import OperatorError
from printjob_core.keys import MAX_LIVE_KEYS, hash_key, key_hint
from printjob_core.model import Account, ApiKey, Job
from printjob_core.ports import UnitOfWork
from printjob_core.services.common import Ports, apply_transition, drop_upload
from printjob_core.shapes import AccountView, account_view

#: What `--active-jobs-max` may be: the contract offers 3, 5 or 10 (decision 16).
ACTIVE_JOBS_CHOICES = (3, 5, 10)


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

    def create_account(self, credits_balance: int = 0, active_jobs_max: int = 3) -> Account:
        if credits_balance < 0:
            raise OperatorError(f"credits must be 0 or more, not {credits_balance}")
        if active_jobs_max not in ACTIVE_JOBS_CHOICES:
            raise OperatorError(f"--active-jobs-max must be 3, 5 or 10, not {active_jobs_max}")
        account = Account(
            id=self.ports.ids.account_id(),
            created_at=self.ports.clock.now(),
            credits_balance=credits_balance,
            active_jobs_max=active_jobs_max,
        )
        with self.ports.uow() as uow:
            uow.accounts.add(account)
            uow.commit()
        return account

    def show_account(self, account_id: str) -> AccountSummary:
        with self.ports.reader() as uow:
            account = _operator_account(uow, account_id)
            active = uow.jobs.count_unfinished(account_id)
            live = sum(1 for key in uow.keys.list_for(account_id) if key.is_live)
        return AccountSummary(account, account_view(account, active, self.policy), live)

    def add_credits(self, account_id: str, amount: int) -> Account:
        with self.ports.uow() as uow:
            account = credits.add(_operator_account(uow, account_id), amount)
            uow.accounts.save(account)
            uow.commit()
        return account

    def disable_account(self, account_id: str) -> list[Job]:
        """Disable the account; its unfinished jobs become canceled, nothing charged."""
        now = self.ports.clock.now()
        changed: list[tuple[Job, Job]] = []
        with self.ports.uow() as uow:
            account = _operator_account(uow, account_id)
            uow.accounts.save(attrs.evolve(account, disabled=True))
            for job in uow.jobs.unfinished_for(account_id):
                transition = lifecycle.cancel(job, now)
                apply_transition(uow, transition)
                changed.append((job, transition.job))
            uow.commit()
        for before, after in changed:
            drop_upload(self.ports.blobs, before, after)
        return [after for _, after in changed]

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
            key = ApiKey(
                id=self.ports.ids.key_id(),
                account_id=account_id,
                key_hash=hash_key(secret),
                hint=key_hint(secret),
                created_at=self.ports.clock.now(),
            )
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


def _operator_account(uow: UnitOfWork, account_id: str) -> Account:
    account = uow.accounts.get(account_id)
    if account is None:
        raise OperatorError(f"no account {account_id!r}")
    return account


__all__ = ["ACTIVE_JOBS_CHOICES", "AccountSummary", "OperatorService"]
