"""Running the service: `printjob serve` (API + supervised workers) and `printjob worker`.

`serve` bootstraps storage, runs `JobProcessing.recover()` once (design decision 9),
creates a demo account and key on the first start with an empty data directory, starts
N worker processes under a supervisor thread (a worker that dies is started again; all
are stopped on shutdown), then runs uvicorn (uvloop + httptools) in this process.

Worker processes are separate OS processes started with `spawn` (no SQLite connection
is ever shared across a fork). They ignore SIGINT (the terminal's Ctrl-C reaches the
whole process group; the server then stops them itself) and stop on SIGTERM, handing
their current job back to the queue. Linux's parent-death signal and a parent check
stop them should the server be killed outright.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import signal
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import attrs

from printjob_adapters.logging_setup import configure_logging as _configure
from printjob_adapters.settings import Settings
from printjob_core.readiness import Workers

log = logging.getLogger("printjob.server")

DEMO_CREDITS = 20
#: Seconds a stopping worker gets to hand its job back before it is killed.
STOP_GRACE_SECONDS = 10.0
#: Exit codes of a worker that ended itself on purpose: its runner's kill guard
#: (`runner.EXIT_WEDGED`) or the kernel alarm of a job past its budget (SIGALRM).
_REPLACE_AT_ONCE = frozenset({3, -signal.SIGALRM})


def configure_logging(log_format: str = "text") -> None:
    """The process's log: see `printjob_adapters.logging_setup` (one format everywhere)."""
    _configure(log_format)


def _supervised_worker(settings: Settings) -> None:
    """Entry of a worker process started by the supervisor."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from printjob_adapters.runner import worker_main

    worker_main(settings, supervised=True)


class Supervisor:
    """Keeps `count` worker processes alive until `stop()`."""

    def __init__(
        self,
        settings: Settings,
        count: int,
        check_seconds: float = 0.2,
        target: Callable[[Settings], None] = _supervised_worker,
    ) -> None:
        self.settings = settings
        #: What each worker process runs (a module-level function: processes are spawned).
        self.target = target
        self.count = count
        self.check_seconds = check_seconds
        self._context = multiprocessing.get_context("spawn")
        self._processes: list[BaseProcess | None] = [None] * count
        self._failures = [0] * count
        self._not_before = [0.0] * count
        self._started = [0.0] * count
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.count <= 0:
            log.info("no worker processes (--workers 0): jobs stay queued until a worker runs")
            return
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self._thread.start()

    def workers(self) -> Workers:
        """How many of the supervised workers are alive now (for `/readyz`)."""
        with self._lock:
            alive = sum(1 for p in self._processes if p is not None and p.is_alive())
        return Workers(expected=max(0, self.count), alive=alive)

    @property
    def pids(self) -> list[int]:
        with self._lock:
            return [p.pid for p in self._processes if p is not None and p.pid is not None]

    def _spawn(self, index: int) -> None:
        process = self._context.Process(
            target=self.target,
            args=(self.settings,),
            name=f"printjob-worker-{index + 1}",
            daemon=False,
        )
        process.start()
        self._processes[index] = process
        self._started[index] = time.monotonic()
        log.info("worker %d started (pid %s)", index + 1, process.pid)

    def _watch(self) -> None:
        # Workers get SIGTERM when the thread that started them ends (Linux parent-death
        # signal), so this thread must outlive every error.
        while not self._stopping.is_set():
            try:
                self._check()
            except Exception:
                log.exception("worker supervisor: unexpected error; carrying on")
            self._stopping.wait(self.check_seconds)

    def _check(self) -> None:
        with self._lock:
            if self._stopping.is_set():
                return
            for index, process in enumerate(self._processes):
                if process is not None and process.is_alive():
                    continue
                now = time.monotonic()
                if process is not None and process.exitcode in _REPLACE_AT_ONCE:
                    # The worker ended itself because its engine would not stop (a canceled
                    # or timed-out job): a fresh one at once, whatever jobs asked for it.
                    log.warning(
                        "worker %d (pid %s) ended itself (exit %s); replacing it",
                        index + 1,
                        process.pid,
                        process.exitcode,
                    )
                    process.close()
                    self._processes[index] = None
                    self._spawn(index)
                    continue
                if process is not None:
                    log.warning(
                        "worker %d (pid %s) exited with %s",
                        index + 1,
                        process.pid,
                        process.exitcode,
                    )
                    process.close()
                    self._processes[index] = None
                    if now - self._started[index] > 60:
                        self._failures[index] = 0  # it had been running well
                    self._failures[index] += 1
                    # Back off when a worker keeps dying at once (up to 30 s).
                    delay = min(30.0, 0.5 * 2 ** min(self._failures[index] - 1, 6))
                    self._not_before[index] = now + delay
                if now >= self._not_before[index]:
                    self._spawn(index)

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """SIGTERM every worker, wait up to `grace` seconds, then kill what is left."""
        self._stopping.set()
        with self._lock:
            processes = [p for p in self._processes if p is not None]
            self._processes = [None] * self.count
        for process in processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.warning("worker pid %s did not stop in %.0f s; killing it", process.pid, grace)
                process.kill()
                process.join(5)
        if self._thread is not None:
            self._thread.join(timeout=5)


def _is_empty(directory: Path) -> bool:
    return not directory.exists() or not any(directory.iterdir())


def _sample_image(width: int = 320, height: int = 240) -> bytes:
    """A small two-colour PNG (a red disc on white) for the demo command.

    Written by hand so that the API process does not import Pillow just to start.
    """
    cx, cy, r2 = width * 0.4, height * 0.5, (min(width, height) * 0.35) ** 2
    white, red = b"\xff\xff\xff", b"\xdc\x28\x28"
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter type: none
        for x in range(width):
            rows += red if (x - cx) ** 2 + (y - cy) ** 2 <= r2 else white

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def create_demo(container: Any, base_url: str) -> str:
    """A demo account with credits, a key, a sample image and a ready command (as text)."""
    operator = container.operator
    account = operator.create_account(DEMO_CREDITS)
    _key, secret = operator.create_key(account.id)
    sample = Path(container.settings.data_dir) / "demo" / "sample.png"
    sample.parent.mkdir(mode=0o700, exist_ok=True)
    # 0600 like every file of the data directory, whatever the umask.
    fd = os.open(sample, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(_sample_image())
    return (
        "\n"
        "printjob: first start with an empty data directory "
        f"({container.settings.data_dir}).\n"
        f"A demo account was created with {DEMO_CREDITS} credits:\n"
        f"  account id: {account.id}\n"
        f"  API key:    {secret}\n"
        "  (the key is shown only this once; create more with `printjob keys create`)\n"
        f"The website: {base_url}/ (sign up for an account of your own, create API keys "
        "and convert pictures in the browser)\n"
        "Convert the sample picture to an SVG:\n"
        f"  curl -sS -X POST {base_url}/v1/jobs \\\n"
        f'    -H "Authorization: Bearer {secret}" \\\n'
        f"    -F image=@{sample} -F format=svg\n"
        "Then poll the job's Location until its status is succeeded and download result.url:\n"
        f'  curl -sS -H "Authorization: Bearer {secret}" {base_url}/v1/jobs/<job_id>\n'
        f'  curl -sS -OJ -H "Authorization: Bearer {secret}" {base_url}/v1/jobs/<job_id>/result\n'
    )


def _server_class() -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, minus re-raising SIGTERM/SIGINT once it has stopped.

        uvicorn re-raises the signal after a graceful stop, which would kill this process
        before it stops its workers; the workers are stopped in `serve`'s `finally`.
        """

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            self._captured_signals.clear()

    return Server


def _warm_up(container: Any, delay: float = 1.0) -> None:
    """Load the image probe (Pillow) in the background shortly after serving starts, so the
    first upload does not pay for the import and the first answers are not slowed by it."""

    def probe_once() -> None:
        try:
            container.probe.probe(_sample_image(16, 16))
        except Exception:
            log.warning("the image probe could not be loaded", exc_info=True)

    timer = threading.Timer(delay, probe_once)
    timer.name, timer.daemon = "warm-up", True
    timer.start()


def _settle_heap() -> None:
    """Move everything loaded so far out of the garbage collector's sight.

    The modules, the app and the routes live as long as the process; without this, every
    full collection walks all of them while requests wait (a p99 of tens of ms under load).
    """
    gc.collect()
    gc.freeze()


#: glibc's `mallopt` parameter for the size from which blocks are mapped on their own.
_M_MMAP_THRESHOLD = -3
#: Blocks from 1 MiB up (an upload's image part, a spool buffer) are mapped on their own.
LARGE_BLOCK_BYTES = 1024 * 1024


def _return_large_blocks() -> None:
    """Have glibc map every block of `LARGE_BLOCK_BYTES` or more on its own, so that it
    goes back to the system when freed.

    By default glibc raises that threshold to the size of the largest block freed (up to
    32 MiB), after which a 30 MB upload is carved from a thread's heap and kept there:
    four padded uploads at once left the API process 150 MB larger for good. A fixed
    threshold turns the adjustment off. Elsewhere than glibc this does nothing.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES)
    except (OSError, AttributeError):
        log.debug("mallopt is not available; large blocks stay under the allocator's rules")


def _bootstrap_without_engine(bootstrap: Any, settings: Settings) -> Any:
    """The API process never converts: skip importing the engine when bootstrap allows."""
    return bootstrap(settings, lazy=True)


def connection_limits(settings: Settings) -> Any:
    """The operator's connection timeouts and bounds, for the protocol."""
    from printjob_http.protocol import ConnectionLimits

    return ConnectionLimits(
        head_seconds=settings.header_timeout_seconds,
        body_window_seconds=settings.body_window_seconds,
        body_min_bytes=settings.body_min_bytes,
        keepalive_seconds=settings.keepalive_timeout_seconds,
        keepalive_max=settings.keepalive_max,
        write_seconds=settings.write_timeout_seconds,
    )


def server_options(
    host: str, port: int, docs_url: str | None, limits: Any = None
) -> dict[str, Any]:
    """How uvicorn runs the API (also used by `bench/load.py` for its bare baseline app);
    `limits` a `printjob_http.protocol.ConnectionLimits` (None: the defaults)."""
    from printjob_http.protocol import ConnectionLimits, bounded_protocol

    bounds = limits or ConnectionLimits()
    return {
        "host": host,
        "port": port,
        "loop": "uvloop",
        # httptools, with the request head bounded (it has no limit of its own).
        "http": bounded_protocol(docs_url, bounds),
        "timeout_keep_alive": bounds.keepalive_seconds,
        "lifespan": "on",
        "access_log": False,  # `printjob_http.access_log` writes it, far cheaper
        "proxy_headers": False,  # X-Forwarded-For is judged by the app (trusted proxies)
        "server_header": False,
        "timeout_graceful_shutdown": 10,
        "log_config": None,
    }


def run_server(app: Any, options: dict[str, Any], sock: Any, log_format: str = "text") -> None:
    """Serve `app` on the bound `sock` until SIGTERM or Ctrl-C, with the access log."""
    import uvicorn

    from printjob_adapters.metrics import recorder
    from printjob_http.access_log import AccessLog

    counting = recorder()
    logged = AccessLog(
        app,
        fd=sys.stderr.fileno(),
        json_lines=log_format == "json",
        observe=None if counting is None else counting.request,
    )
    server = _server_class()(uvicorn.Config(logged, **options))
    _return_large_blocks()
    _settle_heap()
    try:
        server.run(sockets=[sock])
    finally:
        logged.flush()


def serve(
    settings: Settings,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int | None = None,
) -> None:
    """Run the API on host:port with `workers` supervised worker processes (0: API only)."""
    import uvicorn

    from printjob_adapters.blobs import make_private_dirs
    from printjob_adapters.bootstrap import bootstrap
    from printjob_http.app import create_app

    configure_logging(settings.log_format)
    count = settings.workers if workers is None else workers
    settings = attrs.evolve(settings, base_url=settings.base_url_for(host, port))
    options = server_options(host, port, settings.docs_url, connection_limits(settings))
    # Take the port first: a port in use stops here, before anything is created, and
    # early clients wait in the listen queue instead of being refused.
    sock = uvicorn.Config("printjob:app", **options).bind_socket()
    try:
        first_start = _is_empty(settings.data_dir)
        if settings.metrics_token:
            # Before any worker is spawned: they inherit the folder and count into it.
            from printjob_adapters import metrics

            metrics.prepare(settings.data_dir)
        container = _bootstrap_without_engine(bootstrap, settings)
        recovered = container.processing.recover()
        if recovered:
            log.info("startup: %d job(s) of a previous run recovered", len(recovered))
        if first_start:
            print(create_demo(container, settings.base_url or ""), flush=True)
        supervisor = Supervisor(settings, count)
        # Uploads are spooled beside the blobs (also when the blobs live in the database).
        make_private_dirs(settings.blobs_dir)
        app = create_app(
            container,
            on_startup=[lambda: _warm_up(container)],
            workers=supervisor.workers,
            spool_dir=settings.blobs_dir,
        )
        supervisor.start()
        log.info(
            "printjob API on %s/v1 and website on %s/ with %d worker process(es)",
            settings.base_url,
            settings.base_url,
            count,
        )
        try:
            run_server(app, options, sock, settings.log_format)
        finally:
            supervisor.stop()
            container.close()
    finally:
        sock.close()


def run_worker(settings: Settings) -> None:
    """`printjob worker`: a processing-only process running the job runner in the foreground.

    SIGTERM or Ctrl-C stops it after handing its current job back to the queue. Should
    the engine ignore a job's time budget for a further minute, the process exits with
    status 3 so that its service manager starts a fresh one.
    """
    configure_logging(settings.log_format)
    from printjob_adapters.runner import worker_main

    worker_main(settings, supervised=False)


__all__ = [
    "Supervisor",
    "configure_logging",
    "connection_limits",
    "create_demo",
    "run_server",
    "run_worker",
    "serve",
    "server_options",
]
