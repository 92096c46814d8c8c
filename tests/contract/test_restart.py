"""Contract 1.3, 3 and design decision 9: a server killed outright loses no job and no credit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.contract.support import ServerProcess, busy_png, png


@pytest.mark.slow
def test_kill_and_restart_every_job_ends_and_credits_add_up(tmp_path: Path) -> None:
    """Contract 3 (restart rows) and 1.3: SIGKILL the server and its workers with jobs queued
    and running; after a restart every job ends (succeeded, or failed `interrupted`) and
    credits add up: nothing held, balance = initial - succeeded."""
    initial = 10
    # A short lease so the restarted server recovers the killed worker's job quickly.
    settings = {"PRINTJOB_LEASE_SECONDS": "3"}
    first = ServerProcess(tmp_path / "data", workers=1, **settings).start()
    try:
        client = first.account(credits=initial, active_jobs_max=10)
        job_ids = [client.submit(busy_png(), format="png").json()["id"] for _ in range(2)]
        job_ids += [client.submit(png(), format=fmt).json()["id"] for fmt in ("svg", "pdf", "eps")]
        client.wait(job_ids[0], until=("running", "succeeded", "failed", "canceled"))
        statuses = {client.get(f"/v1/jobs/{j}").json()["status"] for j in job_ids}
        assert "queued" in statuses
    finally:
        first.kill()
    client.close()

    second = ServerProcess(tmp_path / "data", workers=1, **settings)
    second.port = first.port  # same address: Location and result URLs stay right
    second.base_url = first.base_url
    second.settings = first.settings
    second.start()
    try:
        with second.account(credits=0) as probe:
            probe.close()
        client = type(client)(second, client.account_id, client.key)
        jobs = [client.wait(job_id, timeout=150) for job_id in job_ids]
        for job in jobs:
            assert job["status"] in ("succeeded", "failed"), job
            if job["status"] == "failed":
                assert job["error"]["code"] in ("interrupted", "processing_failed"), job
                assert job["credits_charged"] == 0
            else:
                assert job["credits_charged"] == 1
                assert client.get(f"/v1/jobs/{job['id']}/result").status_code == 200
        succeeded = sum(job["status"] == "succeeded" for job in jobs)
        deadline = time.monotonic() + 10
        account = client.account_view()
        while account["credits_held"] and time.monotonic() < deadline:
            time.sleep(0.2)
            account = client.account_view()
        assert account["credits_held"] == 0
        assert account["active_jobs"] == 0
        assert account["credits_balance"] == initial - succeeded
        assert account["credits_available"] == initial - succeeded
        client.close()
    finally:
        second.stop()
