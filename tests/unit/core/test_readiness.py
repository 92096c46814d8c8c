"""The readiness rules behind `/readyz`: every failed check is one reason."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs

from printjob_core.readiness import Facts, QueueState, Workers, reasons

NOW = datetime(2026, 11, 24, 5, 0, 0, tzinfo=UTC)
READY = Facts(
    database_error=None,
    schema_version=3,
    expected_schema_version=3,
    workers=Workers(expected=2, alive=2),
    queue=QueueState(queued=4, running=2, oldest_queued_at=NOW, stale_running=0),
    max_queue_depth=5,
)


def codes(facts: Facts) -> list[str]:
    return [reason.code for reason in reasons(facts)]


def test_a_healthy_server_is_ready() -> None:
    assert reasons(READY) == ()


def test_an_api_only_server_does_not_fail_for_having_no_workers() -> None:
    assert codes(attrs.evolve(READY, workers=Workers(expected=0, alive=0))) == []


def test_each_failed_check_is_a_reason() -> None:
    assert codes(attrs.evolve(READY, workers=Workers(expected=2, alive=1))) == ["workers_down"]
    assert codes(attrs.evolve(READY, schema_version=2)) == ["schema_outdated"]
    full = attrs.evolve(READY.queue, queued=5)
    assert codes(attrs.evolve(READY, queue=full)) == ["queue_full"]
    stalled = attrs.evolve(READY.queue, stale_running=1)
    assert codes(attrs.evolve(READY, queue=stalled)) == ["jobs_stalled"]


def test_an_unreachable_database_is_one_reason_and_others_still_count() -> None:
    down = attrs.evolve(
        READY,
        database_error="The database did not answer (OperationalError).",
        schema_version=None,
        queue=None,
        workers=Workers(expected=1, alive=0),
    )
    assert codes(down) == ["database_unreachable", "workers_down"]
    assert "OperationalError" in reasons(down)[0].detail


def test_the_oldest_queued_age() -> None:
    queue = QueueState(queued=1, running=0, oldest_queued_at=NOW, stale_running=0)
    assert queue.oldest_queued_seconds(NOW.replace(minute=2)) == 120.0
    assert attrs.evolve(queue, oldest_queued_at=None).oldest_queued_seconds(NOW) == 0.0
