"""JSON shapes of contract section 2: Job, Account, Problem."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from printjob_core import errors
from printjob_core.limits import Policy
from printjob_core.model import (
    Account,
    Background,
    Job,
    JobError,
    JobErrorCode,
    JobOptions,
    JobResult,
    JobStatus,
    OutputFormat,
    Phase,
    Size,
)
from printjob_core.shapes import account_view, format_time, job_view, problem_for, to_json

from .conftest import DOCS_URL, World, output

NOW = datetime(2026, 3, 4, 5, 6, 7, 891_234, tzinfo=UTC)
JOB_FIELDS = {
    "id",
    "status",
    "phase",
    "progress",
    "created_at",
    "finished_at",
    "options",
    "credits_charged",
    "result",
    "error",
}
DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def queued_job(**options) -> Job:
    return Job(
        id="job_" + "a" * 32,
        account_id="acct",
        status=JobStatus.QUEUED,
        phase=Phase.QUEUED,
        progress=0,
        created_at=NOW,
        finished_at=None,
        options=JobOptions(OutputFormat.SVG, **options),
        image_key="uploads/x",
    )


def test_format_time_is_utc_with_z():
    assert format_time(NOW) == "2026-03-04T05:06:07.891Z"
    plus_two = timezone(timedelta(hours=2))
    assert format_time(datetime(2026, 3, 4, 7, 6, 7, tzinfo=plus_two)) == "2026-03-04T05:06:07.000Z"


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 2), max_value=datetime(9998, 12, 30), timezones=st.just(UTC)
    ),
    st.integers(-14 * 60, 14 * 60),
)
def test_format_time_matches_the_strftime_definition(moment: datetime, offset: int) -> None:
    """Milliseconds truncated (never rounded up into the next second), in UTC, with Z."""
    local = moment.astimezone(timezone(timedelta(minutes=offset)))
    reference = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    assert format_time(local) == reference


def test_queued_job_json():
    data = to_json(job_view(queued_job(), "https://x/v1/jobs/j/result"))
    assert set(data) == JOB_FIELDS
    assert data == {
        "id": "job_" + "a" * 32,
        "status": "queued",
        "phase": "queued",
        "progress": 0,
        "created_at": "2026-03-04T05:06:07.891Z",
        "finished_at": None,
        "options": {"format": "svg", "size": "original", "colors": None, "background": "keep"},
        "credits_charged": 0,
        "result": None,
        "error": None,
    }
    assert "account_id" not in data and "attempts" not in data and "image_key" not in data


def test_dpi_is_echoed_only_when_sent():
    sent = to_json(job_view(queued_job(size=Size(10, 20), dpi=72, colors=5), "u"))["options"]
    assert sent == {"format": "svg", "size": "10x20", "colors": 5, "background": "keep", "dpi": 72}
    unsent = to_json(job_view(queued_job(size=Size(10, 20)), "u"))["options"]
    assert "dpi" not in unsent
    assert unsent["background"] == "keep"
    removed = to_json(job_view(queued_job(background=Background.REMOVE), "u"))["options"]
    assert removed["background"] == "remove"


def test_succeeded_job_json_carries_the_result_with_url():
    job = queued_job()
    result = JobResult(OutputFormat.SVG, 4500, 5400, 1234, 7, True, NOW + timedelta(hours=24))
    done = Job(
        id=job.id,
        account_id="acct",
        status=JobStatus.SUCCEEDED,
        phase=Phase.FINISHING,
        progress=100,
        created_at=NOW,
        finished_at=NOW,
        options=job.options,
        credits_charged=1,
        result=result,
        result_key="results/x.svg",
    )
    url = f"https://api.example/v1/jobs/{job.id}/result"
    data = to_json(job_view(done, url))
    assert data["status"] == "succeeded" and data["phase"] == "finishing"
    assert data["progress"] == 100 and data["credits_charged"] == 1
    assert data["finished_at"] == "2026-03-04T05:06:07.891Z"
    assert data["result"] == {
        "format": "svg",
        "width": 4500,
        "height": 5400,
        "bytes": 1234,
        "colors": 7,
        "background_removed": True,
        "url": url,
        "expires_at": "2026-03-05T05:06:07.891Z",
    }
    assert data["error"] is None


def test_failed_job_json_carries_the_error():
    job = queued_job()
    failed = Job(
        id=job.id,
        account_id="acct",
        status=JobStatus.FAILED,
        phase=None,
        progress=None,
        created_at=NOW,
        finished_at=NOW,
        options=job.options,
        error=JobError(JobErrorCode.INTERRUPTED, "restart"),
    )
    data = to_json(job_view(failed, "u"))
    assert data["error"] == {"code": "interrupted", "detail": "restart"}
    assert data["phase"] is None and data["progress"] is None and data["result"] is None


def test_every_date_in_a_served_job_ends_with_z(world: World):
    account = world.account()
    world.submit(account)
    done = world.runner.succeed(world.claim(), output())
    assert done is not None
    data = to_json(job_view(done, "u"))
    for value in (data["created_at"], data["finished_at"], data["result"]["expires_at"]):
        assert DATE.match(value), value


def test_account_json():
    account = Account(id="a", created_at=NOW, credits_balance=7, credits_held=2, active_jobs_max=5)
    data = to_json(account_view(account, 2, Policy()))
    assert data == {
        "credits_balance": 7,
        "credits_held": 2,
        "credits_available": 5,
        "active_jobs": 2,
        "active_jobs_max": 5,
        "limits": {
            "active_jobs": 5,
            "idempotency_ttl_seconds": 86400,
            "job_cost": 1,
            "max_upload_bytes": 31457280,
            "max_upload_pixels": 3000000,
            "reads_per_minute": 120,
            "result_ttl_seconds": 86400,
            "submissions_per_minute": 10,
        },
    }


def test_problem_json_with_and_without_param():
    with_param = to_json(problem_for(errors.InvalidParameter("bad", param="size"), DOCS_URL))
    assert with_param == {
        "type": f"{DOCS_URL}#error-invalid_parameter",
        "title": "Invalid parameter",
        "status": 400,
        "detail": "bad",
        "code": "invalid_parameter",
        "param": "size",
    }
    without = to_json(problem_for(errors.NotFound("gone"), DOCS_URL))
    assert "param" not in without
    assert without["type"] == f"{DOCS_URL}#error-not_found"
    assert without["status"] == 404


CONTRACT_TABLE = [
    ("unauthenticated", 401, "Authentication required"),
    ("account_disabled", 403, "Account disabled"),
    ("insufficient_credits", 402, "Not enough credits"),
    ("invalid_parameter", 400, "Invalid parameter"),
    ("image_too_large", 413, "Image too large"),
    ("unsupported_image", 422, "Unsupported image"),
    ("rate_limited", 429, "Too many requests"),
    ("too_many_active_jobs", 429, "Too many unfinished jobs"),
    ("server_busy", 503, "Server busy"),
    ("idempotency_key_reused", 422, "Idempotency key reused"),
    ("not_found", 404, "Not found"),
    ("method_not_allowed", 405, "Method not allowed"),
    ("result_not_ready", 409, "Result not ready"),
    ("job_not_cancelable", 409, "Job cannot be canceled"),
    ("result_expired", 410, "Result expired"),
    ("internal_error", 500, "Internal error"),
]


def test_problem_types_are_exactly_the_contracts_section_7():
    assert set(errors.PROBLEM_TYPES) == {code for code, _, _ in CONTRACT_TABLE}


@pytest.mark.parametrize(("code", "status", "title"), CONTRACT_TABLE)
def test_every_problem_renders_with_the_contracts_status_and_title(code, status, title):
    cls = errors.PROBLEM_TYPES[code]
    error = cls("d", key_sent=True) if cls is errors.Unauthenticated else cls("d")
    data = to_json(problem_for(error, DOCS_URL))
    assert data == {
        "type": f"{DOCS_URL}#error-{code}",
        "title": title,
        "status": status,
        "detail": "d",
        "code": code,
    }
