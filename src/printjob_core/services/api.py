"""The client-facing services together: what the HTTP shell is given.

One object per actor does the work (`Access`, `Submissions`, `Jobs`); `ApiService` holds
the three over one set of ports, so the composition root wires one thing and a test of
the whole client side needs one name.
"""

from __future__ import annotations

from collections.abc import Iterable

from printjob_core.model import Account, Job
from printjob_core.services.access import Access
from printjob_core.services.common import Ports
from printjob_core.services.jobs import Jobs
from printjob_core.services.submissions import Submission, Submissions
from printjob_core.shapes import AccountView


class ApiService:
    """The six operations of the API, minus the OpenAPI document."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.policy = ports.policy
        self.access = Access(ports)
        self.submissions = Submissions(ports, self.access)
        self.jobs = Jobs(ports, self.access)

    def authenticate(self, authorization: str | None, client_address: str) -> Account:
        return self.access.authenticate(authorization, client_address)

    def submit(
        self,
        account: Account,
        fields: Iterable[tuple[str, str]],
        image: bytes | None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> Submission:
        return self.submissions.submit(account, fields, image, idempotency_key, request_id)

    def job_for_key(self, authorization: str | None, client_address: str, job_id: str) -> Job:
        return self.jobs.job_for_key(authorization, client_address, job_id)

    def account_for_key(self, authorization: str | None, client_address: str) -> AccountView:
        return self.jobs.account_for_key(authorization, client_address)

    def cancel(self, account: Account, job_id: str) -> Job:
        return self.jobs.cancel(account, job_id)

    def result(self, account: Account, job_id: str) -> tuple[Job, bytes]:
        return self.jobs.result(account, job_id)


__all__ = ["ApiService"]
