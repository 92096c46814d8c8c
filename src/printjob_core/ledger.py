"""The credit ledger: every credit movement, written with the movement itself.

An entry records the account's figures after it applied, so the ledger both explains the
account (who added what, which job held, charged or released a credit) and checks it:
`replay` folds the entries back into a balance and a held amount, which must equal the
account's.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from printjob_core.model import Account, LedgerEntry, LedgerKind

#: How each kind moves (balance, held) per credit of its amount.
_EFFECT: dict[LedgerKind, tuple[int, int]] = {
    LedgerKind.ADD: (1, 0),
    LedgerKind.REMOVE: (-1, 0),
    LedgerKind.HOLD: (0, 1),
    LedgerKind.CHARGE: (-1, -1),
    LedgerKind.RELEASE: (0, -1),
}


def entry(
    after: Account,
    kind: LedgerKind,
    amount: int,
    at: datetime,
    *,
    job_id: str | None = None,
    reason: str | None = None,
) -> LedgerEntry:
    """The entry for a movement of `amount` credits that left the account as `after`."""
    return LedgerEntry(
        account_id=after.id,
        at=at,
        kind=kind,
        amount=amount,
        balance_after=after.credits_balance,
        held_after=after.credits_held,
        job_id=job_id,
        reason=reason,
    )


def replay(entries: Iterable[LedgerEntry]) -> tuple[int, int]:
    """The (balance, held) the entries add up to, from an account that started empty."""
    balance = held = 0
    for item in entries:
        to_balance, to_held = _EFFECT[item.kind]
        balance += to_balance * item.amount
        held += to_held * item.amount
    return balance, held


__all__ = ["entry", "replay"]
