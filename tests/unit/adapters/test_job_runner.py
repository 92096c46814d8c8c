"""The job runner (`printjob_adapters.runner`) over the core's in-memory fakes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import attrs
import pytest

from printjob_adapters.runner import JobRunner
from printjob_core.errors import ConversionCancelled, ConversionFailed
from printjob_core.fakes import (
    FakeBlobStore,
    FakeClock,
    FakeIds,
    FakeImageProbe,
    FakeRateLimiter,
    FakeStore,
    fake_image,
)
from printjob_core.limits import Policy
from printjob_core.model import ConversionOutput, JobOptions, JobStatus, Phase
from printjob_core.ports import CancelCheck, ProgressCallback
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports

OUTPUT = ConversionOutput(b"<svg/>", 64, 64, 2, False)


class ScriptedEngine:
    """An engine whose `convert` runs a given function."""

    def __init__(self, body: Callable[[ProgressCallback, CancelCheck], ConversionOutput]) -> None:
        self.body = body

    def convert(
        self,
        image: bytes,
        options: JobOptions,
        progress: ProgressCallback,
        cancelled: CancelCheck,
    ) -> ConversionOutput:
        return self.body(progress, cancelled)


@attrs.define
class World:
    ports: Ports
    api: ApiService
    processing: JobProcessing
    operator: OperatorService
    store: FakeStore
    blobs: FakeBlobStore

    def submit(self) -> str:
        account = self.operator.create_account(5)
        submission = self.api.submit(account, [("format", "svg")], fake_image())
        return submission.job.id

    def job(self, job_id: str):  # type: ignore[no-untyped-def]
        return self.store.state.jobs[job_id]

    def account_of(self, job_id: str):  # type: ignore[no-untyped-def]
        return self.store.state.accounts[self.job(job_id).account_id]


@pytest.fixture
def world() -> World:
    store = FakeStore()
    blobs = FakeBlobStore()
    ports = Ports(
        uow=store.unit_of_work,
        reader=store.unit_of_work,
        clock=FakeClock(),
        ids=FakeIds(),
        blobs=blobs,
        limiter=FakeRateLimiter(),
        probe=FakeImageProbe(),
        policy=Policy(job_time_budget_seconds=1),
    )
    return World(
        ports, ApiService(ports), JobProcessing(ports), OperatorService(ports), store, blobs
    )


def runner(world: World, body: Callable[..., ConversionOutput], **kw: float) -> JobRunner:
    options = {"report_seconds": 0.0, "cancel_check_seconds": 0.0, "heartbeat_seconds": 0.05}
    options.update(kw)
    return JobRunner(world.processing, ScriptedEngine(body), **options)  # type: ignore[arg-type]


def test_success_charges_and_reports_progress(world: World) -> None:
    job_id = world.submit()
    seen: list[tuple[str, int]] = []

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        for phase, percent in ((Phase.ANALYSING, 5), (Phase.BUILDING, 50), (Phase.FINISHING, 90)):
            progress(phase, percent)
            job = world.job(job_id)
            seen.append((job.phase.value, job.progress))
        return OUTPUT

    assert runner(world, body).run_once()
    job = world.job(job_id)
    assert job.status is JobStatus.SUCCEEDED
    assert seen == [("analysing", 5), ("building", 50), ("finishing", 90)]
    account = world.account_of(job_id)
    assert (account.credits_balance, account.credits_held) == (4, 0)
    assert not world.blobs.exists(f"uploads/{job_id}")


def test_conversion_failed_fails_with_its_detail(world: World) -> None:
    job_id = world.submit()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        raise ConversionFailed("The picture has no colours at all.")

    runner(world, body).run_once()
    job = world.job(job_id)
    assert job.status is JobStatus.FAILED
    assert job.error is not None and job.error.detail == "The picture has no colours at all."
    assert world.account_of(job_id).credits_held == 0


def test_unexpected_error_fails_the_job_and_the_runner_goes_on(world: World) -> None:
    first, second = world.submit(), world.submit()
    calls = []

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("boom")
        return OUTPUT

    engine_runner = runner(world, body)
    assert engine_runner.run_once() and engine_runner.run_once()
    failed = world.job(first)
    assert failed.status is JobStatus.FAILED
    assert failed.error is not None and "could not be processed" in failed.error.detail
    assert "ZeroDivisionError" in failed.error.detail
    assert world.job(second).status is JobStatus.SUCCEEDED


def test_cancel_while_running_stops_the_engine(world: World) -> None:
    job_id = world.submit()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        account = world.store.state.accounts[world.job(job_id).account_id]
        world.api.cancel(account, job_id)
        for _ in range(100):
            if cancelled():
                raise ConversionCancelled("canceled")
            time.sleep(0.01)
        return OUTPUT

    runner(world, body).run_once()
    job = world.job(job_id)
    assert job.status is JobStatus.CANCELED
    assert job.credits_charged == 0
    assert world.account_of(job_id).credits_held == 0


def test_time_budget_fails_a_cooperative_job(world: World) -> None:
    job_id = world.submit()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        while not cancelled():
            time.sleep(0.02)
        raise ConversionCancelled("stopped")

    runner(world, body).run_once()
    job = world.job(job_id)
    assert job.status is JobStatus.FAILED
    assert job.error is not None and "longer than 1 s" in job.error.detail
    assert world.account_of(job_id).credits_held == 0


def test_time_budget_fails_a_job_whose_engine_never_checks(world: World) -> None:
    job_id = world.submit()
    wedged = threading.Event()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        time.sleep(1.6)  # never asks cancelled(); the heartbeat fails the job meanwhile
        assert world.job(job_id).status is JobStatus.FAILED
        return OUTPUT

    runner(world, body, wedged_grace_seconds=0.3, on_wedged=wedged.set).run_once()  # type: ignore[arg-type]
    job = world.job(job_id)
    assert job.status is JobStatus.FAILED  # the late success was dropped
    assert world.account_of(job_id).credits_balance == 5
    assert wedged.is_set()


def test_stop_hands_the_job_back_to_the_queue(world: World) -> None:
    job_id = world.submit()
    stop = threading.Event()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        stop.set()
        if cancelled():
            raise ConversionCancelled("stopping")
        return OUTPUT

    engine_runner = runner(world, body)
    claim = world.processing.claim()
    assert claim is not None
    engine_runner.process(claim, stop)
    job = world.job(job_id)
    assert job.status is JobStatus.QUEUED
    assert job.attempts == 1
    assert world.account_of(job_id).credits_held == 1


def test_heartbeat_renews_the_lease(world: World) -> None:
    job_id = world.submit()
    clock = world.ports.clock
    leases = []

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        for _ in range(3):
            clock.advance(10)  # type: ignore[attr-defined]
            time.sleep(0.12)
            leases.append(world.job(job_id).lease_expires_at)
        return OUTPUT

    runner(world, body).run_once()
    assert leases == sorted(leases) and leases[0] < leases[-1]


def test_run_loop_stops_when_told(world: World) -> None:
    job_id = world.submit()
    stop = threading.Event()
    engine_runner = runner(world, lambda progress, cancelled: OUTPUT, poll_seconds=0.01)
    thread = threading.Thread(target=engine_runner.run, args=(stop,))
    thread.start()
    deadline = time.monotonic() + 5
    while world.job(job_id).status is not JobStatus.SUCCEEDED and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert world.job(job_id).status is JobStatus.SUCCEEDED


def test_cancel_is_noticed_and_the_worker_given_up_when_the_engine_never_calls_back(
    world: World,
) -> None:
    job_id = world.submit()
    wedged = threading.Event()
    release = threading.Event()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        world.api.cancel(world.account_of(job_id), job_id)
        release.wait(5)  # never calls back; returns only once the guard gave up
        return OUTPUT

    def on_wedged() -> None:
        wedged.set()
        release.set()

    started = time.monotonic()
    runner(
        world, body, cancel_check_seconds=0.2, wedged_grace_seconds=0.3, on_wedged=on_wedged
    ).run_once()  # type: ignore[arg-type]
    assert wedged.is_set()
    assert time.monotonic() - started < 2.0
    job = world.job(job_id)
    assert job.status is JobStatus.CANCELED  # the late success was dropped
    assert (world.account_of(job_id).credits_balance, job.credits_charged) == (5, 0)


def test_a_canceled_job_keeps_its_budget_guard(world: World) -> None:
    # The cancel is seen at a callback, then the engine ignores it and runs on: the guard
    # still gives the worker up after the grace.
    job_id = world.submit()
    wedged = threading.Event()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        world.api.cancel(world.account_of(job_id), job_id)
        assert cancelled()
        wedged.wait(5)
        return OUTPUT

    runner(world, body, wedged_grace_seconds=0.3, on_wedged=wedged.set).run_once()  # type: ignore[arg-type]
    assert wedged.is_set()
    assert world.job(job_id).status is JobStatus.CANCELED


def test_stop_hands_back_and_gives_up_when_the_engine_ignores_it(world: World) -> None:
    job_id = world.submit()
    stop = threading.Event()
    wedged = threading.Event()

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        stop.set()
        wedged.wait(5)  # ignores the stop, never calls back
        return OUTPUT

    engine_runner = runner(world, body, wedged_grace_seconds=0.3, on_wedged=wedged.set)  # type: ignore[arg-type]
    claim = world.processing.claim()
    assert claim is not None
    started = time.monotonic()
    engine_runner.process(claim, stop)
    assert wedged.is_set() and time.monotonic() - started < 2.0
    job = world.job(job_id)
    assert job.status is JobStatus.QUEUED  # handed back; the late success was dropped
    assert world.account_of(job_id).credits_held == 1


def test_memory_error_fails_the_job_and_the_runner_goes_on(world: World) -> None:
    first, second = world.submit(), world.submit()
    calls: list[int] = []

    def body(progress: ProgressCallback, cancelled: CancelCheck) -> ConversionOutput:
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError
        return OUTPUT

    engine_runner = runner(world, body)
    assert engine_runner.run_once() and engine_runner.run_once()
    failed = world.job(first)
    assert failed.status is JobStatus.FAILED
    assert failed.error is not None and "more memory than one job may use" in failed.error.detail
    assert world.account_of(first).credits_balance == 5
    assert world.job(second).status is JobStatus.SUCCEEDED


def test_each_job_arms_and_disarms_the_kernel_alarm(world: World) -> None:
    world.submit()
    alarms: list[float] = []
    engine_runner = runner(world, lambda progress, cancelled: OUTPUT, arm_alarm=alarms.append)  # type: ignore[arg-type]
    assert engine_runner.run_once()
    assert alarms[0] > world.processing.policy.job_time_budget_seconds and alarms[1:] == [0]
