"""The two reads the gate answers itself: `GET /v1/jobs/{id}` and `GET /v1/account`.

They are most of the API's traffic; each is one call of the core (`Jobs.job_for_key`,
`Jobs.account_for_key`: key, account and answer in one read of storage), run on the event
loop when the storage can promise not to wait, and written with the shell's answers.
"""

from __future__ import annotations

import logging
from typing import Any

from printjob_core.errors import InternalError, ProblemError
from printjob_core.model import Job
from printjob_core.services import poll_retry_after
from printjob_core.shapes import job_view, to_json
from printjob_http.answers import Answer, json_answer, problem_answer
from printjob_http.gate import DirectAnswer
from printjob_http.shell import Shell

log = logging.getLogger("printjob.http")


def job_answer(shell: Shell, scope: Any, job: Job, status: int = 200, **extra: str) -> Answer:
    """A Job answer, with the polling `Retry-After` while it is unfinished (contract 3)."""
    base = shell.api_base(scope)
    headers = dict(extra)
    retry_after = poll_retry_after(job)
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return json_answer(to_json(job_view(job, f"{base}/v1/jobs/{job.id}/result")), status, headers)


def polling_reads(shell: Shell) -> dict[str, DirectAnswer]:
    """The gate's direct answers by route name."""

    async def read_job(scope: Any, job_id: str) -> Answer:
        job = await shell.read(shell.jobs.job_for_key, *shell.credentials(scope), job_id)
        return job_answer(shell, scope, job)

    async def read_account(scope: Any, _segment: str) -> Answer:
        view = await shell.read(shell.jobs.account_for_key, *shell.credentials(scope))
        return json_answer(to_json(view))

    return {"job": _guarded(shell, read_job), "account": _guarded(shell, read_account)}


def _guarded(shell: Shell, read: DirectAnswer) -> DirectAnswer:
    """`read` with its errors answered as Litestar's exception handlers answer them."""

    async def answer(scope: Any, segment: str) -> Answer:
        try:
            return await read(scope, segment)
        except ProblemError as error:
            if isinstance(error, InternalError):
                log.error("internal error on GET %s: %s", scope["path"], error)
            return problem_answer(error, shell.docs_for(scope), shell.realm)
        except Exception as error:
            log.error("unhandled error on GET %s", scope["path"], exc_info=error)
            failure = InternalError("Something went wrong on our side; please retry.")
            return problem_answer(failure, shell.docs_for(scope), shell.realm)

    return answer


__all__ = ["job_answer", "polling_reads"]
