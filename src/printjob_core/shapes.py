"""The JSON shapes of contract section 2: Job, Account and Problem, with cattrs converters.

The domain values in `model` carry internal bookkeeping; these view classes are exactly
what a client sees, and `converter` turns them into JSON-ready dicts (dates as ISO 8601
UTC with `Z`, enums as their values, `options.dpi` only when it was sent).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import attrs
import cattrs

from printjob_core.errors import ProblemError
from printjob_core.limits import Policy
from printjob_core.model import Account, Job, JobOptions


@attrs.frozen
class OptionsView:
    format: str
    size: str
    colors: int | None
    background: str
    dpi: int | None = None


@attrs.frozen
class ResultView:
    format: str
    width: int
    height: int
    bytes: int
    colors: int
    background_removed: bool
    url: str
    expires_at: datetime


@attrs.frozen
class ErrorView:
    code: str
    detail: str


@attrs.frozen
class JobView:
    id: str
    status: str
    phase: str | None
    progress: int | None
    created_at: datetime
    finished_at: datetime | None
    options: OptionsView
    credits_charged: int
    result: ResultView | None
    error: ErrorView | None


@attrs.frozen
class LimitsView:
    active_jobs: int
    idempotency_ttl_seconds: int
    job_cost: int
    max_upload_bytes: int
    max_upload_pixels: int
    reads_per_minute: int
    result_ttl_seconds: int
    submissions_per_minute: int


@attrs.frozen
class AccountView:
    credits_balance: int
    credits_held: int
    credits_available: int
    active_jobs: int
    active_jobs_max: int
    limits: LimitsView


@attrs.frozen
class Problem:
    """RFC 9457 problem details with the contract's stable `code` (section 2.6)."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    param: str | None = None


def format_time(moment: datetime) -> str:
    """ISO 8601 in UTC with a `Z`, to the millisecond (`2026-11-22T03:20:02.430Z`)."""
    # isoformat is several times faster than strftime, and every polled job has a time.
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


converter = cattrs.Converter()
converter.register_unstructure_hook(datetime, format_time)


def _unstructure_options(view: OptionsView) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": view.format,
        "size": view.size,
        "colors": view.colors,
        "background": view.background,
    }
    if view.dpi is not None:
        out["dpi"] = view.dpi
    return out


def _unstructure_problem(problem: Problem) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": problem.type,
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
        "code": problem.code,
    }
    if problem.param is not None:
        out["param"] = problem.param
    return out


converter.register_unstructure_hook(OptionsView, _unstructure_options)
converter.register_unstructure_hook(Problem, _unstructure_problem)


@functools.lru_cache(maxsize=1024)
def options_view(options: JobOptions) -> OptionsView:
    """The options as a client sees them (remembered: a polled job's options never change)."""
    return OptionsView(
        format=options.format.value,
        size=options.size_text,
        colors=options.colors,
        background=options.background.value,
        dpi=options.dpi,
    )


def job_view(job: Job, result_url: str) -> JobView:
    """What a client sees of a job; `result_url` is the absolute download address."""
    result = None
    if job.result is not None:
        r = job.result
        result = ResultView(
            format=r.format.value,
            width=r.width,
            height=r.height,
            bytes=r.bytes,
            colors=r.colors,
            background_removed=r.background_removed,
            url=result_url,
            expires_at=r.expires_at,
        )
    error = None if job.error is None else ErrorView(job.error.code.value, job.error.detail)
    return JobView(
        id=job.id,
        status=job.status.value,
        phase=None if job.phase is None else job.phase.value,
        progress=job.progress,
        created_at=job.created_at,
        finished_at=job.finished_at,
        options=options_view(job.options),
        credits_charged=job.credits_charged,
        result=result,
        error=error,
    )


def account_view(account: Account, active_jobs: int, policy: Policy) -> AccountView:
    return AccountView(
        credits_balance=account.credits_balance,
        credits_held=account.credits_held,
        credits_available=account.credits_available,
        active_jobs=active_jobs,
        active_jobs_max=account.active_jobs_max,
        limits=LimitsView(
            active_jobs=account.active_jobs_max,
            idempotency_ttl_seconds=policy.idempotency_ttl_seconds,
            job_cost=policy.job_cost,
            max_upload_bytes=policy.max_upload_bytes,
            max_upload_pixels=policy.max_upload_pixels,
            reads_per_minute=policy.reads_per_minute,
            result_ttl_seconds=policy.result_ttl_seconds,
            submissions_per_minute=policy.submissions_per_minute,
        ),
    )


def problem_for(error: ProblemError, docs_url: str) -> Problem:
    return Problem(
        type=f"{docs_url}#error-{error.code}",
        title=error.title,
        status=error.status,
        detail=error.detail,
        code=error.code,
        param=error.param,
    )


def to_json(value: object) -> Any:
    """A view as JSON-ready built-in types."""
    return converter.unstructure(value)
