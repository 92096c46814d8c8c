"""When a server is ready for traffic: the rules behind `GET /readyz`.

A server is ready when its database answers with the schema this code writes, the worker
processes it supervises are alive, no job sits with a lease long past (nobody anywhere is
processing), and the queue is under the depth at which submissions are refused (design
decision 8). Each failed check is one `reason` (a short code and a sentence), so an
operator sees every cause at once.
"""

from __future__ import annotations

from datetime import datetime

import attrs

#: Seconds a client (or a load balancer) should wait before asking again when not ready.
NOT_READY_RETRY_AFTER = 5


@attrs.frozen
class QueueState:
    """The queue as storage sees it at one moment."""

    queued: int
    running: int
    #: When the oldest queued job was submitted; None when none is queued.
    oldest_queued_at: datetime | None
    #: Running jobs whose lease ended before the moment asked about: their worker is gone.
    stale_running: int

    def oldest_queued_seconds(self, now: datetime) -> float:
        """How long the oldest queued job has waited (0 when none waits)."""
        if self.oldest_queued_at is None:
            return 0.0
        return max(0.0, (now - self.oldest_queued_at).total_seconds())


@attrs.frozen
class Workers:
    """The worker processes this server supervises. `expected` 0: an API-only server
    (`--workers 0`), whose jobs are processed elsewhere (`printjob worker`)."""

    expected: int
    alive: int


@attrs.frozen
class Reason:
    """One failed readiness check."""

    code: str
    detail: str


@attrs.frozen
class Facts:
    """What the checks read; `database_error` set means nothing else could be read."""

    database_error: str | None
    schema_version: int | None
    expected_schema_version: int
    workers: Workers
    queue: QueueState | None
    max_queue_depth: int


def reasons(facts: Facts) -> tuple[Reason, ...]:
    """Why the server is not ready; empty when it is."""
    found: list[Reason] = []
    if facts.database_error is not None:
        found.append(Reason("database_unreachable", facts.database_error))
    elif facts.schema_version != facts.expected_schema_version:
        found.append(
            Reason(
                "schema_outdated",
                f"The database has schema version {facts.schema_version}; this printjob "
                f"writes {facts.expected_schema_version}. Run `printjob db upgrade`.",
            )
        )
    workers = facts.workers
    if workers.expected > 0 and workers.alive < workers.expected:
        found.append(
            Reason(
                "workers_down",
                f"{workers.alive} of {workers.expected} worker processes are alive.",
            )
        )
    queue = facts.queue
    if queue is not None:
        if queue.stale_running > 0:
            found.append(
                Reason(
                    "jobs_stalled",
                    f"{queue.stale_running} running job(s) have a lease that ended long ago: "
                    "no worker is processing them.",
                )
            )
        if queue.queued >= facts.max_queue_depth:
            found.append(
                Reason(
                    "queue_full",
                    f"{queue.queued} jobs are queued; submissions are refused from "
                    f"{facts.max_queue_depth}.",
                )
            )
    return tuple(found)


__all__ = ["NOT_READY_RETRY_AFTER", "Facts", "QueueState", "Reason", "Workers", "reasons"]
