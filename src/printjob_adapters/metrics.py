"""Prometheus metrics, counted in every process of a server (docs/operations.md).

Counting is on only when the server was started with `PRINTJOB_METRICS_TOKEN` set: then
`serve` calls `prepare()` before it starts anything, which empties the data directory's
`metrics/` folder and names it in `PROMETHEUS_MULTIPROC_DIR`; the worker processes it
spawns inherit that, so prometheus-client's multiprocess mode adds up their counts. When
counting is off, `recorder()` is None and every call site skips its counting (the polling
path pays one attribute test).

What a scrape reads from storage at that moment (queue depth, oldest queued job, running
and stalled jobs) is a collector over the database (`QueueCollector`), not a gauge kept
by a process: it is right whichever process changed the queue.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from printjob_core.readiness import QueueState

#: prometheus-client reads its multiprocess folder from this variable.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: The folder inside the data directory.
METRICS_DIR = "metrics"

#: Request latency buckets (seconds): polls are sub-millisecond, uploads take longer.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
#: Phase and engine buckets (seconds): a job takes from a fraction of a second to minutes.
PHASE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)


def prepare(data_dir: Path) -> Path:
    """Empty `data_dir/metrics` and name it in the environment (before any worker starts).

    Counts of a previous run are gone: Prometheus sees a counter reset, which `rate()`
    handles.
    """
    directory = data_dir / METRICS_DIR
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.environ[MULTIPROC_ENV] = str(directory)
    recorder.cache_clear()
    return directory


class Recorder:
    """The metrics one process counts; built once per process by `recorder()`."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram

        self.requests = Counter(
            "printjob_http_requests_total",
            "HTTP requests answered, by route, method and status.",
            ["route", "method", "status"],
        )
        self.request_seconds = Histogram(
            "printjob_http_request_duration_seconds",
            "Time from a request's arrival to its answer's last byte, by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
        )
        self.refusals = Counter(
            "printjob_refusals_total",
            "Problem answers, by code (rate_limited, too_many_active_jobs, server_busy, "
            "insufficient_credits, ...).",
            ["code"],
        )
        self.jobs_finished = Counter(
            "printjob_jobs_finished_total",
            "Jobs a worker finished, by final status and error code ('' when none).",
            ["status", "error_code"],
        )
        self.phase_seconds = Histogram(
            "printjob_job_phase_seconds",
            "Time a job spent in each processing phase.",
            ["phase"],
            buckets=PHASE_BUCKETS,
        )
        self.engine_seconds_per_megapixel = Histogram(
            "printjob_engine_seconds_per_megapixel",
            "Engine time of a succeeded job divided by its image's megapixels.",
            buckets=PHASE_BUCKETS,
        )
        self.credits_held = Counter(
            "printjob_credits_held_total",
            "Credits put on hold by accepted submissions.",
        )
        self.credits_charged = Counter(
            "printjob_credits_charged_total",
            "Credits charged for succeeded jobs.",
        )

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.request_seconds.labels(route).observe(seconds)


@functools.cache
def recorder() -> Recorder | None:
    """This process's metrics, or None when counting is off (no multiprocess folder)."""
    if not os.environ.get(MULTIPROC_ENV):
        return None
    return Recorder()


class QueueCollector:
    """The queue as storage sees it at scrape time."""

    def __init__(self, read_queue: Callable[[], QueueState], now: Callable[[], datetime]) -> None:
        self.read_queue = read_queue
        self.now = now

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        state = self.read_queue()
        yield GaugeMetricFamily("printjob_queue_depth", "Jobs queued now.", value=state.queued)
        yield GaugeMetricFamily(
            "printjob_queue_oldest_age_seconds",
            "How long the oldest queued job has waited (0 when none waits).",
            value=state.oldest_queued_seconds(self.now()),
        )
        yield GaugeMetricFamily("printjob_jobs_running", "Jobs running now.", value=state.running)
        yield GaugeMetricFamily(
            "printjob_jobs_stalled",
            "Running jobs whose lease has ended (their worker is gone; recovery requeues).",
            value=state.stale_running,
        )


def exposition(collector: QueueCollector) -> tuple[bytes, str]:
    """Every process's counts and the queue, in the Prometheus text format."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=os.environ[MULTIPROC_ENV])  # type: ignore[no-untyped-call]
    registry.register(collector)
    return generate_latest(registry), CONTENT_TYPE_LATEST


__all__ = [
    "METRICS_DIR",
    "MULTIPROC_ENV",
    "QueueCollector",
    "Recorder",
    "exposition",
    "prepare",
    "recorder",
]
