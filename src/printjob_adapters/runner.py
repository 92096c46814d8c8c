"""The job runner: the background worker loop that turns queued jobs into files.

One runner works one job at a time; a server runs several runners as separate OS
processes (`printjob serve --workers N`, `printjob worker`), so the CPU-bound engine never
stalls the API's event loop. Everything goes through `JobProcessing`, whose writes are
fenced by the claim's attempt number: a runner whose job was canceled, failed for its
time budget or recovered elsewhere meanwhile simply has its late writes dropped.

The loop:

* every `maintenance_seconds`: `recover()` (running jobs whose lease passed are queued
  again or fail `interrupted`, design decision 9) and `sweep()` (result files past
  `expires_at` deleted, expired idempotency keys forgotten);
* `claim()` the next queued job in fair order, or sleep `poll_seconds` (with a `JobSignal`, as on
  PostgreSQL: wait for its wake-up call, polling every `signal_poll_seconds` anyway);
* run the engine with a progress callback (throttled `report`, which also renews the
  lease) and a cancel check (a throttled `still_running` read);
* a guard thread, alive until the engine call returns whatever becomes of the job: it
  renews the lease while a long stage reports nothing, looks for a cancel every
  `cancel_check_seconds` even when the engine never calls back, fails the job when it
  passes its time budget (`Policy.job_time_budget_seconds`), and notices a stop request;
* success -> `succeed`; `ConversionFailed` -> `fail` with its detail; `MemoryError` (the
  worker's memory cap, `PRINTJOB_WORKER_MEMORY_MB`) -> `fail` saying so;
  `ConversionCancelled` -> nothing (the job was canceled); any other exception -> `fail`
  with a useful detail, and the runner carries on with the next job.

The kill guard: once the engine has been asked to stop (canceled, over budget, SIGTERM),
it has `wedged_grace_seconds` to return; an engine that does not is never waited for: the
guard hands a stopping worker's job back (a canceled or timed-out job is already final)
and calls `on_wedged`, which ends the worker process (the supervisor starts a fresh one at
once). Where the engine holds the interpreter so long that no thread runs, a kernel alarm
armed for each job (`arm_alarm`) ends the process shortly after the budget anyway.

Stopping (SIGTERM/SIGINT, or `stop` set): the runner claims nothing more, cancels its
current job at the engine's next checkpoint and hands it back to the queue at once (its
attempt still counts, so a job cannot be restarted forever). A runner killed outright
(SIGKILL, power loss) leaves its job `running` under a lease; once the lease passes,
the next `recover()` of any process queues it again.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from printjob_adapters import metrics
from printjob_adapters.logging_setup import configure_logging, log_context
from printjob_adapters.storage import JobSignal
from printjob_core.errors import ConversionCancelled, ConversionFailed
from printjob_core.model import Job, Phase
from printjob_core.ports import Engine
from printjob_core.services import Claim, JobProcessing

log = logging.getLogger("printjob.runner")

#: Exit code of a runner process that gave up on an engine that stopped responding.
EXIT_WEDGED = 3
#: Seconds an engine asked to stop (cancel, budget, SIGTERM) has before its worker ends.
STOP_GRACE_SECONDS = 0.5
#: The kernel alarm of a job fires this long after the budget and the grace have passed.
ALARM_MARGIN_SECONDS = 5.0


class _JobState:
    """What the engine's callbacks and the heartbeat share about the job in hand."""

    def __init__(self, claim: Claim, started: float) -> None:
        self.claim = claim
        self.started = started
        self.lock = threading.Lock()
        phase = claim.job.phase
        self.phase: Phase = Phase.ANALYSING if phase in (None, Phase.QUEUED) else phase
        self.percent = claim.job.progress or 0
        self.reported_phase: Phase | None = None
        #: When the current phase began (for `printjob_job_phase_seconds`).
        self.phase_started = started
        self.last_report = 0.0
        self.last_check = started
        #: The job is no longer ours (canceled, recovered elsewhere): stop, write nothing.
        self.gone = False
        #: The job passed its time budget and was failed for it.
        self.timed_out = False
        self.failed_for_time = False
        #: When the engine was first asked to stop (monotonic), or None.
        self.stop_asked: float | None = None
        self.done = threading.Event()


class JobRunner:
    """Claims and converts jobs until told to stop."""

    def __init__(
        self,
        processing: JobProcessing,
        engine: Engine,
        *,
        poll_seconds: float = 0.3,
        maintenance_seconds: float = 5.0,
        report_seconds: float = 0.5,
        cancel_check_seconds: float = 0.5,
        heartbeat_seconds: float | None = None,
        wedged_grace_seconds: float = STOP_GRACE_SECONDS,
        on_wedged: Callable[[], None] | None = None,
        arm_alarm: Callable[[float], None] | None = None,
        guard_seconds: float = 0.2,
        monotonic: Callable[[], float] = time.monotonic,
        job_signal: JobSignal | None = None,
        signal_poll_seconds: float = 1.0,
    ) -> None:
        self.processing = processing
        self.engine = engine
        self.policy = processing.policy
        self.poll_seconds = poll_seconds
        self.maintenance_seconds = maintenance_seconds
        self.report_seconds = report_seconds
        self.cancel_check_seconds = cancel_check_seconds
        lease = self.policy.lease_seconds
        self.heartbeat_seconds = heartbeat_seconds or max(0.2, min(10.0, lease / 3))
        self.wedged_grace_seconds = wedged_grace_seconds
        self.on_wedged = on_wedged
        self.arm_alarm = arm_alarm
        self.guard_seconds = max(0.01, min(guard_seconds, self.heartbeat_seconds))
        self.monotonic = monotonic
        self.job_signal = job_signal
        self.signal_poll_seconds = signal_poll_seconds
        self._last_maintenance: float | None = None
        #: Files no job needs (left by a crash) are looked for this often.
        self.orphan_seconds = max(maintenance_seconds, min(60.0, lease / 2))
        self._last_orphan_sweep: float | None = None

    # -- the loop --

    def run(self, stop: threading.Event) -> None:
        """Work until `stop` is set; errors are logged and the loop goes on."""
        log.info("job runner started (pid %d)", os.getpid())
        while not stop.is_set():
            try:
                self.maintain()
                worked = self.run_once(stop)
            except Exception:
                log.exception("job runner: unexpected error; carrying on")
                worked = False
            if not worked:
                self._idle(stop)
        log.info("job runner stopped (pid %d)", os.getpid())

    def _idle(self, stop: threading.Event) -> None:
        """Wait for work: the signal's wake-up call, or at worst the next poll."""
        if self.job_signal is None:
            stop.wait(self.poll_seconds)
            return
        try:
            self.job_signal.wait(self.signal_poll_seconds)
        except Exception:
            log.warning("job runner: the wake-up signal failed; polling", exc_info=True)
            stop.wait(self.poll_seconds)

    def maintain(self, force: bool = False) -> None:
        """Recover dead workers' jobs and sweep expired files, every few seconds."""
        now = self.monotonic()
        last = self._last_maintenance
        if not force and last is not None and now - last < self.maintenance_seconds:
            return
        self._last_maintenance = now
        for job in self.processing.recover():
            with log_context(job_id=job.id, account_id=job.account_id, request_id=job.request_id):
                log.info("recovered job %s: now %s", job.id, job.status.value)
        swept = self.processing.sweep()
        if swept:
            log.info("deleted %d expired result file(s)", swept)
        last = self._last_orphan_sweep
        if force or last is None or now - last >= self.orphan_seconds:
            self._last_orphan_sweep = now
            self._sweep_orphans()

    def _sweep_orphans(self) -> None:
        """Delete what a crash left behind: files no job needs, stale temporary files."""
        orphans = self.processing.sweep_orphans()
        if orphans:
            log.info("deleted %d stored file(s) no job needs (left by a crash)", orphans)
        temp = self.processing.ports.blobs.sweep_temp_files(self.policy.lease_seconds)
        if temp:
            log.info("deleted %d temporary file(s) left by a killed writer", temp)

    def run_once(self, stop: threading.Event | None = None) -> bool:
        """Claim and process one job; False when the queue was empty."""
        claim = self.processing.claim()
        if claim is None:
            return False
        self.process(claim, stop or threading.Event())
        return True

    # -- one job --

    def process(self, claim: Claim, stop: threading.Event) -> None:
        job = claim.job
        # Every line about this job (the heartbeat's too) names the job, its account and
        # the request that submitted it.
        with log_context(job_id=job.id, account_id=job.account_id, request_id=job.request_id):
            self._process(claim, stop)

    def _process(self, claim: Claim, stop: threading.Event) -> None:
        job = claim.job
        log.info("job %s: started (attempt %d)", job.id, claim.attempt)
        state = _JobState(claim, self.monotonic())
        try:
            image = self.processing.image(claim)
        except KeyError:
            failed = self.processing.fail(
                claim,
                "The uploaded image is no longer stored, so the job could not run; nothing "
                "was charged. Submit the image again.",
            )
            _count_finished(failed)
            return
        guard = threading.Thread(
            # The guard's log lines carry the job's context (job, account, request ids).
            target=contextvars.copy_context().run,
            args=(self._guard, state, stop),
            name=f"guard-{job.id}",
            daemon=True,
        )
        if self.arm_alarm is not None:
            self.arm_alarm(
                self.policy.job_time_budget_seconds
                + self.wedged_grace_seconds
                + ALARM_MARGIN_SECONDS
            )
        guard.start()
        try:
            self._convert(state, image, stop)
        finally:
            state.done.set()
            if self.arm_alarm is not None:
                self.arm_alarm(0)
            guard.join(timeout=5)

    def _convert(self, state: _JobState, image: bytes, stop: threading.Event) -> None:
        claim = state.claim
        job_id = claim.job.id
        try:
            output = self.engine.convert(
                image,
                claim.job.options,
                lambda phase, percent: self._progress(state, phase, percent),
                lambda: self._cancelled(state, stop),
            )
        except ConversionCancelled:
            if state.timed_out:
                self._fail_for_time(state)
            elif state.gone:
                log.info("job %s: stopped, it was canceled", job_id)
                _count_canceled()
            elif stop.is_set():
                self._hand_back(claim)
            return
        except ConversionFailed as failure:
            log.info("job %s: failed: %s", job_id, failure.detail)
            _count_finished(self.processing.fail(claim, failure.detail))
            return
        except MemoryError:
            # The worker's memory cap: what the engine held is garbage now; the worker goes on.
            gc.collect()
            log.warning("job %s: failed, it reached the worker's memory cap", job_id)
            failed = self.processing.fail(
                claim,
                "The job needed more memory than one job may use; nothing was charged. Try a "
                "smaller image, fewer colors or a smaller size.",
            )
            _count_finished(failed)
            return
        except Exception as exc:
            log.exception("job %s: the engine raised an unexpected error", job_id)
            detail = (
                "The image could not be processed: the converter stopped with an unexpected "
                f"error ({type(exc).__name__}). Nothing was charged; try another image or "
                "other options."
            )
            _count_finished(self.processing.fail(claim, detail))
            return
        if state.timed_out or self._over_budget(state):
            self._fail_for_time(state)
            return
        engine_seconds = self.monotonic() - state.started
        finished = self.processing.succeed(claim, output)
        if finished is None:
            log.info("job %s: finished, but it was canceled meanwhile", job_id)
        else:
            log.info("job %s: succeeded (%d bytes)", job_id, len(output.data))
            self._count_success(state, finished, image, engine_seconds)

    def _count_success(
        self, state: _JobState, job: Job, image: bytes, engine_seconds: float
    ) -> None:
        recorder = metrics.recorder()
        if recorder is None:
            return
        _observe_phase(state.phase, self.monotonic() - state.phase_started)
        _count_finished(job)
        recorder.credits_charged.inc(job.credits_charged)
        try:
            info = self.processing.ports.probe.probe(image)
        except Exception:
            return  # the engine read it; a probe failing now changes nothing for the job
        megapixels = info.width * info.height / 1e6
        if megapixels > 0:
            recorder.engine_seconds_per_megapixel.observe(engine_seconds / megapixels)

    def _progress(self, state: _JobState, phase: Phase, percent: int) -> None:
        now = self.monotonic()
        with state.lock:
            if phase != state.phase:
                _observe_phase(state.phase, now - state.phase_started)
                state.phase_started = now
            state.phase, state.percent = phase, max(state.percent, percent)
            due = phase != state.reported_phase or now - state.last_report >= self.report_seconds
            if not due or state.gone or state.timed_out:
                return
            state.reported_phase, state.last_report = phase, now
            percent = state.percent
        self._report(state, phase, percent)

    def _report(self, state: _JobState, phase: Phase, percent: int) -> None:
        try:
            still_ours = self.processing.report(state.claim, phase, percent)
        except Exception:
            log.warning("job %s: could not record progress", state.claim.job.id, exc_info=True)
            return
        if not still_ours:
            state.gone = True

    def _cancelled(self, state: _JobState, stop: threading.Event) -> bool:
        if state.gone or state.timed_out or stop.is_set():
            return True
        if self._over_budget(state):
            state.timed_out = True
            return True
        self._look_for_cancel(state, self.monotonic(), self.cancel_check_seconds)
        return state.gone

    def _look_for_cancel(self, state: _JobState, now: float, every: float) -> None:
        """Ask storage whether the job is still running, at most once per `every` seconds."""
        if now - state.last_check < every:
            return
        state.last_check = now
        try:
            if not self.processing.still_running(state.claim):
                state.gone = True
        except Exception:
            log.warning("job %s: cancel check failed", state.claim.job.id, exc_info=True)

    def _over_budget(self, state: _JobState) -> bool:
        return self.monotonic() - state.started > self.policy.job_time_budget_seconds

    def _guard(self, state: _JobState, stop: threading.Event) -> None:
        """Until the engine returns: renew the lease, notice cancel, budget and stop requests,
        and end the worker when an engine asked to stop does not."""
        last_renewal = self.monotonic()
        while not state.done.wait(self.guard_seconds):
            now = self.monotonic()
            if state.stop_asked is None:
                if not self._should_stop(state, stop, now):
                    if now - last_renewal >= self.heartbeat_seconds:
                        last_renewal = now
                        self._renew(state)
                    continue
                state.stop_asked = now
            if now - state.stop_asked >= self.wedged_grace_seconds:
                self._give_up(state, stop)
                return

    def _should_stop(self, state: _JobState, stop: threading.Event, now: float) -> bool:
        """Whether the engine is to stop now: canceled (looked up when due), over budget,
        or the worker is stopping."""
        if self._over_budget(state) and not state.gone:
            state.timed_out = True
            self._fail_for_time(state)
        if state.gone or state.timed_out or stop.is_set():
            return True
        # Every guard tick at most: the engine may never call back to look for itself.
        self._look_for_cancel(state, now, min(self.cancel_check_seconds, self.guard_seconds))
        return state.gone

    def _renew(self, state: _JobState) -> None:
        with state.lock:
            phase, percent = state.phase, state.percent
            state.reported_phase, state.last_report = phase, self.monotonic()
        self._report(state, phase, percent)

    def _give_up(self, state: _JobState, stop: threading.Event) -> None:
        """The engine ignored a request to stop: end this worker rather than wait for it."""
        job_id = state.claim.job.id
        if state.gone:
            why = "its job was canceled"
        elif state.timed_out:
            why = "its job passed its time budget"
        else:
            why = "the worker is stopping"
            with contextlib.suppress(Exception):
                self._hand_back(state.claim)
        log.critical(
            "job %s: the engine did not stop within %.1f s after %s; ending this worker "
            "process so that a fresh one takes its place",
            job_id,
            self.wedged_grace_seconds,
            why,
        )
        if self.on_wedged is not None:
            self.on_wedged()

    def _fail_for_time(self, state: _JobState) -> None:
        with state.lock:
            if state.failed_for_time:
                return
            state.failed_for_time = True
        budget = self.policy.job_time_budget_seconds
        try:
            failed = self.processing.fail(
                state.claim,
                f"The job took longer than {budget} s, the most one job may take; nothing was "
                "charged. Try a smaller image, fewer colors or a smaller size.",
            )
        except Exception:
            log.exception("job %s: could not record the time-out", state.claim.job.id)
            return
        if failed is not None:
            _count_finished(failed)
            log.info("job %s: failed, over its %d s budget", state.claim.job.id, budget)

    def _hand_back(self, claim: Claim) -> None:
        """Put a job this runner was stopped in the middle of back in the queue."""
        if self.processing.release(claim) is not None:
            log.info("job %s: handed back to the queue", claim.job.id)


def _observe_phase(phase: Phase, seconds: float) -> None:
    recorder = metrics.recorder()
    if recorder is not None:
        recorder.phase_seconds.labels(phase.value).observe(seconds)


def _count_finished(job: Job | None) -> None:
    """Count a job this runner finished (None: it had moved on, someone else counted)."""
    recorder = metrics.recorder()
    if recorder is None or job is None:
        return
    code = "" if job.error is None else job.error.code.value
    recorder.jobs_finished.labels(job.status.value, code).inc()


def _count_canceled() -> None:
    recorder = metrics.recorder()
    if recorder is not None:
        recorder.jobs_finished.labels("canceled", "").inc()


# -- a worker process --


def _die_with_parent() -> None:
    """Ask Linux to SIGTERM this process when its parent dies (no orphaned workers)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def cap_memory(megabytes: int) -> None:
    """Cap this process's address space (0: no cap): past it an allocation raises
    MemoryError, which fails the job in hand, instead of the machine running out."""
    if megabytes <= 0:
        return
    import resource

    limit = megabytes * 1024 * 1024
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _arm_alarm(seconds: float) -> None:
    """SIGALRM with its default action ends the process from the kernel, even while the
    engine holds the interpreter; 0 disarms it."""
    signal.setitimer(signal.ITIMER_REAL, max(0.0, seconds))


def install_stop_signals(stop: threading.Event) -> None:
    """SIGTERM and SIGINT set `stop` (the current job is handed back, see above)."""

    def handler(signum: int, frame: Any) -> None:
        log.info("worker %d: signal %d, stopping", os.getpid(), signum)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def worker_main(settings: Any, supervised: bool = True, engine: Engine | None = None) -> None:
    """Body of one worker process: bootstrap, then run the loop until signalled.

    `settings` is a `printjob_adapters.settings.Settings`. A supervised worker also
    stops when its parent (the server) is gone. `engine` replaces the tracing engine
    (the reliability tests' hostile engines).
    """
    from printjob_adapters.allocator import keep_heap_warm
    from printjob_adapters.bootstrap import bootstrap

    configure_logging(settings.log_format)
    stop = threading.Event()
    install_stop_signals(stop)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    cap_memory(settings.worker_memory_mb)
    # Every job traced as on a warm heap, not only those after the first large image.
    keep_heap_warm()
    parent = os.getppid()
    if supervised:
        _die_with_parent()

        def watch_parent() -> None:
            while not stop.wait(1.0):
                if os.getppid() != parent:
                    log.warning("worker %d: the server is gone; stopping", os.getpid())
                    stop.set()

        threading.Thread(target=watch_parent, name="watch-parent", daemon=True).start()
    container = bootstrap(settings, engine=engine)
    if container.engine is None:
        raise SystemExit("printjob worker: the tracing engine could not be loaded")
    wake = container.storage.job_signal()
    runner = JobRunner(
        container.processing,
        container.engine,
        # A worker asked to stop exits as asked; any other gives up to be replaced.
        on_wedged=lambda: os._exit(0 if stop.is_set() else EXIT_WEDGED),
        arm_alarm=_arm_alarm,
        job_signal=wake,
    )
    try:
        runner.run(stop)
    finally:
        if wake is not None:
            wake.close()
        container.close()


__all__ = ["EXIT_WEDGED", "JobRunner", "cap_memory", "install_stop_signals", "worker_main"]
