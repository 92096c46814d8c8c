"""`GET /metrics`: the Prometheus text format, for the operator's scraper only.

Served only when `PRINTJOB_METRICS_TOKEN` is set (otherwise 404, as for any unknown
path) and only to `Authorization: Bearer <that token>`, compared in constant time (401
otherwise). What is counted: `printjob_adapters.metrics`.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from printjob_adapters.metrics import QueueCollector, exposition
from printjob_adapters.storage import Storage
from printjob_core.errors import NotFound, Unauthenticated
from printjob_core.limits import Policy
from printjob_core.ports import Clock
from printjob_core.readiness import QueueState
from printjob_http.answers import Answer, problem_answer
from printjob_http.gate import DirectAnswer
from printjob_http.health import NO_STORE
from printjob_http.shell import in_thread


def metrics_answer(
    token: str | None,
    storage: Storage,
    policy: Policy,
    clock: Clock,
    docs_for: Callable[[Any], str],
    realm: str,
) -> dict[str, DirectAnswer]:
    """The gate's direct answer for `/metrics`."""
    expected = f"Bearer {token}".encode() if token else None

    def read_queue() -> QueueState:
        stale_before = clock.now() - timedelta(seconds=policy.lease_seconds)
        with storage.reader() as uow:
            return uow.jobs.queue_state(stale_before)

    collector = QueueCollector(read_queue, clock.now)

    async def metrics(scope: Any, _segment: str) -> Answer:
        if expected is None:
            missing = NotFound("There is no '/metrics' on this server.")
            return problem_answer(missing, docs_for(scope))
        sent = [value for name, value in scope["headers"] if name == b"authorization"]
        if len(sent) != 1 or not hmac.compare_digest(sent[0], expected):
            refused = Unauthenticated(
                "Send the metrics token as 'Authorization: Bearer <PRINTJOB_METRICS_TOKEN>'.",
                key_sent=bool(sent),
            )
            return problem_answer(refused, docs_for(scope), realm)
        body, media_type = await in_thread(exposition, collector)
        return Answer(body, 200, media_type, NO_STORE)

    return {"metrics": metrics}


__all__ = ["metrics_answer"]
