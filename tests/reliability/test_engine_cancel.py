"""A cancel stops the real engine inside its slow stage (issue 15): a canceled job's
worker is free within 5 s, nothing charged. The tracing stages check for a cancel
between batches of work (tests/unit/engine/test_cost.py counts them); on a machine too
busy for the engine to reach its next check within the runner's grace, the kill guard
ends the worker instead, and either way the next job starts within the 5 s.

The server is real (`printjob serve`, one worker, the real engine); the image is two
interlocking 1-px combs, under the engine's border cap but seconds of tracing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.support import ServerProcess
from tests.reliability.conftest import HIGH, new_account
from tests.reliability.test_workload_guards import accepted, combs_png, held_and_balance


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        tmp_path / "data",
        workers=1,
        PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        PRINTJOB_READS_PER_MINUTE=HIGH,
        PRINTJOB_JOB_TIME_BUDGET_SECONDS="120",
    ).start()
    try:
        yield server
    finally:
        server.stop()


def test_a_cancel_while_the_engine_traces_a_comb_frees_the_worker_within_5_s(
    server: ServerProcess,
) -> None:
    hostile = new_account(server, credits=1)
    other = new_account(server)
    job_id = accepted(hostile.submit(combs_png(1200), format="eps"))
    deadline = time.monotonic() + 60
    phase = None
    while time.monotonic() < deadline:
        job = hostile.get(f"/v1/jobs/{job_id}").json()
        phase = job["phase"]
        if phase == "building":  # the tracing stage, seconds long on this image
            break
        assert job["status"] in ("queued", "running"), job
        time.sleep(0.05)
    assert phase == "building"
    canceled_at = time.monotonic()
    assert hostile.post(f"/v1/jobs/{job_id}/cancel").json()["status"] == "canceled"
    quick = accepted(other.submit())
    assert other.wait(quick, timeout=5)["status"] == "succeeded"
    assert time.monotonic() - canceled_at < 5.0
    assert held_and_balance(hostile) == (0, 1)
    assert hostile.get(f"/v1/jobs/{job_id}").json()["status"] == "canceled"
