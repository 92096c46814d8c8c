"""`GET /healthz` and `GET /readyz`: the answers a process supervisor and a load
balancer ask for, outside `/v1` and without a key.

* `/healthz`: the process answers (200 `{"status": "ok"}`); it reads nothing.
* `/readyz`: the database answers with the current schema, the supervised workers are
  alive, no job's lease is long past and the queue is under the busy threshold (the
  rules: `printjob_core.readiness`). 200 with what was checked, or 503 with every reason
  and `Retry-After`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from printjob_adapters.sql.schema import SCHEMA_VERSION
from printjob_adapters.storage import Storage
from printjob_core.limits import Policy
from printjob_core.ports import Clock
from printjob_core.readiness import NOT_READY_RETRY_AFTER, Facts, QueueState, Workers, reasons
from printjob_http.answers import Answer, json_answer
from printjob_http.gate import DirectAnswer
from printjob_http.shell import in_thread

log = logging.getLogger("printjob.health")

#: Health answers are about this moment: no cache may keep them.
NO_STORE = {"Cache-Control": "no-store"}

#: The worker processes this server supervises, as of now.
WorkersNow = Callable[[], Workers]


def no_supervised_workers() -> Workers:
    """An app without a supervisor (API only, or in a test): jobs run elsewhere."""
    return Workers(expected=0, alive=0)


def gather_facts(storage: Storage, policy: Policy, clock: Clock, workers: WorkersNow) -> Facts:
    """Read what the readiness rules look at (in a thread: storage may wait)."""
    database_error: str | None = None
    version: int | None = None
    queue: QueueState | None = None
    try:
        version = storage.schema_version()
        # A lease that ended more than one lease ago: recovery (every few seconds in
        # every worker) would have taken the job back had any worker been running.
        stale_before = clock.now() - timedelta(seconds=policy.lease_seconds)
        with storage.reader() as uow:
            queue = uow.jobs.queue_state(stale_before)
    except Exception as error:
        # One line, no traceback: a load balancer asks every few seconds.
        log.warning("readiness: the database did not answer: %s: %s", type(error).__name__, error)
        database_error = f"The database did not answer ({type(error).__name__})."
    return Facts(
        database_error=database_error,
        schema_version=version,
        expected_schema_version=SCHEMA_VERSION,
        workers=workers(),
        queue=queue,
        max_queue_depth=policy.max_queue_depth,
    )


def readiness_body(facts: Facts, clock: Clock) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of `/readyz` for `facts`."""
    failed = reasons(facts)
    body: dict[str, Any] = {
        "status": "not_ready" if failed else "ready",
        "database": {
            "reachable": facts.database_error is None,
            "schema_version": facts.schema_version,
            "expected_schema_version": facts.expected_schema_version,
        },
        "workers": {
            "supervised": facts.workers.expected,
            "alive": facts.workers.alive,
            # `--workers 0`: this server processes nothing itself; that is no failure.
            "api_only": facts.workers.expected == 0,
        },
    }
    if facts.queue is not None:
        body["queue"] = {
            "queued": facts.queue.queued,
            "running": facts.queue.running,
            "stale_running": facts.queue.stale_running,
            "oldest_queued_seconds": round(facts.queue.oldest_queued_seconds(clock.now()), 3),
            "max_queue_depth": facts.max_queue_depth,
        }
    if failed:
        body["reasons"] = [{"code": r.code, "detail": r.detail} for r in failed]
    return (503 if failed else 200), body


def health_answers(
    storage: Storage, policy: Policy, clock: Clock, workers: WorkersNow | None = None
) -> dict[str, DirectAnswer]:
    """The gate's direct answers for `/healthz` and `/readyz`."""
    workers_now = workers or no_supervised_workers

    async def healthz(scope: Any, _segment: str) -> Answer:
        return json_answer({"status": "ok"}, headers=NO_STORE)

    async def readyz(scope: Any, _segment: str) -> Answer:
        facts = await in_thread(gather_facts, storage, policy, clock, workers_now)
        status, body = readiness_body(facts, clock)
        headers = dict(NO_STORE)
        if status != 200:
            headers["Retry-After"] = str(NOT_READY_RETRY_AFTER)
        return json_answer(body, status, headers)

    return {"healthz": healthz, "readyz": readyz}


__all__ = ["gather_facts", "health_answers", "no_supervised_workers", "readiness_body"]
