"""Credit holds (contract 1.3-1.4): hold on accept, charge on success, release otherwise.

Invariant kept by every function here: 0 <= held <= balance is not required (an operator
may never lower a balance), but held >= 0 always, and held equals the number of the
account's unfinished jobs times the job cost. Each function returns a new Account.
"""

from __future__ import annotations

import attrs

from printjob_core.errors import InsufficientCredits, OperatorError
from printjob_core.model import Account

#: What one successful job costs (contract section 8).
JOB_COST = 1


def hold(account: Account, cost: int = JOB_COST) -> Account:
    """Set aside `cost` credits for a new job, or refuse with 402."""
    if account.credits_available < cost:
        raise InsufficientCredits(
            f"A job costs {cost} credit; this account has {max(account.credits_available, 0)} "
            f"available ({account.credits_balance} balance, {account.credits_held} held by "
            "unfinished jobs). Ask the operator to add credits."
        )
    return attrs.evolve(account, credits_held=account.credits_held + cost)


def charge(account: Account, cost: int = JOB_COST) -> Account:
    """Turn a job's hold into a charge: the file is ready."""
    _check_held(account, cost)
    return attrs.evolve(
        account,
        credits_balance=account.credits_balance - cost,
        credits_held=account.credits_held - cost,
    )


def release(account: Account, cost: int = JOB_COST) -> Account:
    """Give a job's hold back: it failed, was canceled or interrupted."""
    _check_held(account, cost)
    return attrs.evolve(account, credits_held=account.credits_held - cost)


def add(account: Account, amount: int) -> Account:
    """The operator adds credits by hand (the only way credits arrive)."""
    if amount <= 0:
        raise OperatorError(f"the amount must be a positive whole number, not {amount}")
    return attrs.evolve(account, credits_balance=account.credits_balance + amount)


def _check_held(account: Account, cost: int) -> None:
    if account.credits_held < cost:
        # A hold is always taken with the job in one transaction, so this means the
        # ledger was corrupted; refusing keeps the corruption from spreading.
        raise AssertionError(
            f"account {account.id} holds {account.credits_held} credits, cannot move {cost}"
        )
