"""Reading a job or an account in tests the way the server does: with an API key.

The server answers `GET /v1/jobs/{id}` and `GET /v1/account` with the keyed reads
(`ApiService.job_for_key`, `account_for_key`); there is no other read path to test.
A test that holds an `Account` gets a key made for it once, on first use.
"""

from __future__ import annotations

import attrs

from printjob_core.model import Account, Job
from printjob_core.services import ApiService, OperatorService
from printjob_core.shapes import AccountView

#: The client address of every test read (TEST-NET-1).
ADDRESS = "192.0.2.1"


@attrs.define
class KeyedReads:
    api: ApiService
    operator: OperatorService
    _authorizations: dict[str, str] = attrs.field(factory=dict, init=False)

    def authorization(self, account: Account | str) -> str:
        """`Bearer <key>` of a key made for the account on first use."""
        account_id = account if isinstance(account, str) else account.id
        if account_id not in self._authorizations:
            _, secret = self.operator.create_key(account_id)
            self._authorizations[account_id] = f"Bearer {secret}"
        return self._authorizations[account_id]

    def job(self, account: Account | str, job_id: str) -> Job:
        return self.api.job_for_key(self.authorization(account), ADDRESS, job_id)

    def account(self, account: Account | str) -> AccountView:
        return self.api.account_for_key(self.authorization(account), ADDRESS)


__all__ = ["ADDRESS", "KeyedReads"]
