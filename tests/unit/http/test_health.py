"""`/readyz`'s facts and answer over the core's fake store: what is read, what is said
when the database fails (its type, never its message), and the queue's figures."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import attrs

from printjob_adapters.sql.schema import SCHEMA_VERSION
from printjob_core.fakes import FakeClock, FakeStore
from printjob_core.limits import Policy
from printjob_core.model import Job, JobOptions, JobStatus, OutputFormat, Phase
from printjob_core.readiness import Workers
from printjob_http.health import gather_facts, no_supervised_workers, readiness_body

POLICY = attrs.evolve(Policy(), max_queue_depth=2, lease_seconds=60)


class Storage:
    """The fake store with the schema version a storage reports."""

    def __init__(self, version: int = SCHEMA_VERSION, failure: Exception | None = None) -> None:
        self.store = FakeStore()
        self.version = version
        self.failure = failure

    def schema_version(self) -> int:
        if self.failure is not None:
            raise self.failure
        return self.version

    def reader(self) -> Any:
        return self.store.reader()


def add_job(storage: Storage, clock: FakeClock, n: int, **changes: Any) -> None:
    job = Job(
        id=f"job_{n:032x}",
        account_id="acct_1",
        status=JobStatus.QUEUED,
        phase=Phase.QUEUED,
        progress=0,
        created_at=clock.now(),
        finished_at=None,
        options=JobOptions(format=OutputFormat.SVG),
    )
    with storage.store.unit_of_work() as uow:
        uow.jobs.add(attrs.evolve(job, **changes))
        uow.commit()


def answer(storage: Storage, clock: FakeClock, workers: Workers) -> tuple[int, dict[str, Any]]:
    facts = gather_facts(storage, POLICY, clock, lambda: workers)  # type: ignore[arg-type]
    return readiness_body(facts, clock)


def test_ready_with_the_queue_figures() -> None:
    storage, clock = Storage(), FakeClock()
    add_job(storage, clock, 1)
    clock.advance(42)
    status, body = answer(storage, clock, Workers(expected=2, alive=2))
    assert status == 200 and body["status"] == "ready"
    assert body["queue"] == {
        "queued": 1,
        "running": 0,
        "stale_running": 0,
        "oldest_queued_seconds": 42.0,
        "max_queue_depth": 2,
    }


def test_every_reason_at_once() -> None:
    storage, clock = Storage(version=SCHEMA_VERSION - 1), FakeClock()
    add_job(storage, clock, 1)
    add_job(storage, clock, 2)
    lease_end = clock.now() - timedelta(seconds=61)
    add_job(storage, clock, 3, status=JobStatus.RUNNING, lease_expires_at=lease_end)
    status, body = answer(storage, clock, Workers(expected=2, alive=0))
    assert status == 503 and body["status"] == "not_ready"
    codes = [reason["code"] for reason in body["reasons"]]
    assert codes == ["schema_outdated", "workers_down", "jobs_stalled", "queue_full"]


def test_a_lease_that_just_ended_is_not_stalled_yet() -> None:
    storage, clock = Storage(), FakeClock()
    just = clock.now() - timedelta(seconds=5)
    add_job(storage, clock, 1, status=JobStatus.RUNNING, lease_expires_at=just)
    status, body = answer(storage, clock, no_supervised_workers())
    assert status == 200 and body["workers"]["api_only"] is True


def test_a_failing_database_names_the_error_type_only() -> None:
    failure = ConnectionError("connection to postgresql://printjob:hunter2@db failed")
    status, body = answer(Storage(failure=failure), FakeClock(), Workers(expected=1, alive=1))
    assert status == 503
    assert body["database"]["reachable"] is False and "queue" not in body
    assert body["reasons"] == [
        {
            "code": "database_unreachable",
            "detail": "The database did not answer (ConnectionError).",
        }
    ]
    assert "hunter2" not in str(body)
