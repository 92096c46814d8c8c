"""Contract 4.2, 4.3, 4.4 (without processing), 4.5 and section 8's read limit."""

from __future__ import annotations

from tests.contract.support import Client, ServerProcess, assert_problem, fresh_window


def test_queued_job_reads_with_retry_after_5(idle_client: Client) -> None:
    """Contract 4.2 and 3 (polling hints): a queued job answers 200 with Retry-After: 5."""
    job = idle_client.submit().json()
    response = idle_client.get(f"/v1/jobs/{job['id']}")
    assert response.status_code == 200
    assert response.json() == job
    assert response.headers["retry-after"] == "5"


def test_job_of_another_account_is_404(idle_server: ServerProcess) -> None:
    """Contract 5.6 and 4.2-4.4: another account's job is answered as not found."""
    with idle_server.account() as owner, idle_server.account() as other:
        job_id = owner.submit().json()["id"]
        assert_problem(other.get(f"/v1/jobs/{job_id}"), 404, "not_found")
        assert_problem(other.post(f"/v1/jobs/{job_id}/cancel"), 404, "not_found")
        assert_problem(other.get(f"/v1/jobs/{job_id}/result"), 404, "not_found")
        assert owner.get(f"/v1/jobs/{job_id}").json()["status"] == "queued"


def test_cancel_queued_job_returns_the_hold(idle_client: Client) -> None:
    """Contract 4.3 and 3: cancel -> 200 canceled Job, nothing charged, held credit returns."""
    job = idle_client.submit().json()
    assert idle_client.account_view()["credits_held"] == 1
    response = idle_client.post(f"/v1/jobs/{job['id']}/cancel")
    assert response.status_code == 200
    canceled = response.json()
    assert canceled["status"] == "canceled"
    assert canceled["phase"] is None and canceled["progress"] is None
    assert canceled["credits_charged"] == 0
    assert canceled["finished_at"] is not None
    assert "retry-after" not in response.headers
    account = idle_client.account_view()
    assert account["credits_held"] == 0
    assert account["credits_balance"] == 10
    assert account["active_jobs"] == 0


def test_cancel_twice_changes_nothing(idle_client: Client) -> None:
    """Contract 4.3: canceling a canceled job again -> 200, unchanged."""
    job_id = idle_client.submit().json()["id"]
    first = idle_client.post(f"/v1/jobs/{job_id}/cancel").json()
    second = idle_client.post(f"/v1/jobs/{job_id}/cancel")
    assert second.status_code == 200
    assert second.json() == first
    assert idle_client.account_view()["credits_balance"] == 10


def test_result_not_ready_for_queued_and_canceled_jobs(idle_client: Client) -> None:
    """Contract 4.4: no file yet, or never -> 409 result_not_ready."""
    job_id = idle_client.submit().json()["id"]
    assert_problem(idle_client.get(f"/v1/jobs/{job_id}/result"), 409, "result_not_ready")
    idle_client.post(f"/v1/jobs/{job_id}/cancel")
    assert_problem(idle_client.get(f"/v1/jobs/{job_id}/result"), 409, "result_not_ready")


def test_account_shape(idle_client: Client) -> None:
    """Contract 2.5 and 4.5: credits, active jobs and every limit."""
    response = idle_client.get("/v1/account")
    assert response.status_code == 200
    assert response.json() == {
        "credits_balance": 10,
        "credits_held": 0,
        "credits_available": 10,
        "active_jobs": 0,
        "active_jobs_max": 3,
        "limits": {
            "active_jobs": 3,
            "idempotency_ttl_seconds": 86400,
            "job_cost": 1,
            "max_upload_bytes": 31457280,
            "max_upload_pixels": 3000000,
            "reads_per_minute": 120,
            "result_ttl_seconds": 86400,
            "submissions_per_minute": 10,
        },
    }


def test_account_reports_larger_active_jobs_max(idle_server: ServerProcess) -> None:
    """Contract 2.5: active_jobs_max 5 or 10 on request, mirrored in limits.active_jobs."""
    with idle_server.account(credits=0, active_jobs_max=10) as client:
        account = client.account_view()
        assert account["active_jobs_max"] == 10
        assert account["limits"]["active_jobs"] == 10


def test_reads_per_minute_are_limited(idle_server: ServerProcess) -> None:
    """Contract 8: over 120 other calls a minute per account -> 429 rate_limited."""
    with idle_server.account() as client:
        job_id = client.submit().json()["id"]
        fresh_window()
        paths = ["/v1/account", f"/v1/jobs/{job_id}", f"/v1/jobs/{job_id}/result"]
        statuses = [client.get(paths[i % 3]).status_code for i in range(120)]
        assert 429 not in statuses
        assert_problem(client.get("/v1/account"), 429, "rate_limited")
        assert_problem(client.post(f"/v1/jobs/{job_id}/cancel"), 429, "rate_limited")
