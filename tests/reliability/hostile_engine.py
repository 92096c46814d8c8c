"""A deliberate test double of the engine for the reliability suite's worker processes.

Chosen by the job's `colors`:

* 2: spins forever without calling back (ignores cancel and budget);
* 3: slow but cooperative (about `SLOW_SECONDS`, calling back every 50 ms);
* 4: allocates until the worker's memory cap stops it;
* anything else: a small SVG at once.

Kept apart from the tests so that a spawned worker imports only this and printjob.
"""

from __future__ import annotations

import signal
import time

from printjob_adapters.settings import Settings
from printjob_core.errors import ConversionCancelled
from printjob_core.model import ConversionOutput, JobOptions, Phase
from printjob_core.ports import CancelCheck, ProgressCallback

SLOW_SECONDS = 1.5
SPIN, SLOW, GREEDY = "2", "3", "4"


class HostileEngine:
    """The engine's test double: behaves as the job's `colors` asks (see above)."""

    def convert(
        self,
        image: bytes,
        options: JobOptions,
        progress: ProgressCallback,
        cancelled: CancelCheck,
    ) -> ConversionOutput:
        if options.colors == int(SPIN):
            while True:  # never calls back, never returns
                sum(range(10_000))
        if options.colors == int(SLOW):
            end = time.monotonic() + SLOW_SECONDS
            while time.monotonic() < end:
                progress(Phase.BUILDING, 50)
                if cancelled():
                    raise ConversionCancelled("stopped")
                time.sleep(0.05)
        if options.colors == int(GREEDY):
            hoard = []
            while True:
                hoard.append(bytearray(1024 * 1024 * 1024))  # past any test's cap at once
        return ConversionOutput(b'<svg xmlns="http://www.w3.org/2000/svg"/>', 64, 64, 2, False)


def hostile_worker(settings: Settings) -> None:
    """A supervised worker process with the hostile engine (spawned: module level)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from printjob_adapters.runner import worker_main

    worker_main(settings, supervised=True, engine=HostileEngine())
