"""Read load with wrk against the real server, beside a bare Litestar route; jobs per minute.

    .venv/bin/python bench/load.py [--duration 15] [--connections 32] [--threads 2]
                                   [--skip-jobs] [--corpus ../shared/corpus] [--rounds 2]
                                   [--repeat 3]

Needs `wrk` (Debian: `apt-get install -y wrk`; the script says so if it is missing).

1. Reads: `printjob serve --workers 0` on loopback with PRINTJOB_READS_PER_MINUTE set very
   high (so the per-account limit does not dominate); one account, one queued job.
   `wrk -t2 -c32 -d15s --latency -H "Authorization: Bearer <key>"` against
   GET /v1/jobs/{id} and GET /v1/account.
2. Baseline: a bare Litestar app (no auth, no storage) returning the same job JSON bytes,
   run by the same server code as printjob (`printjob_http.server.server_options` and
   `run_server`: uvicorn + uvloop + bounded httptools, one process, the same access log
   and logging), with the same wrk command. Both servers stay up; the three routes are
   measured in turn `--repeat` times and the median run of each is reported.
3. End to end: `printjob serve` with its default workers (one per core) converts every
   PNG/JPEG of the public corpus `--rounds` times through the API (submit as SVG, poll at
   Retry-After, download); jobs per minute = jobs / wall time from first submit to last
   download.

Targets (docs/operations.md, "Soak and load"): printjob reads at least half the bare
route's throughput, p99 under 25 ms at 32 connections.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.contract.support import ServerProcess, base_env, free_port  # noqa: E402

HIGH = "100000000"

BARE_APP = textwrap.dedent(
    """
    import sys
    import uvicorn
    from litestar import Litestar, Response, get
    from printjob_http.server import configure_logging, run_server, server_options

    BODY = open(sys.argv[2], "rb").read()

    @get("/v1/jobs/{job_id:str}")
    async def job(job_id: str) -> Response[bytes]:
        return Response(content=BODY, media_type="application/json")

    app = Litestar([job], openapi_config=None, debug=False, logging_config=None)
    # Exactly the server `printjob serve` runs: its uvicorn options (uvloop, bounded
    # httptools, access log), its logging and its start-up; only the app differs.
    configure_logging()
    options = server_options("127.0.0.1", int(sys.argv[1]), "https://printjob.test/docs")
    run_server(app, options, uvicorn.Config(app, **options).bind_socket())
    """
)


def need_wrk() -> str:
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("wrk is not installed: run `apt-get install -y wrk` (Debian/Ubuntu) and retry")
    return wrk


def parse_wrk(text: str) -> dict[str, float]:
    def ms(value: str) -> float:
        number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", value).groups()  # type: ignore[union-attr]
        return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    out: dict[str, float] = {
        "requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)),  # type: ignore[union-attr]
    }
    for pct in ("50", "99"):
        out[f"p{pct}_ms"] = ms(re.search(rf"\s{pct}%\s+([\d.]+\w+)", text).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["non_2xx"] = float(errors.group(1)) if errors else 0.0
    socket_errors = re.search(r"Socket errors: (.*)", text)
    out["socket_errors"] = socket_errors.group(1) if socket_errors else "none"  # type: ignore[assignment]
    return out


def run_wrk(url: str, args: argparse.Namespace, key: str | None = None) -> dict[str, float]:
    command = [need_wrk(), f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s"]
    command.append("--latency")
    if key:
        command += ["-H", f"Authorization: Bearer {key}"]
    command.append(url)
    shown = shlex.join(command).replace(key or "\0", "<key>")
    print(f"$ {shown}", flush=True)
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result = parse_wrk(done.stdout)
    result["command"] = shown  # type: ignore[assignment]
    return result


def wait_ready(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def bench_reads(args: argparse.Namespace) -> dict[str, object]:
    """Both servers up side by side; the three wrk runs taken in turn, `--repeat` times, so
    a disturbance of the machine hits every route alike; the median run of each is kept."""
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in ROUTES}
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(
            Path(tmp) / "data",
            workers=0,
            PRINTJOB_READS_PER_MINUTE=HIGH,
            PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        ).start()
        bare: subprocess.Popen[bytes] | None = None
        try:
            client = server.account(credits=10)
            job = client.submit().json()
            body_file = Path(tmp) / "job.json"
            body_file.write_bytes(client.get(f"/v1/jobs/{job['id']}").content)
            port = free_port()
            with open(Path(tmp) / "bare.log", "ab") as bare_log:
                bare = subprocess.Popen(
                    [sys.executable, "-c", BARE_APP, str(port), str(body_file)],
                    env=base_env(Path(tmp) / "bare"),
                    stdout=bare_log,
                    stderr=bare_log,
                )
            urls = {
                "printjob GET /v1/jobs/{id}": (f"{server.base_url}/v1/jobs/{job['id']}", True),
                "printjob GET /v1/account": (f"{server.base_url}/v1/account", True),
                "bare Litestar GET /v1/jobs/{id}": (
                    f"http://127.0.0.1:{port}/v1/jobs/{job['id']}",
                    False,
                ),
            }
            wait_ready(urls["bare Litestar GET /v1/jobs/{id}"][0])
            time.sleep(2)  # let the server's background warm-up finish
            for _ in range(args.repeat):
                for name, (url, keyed) in urls.items():
                    runs[name].append(run_wrk(url, args, client.key if keyed else None))
            still = client.get("/v1/account")
            assert still.status_code == 200, still.text
            client.close()
        finally:
            server.stop()
            if bare is not None:
                bare.terminate()
                bare.wait(timeout=20)
    results: dict[str, object] = {}
    for name, figures in runs.items():
        ordered = sorted(figures, key=lambda f: f["requests_per_s"])
        median = dict(ordered[len(ordered) // 2])
        median["runs_requests_per_s"] = [f["requests_per_s"] for f in figures]  # type: ignore[assignment]
        median["runs_p99_ms"] = [f["p99_ms"] for f in figures]  # type: ignore[assignment]
        results[name] = median
    return results


ROUTES = (
    "printjob GET /v1/jobs/{id}",
    "printjob GET /v1/account",
    "bare Litestar GET /v1/jobs/{id}",
)


def corpus_images(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg"))


def bench_jobs(args: argparse.Namespace) -> dict[str, object]:
    images = corpus_images(Path(args.corpus)) * args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(
            Path(tmp) / "data",
            workers=os.cpu_count() or 1,
            PRINTJOB_READS_PER_MINUTE=HIGH,
            PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        ).start()
        try:
            client = server.account(credits=len(images) + 10, active_jobs_max=10)
            time.sleep(3)  # workers import the engine
            pending = list(images)
            running: dict[str, Path] = {}
            done: dict[str, dict] = {}
            started = time.monotonic()
            while pending or running:
                while pending and len(running) < 10:
                    path = pending.pop(0)
                    response = client.post(
                        "/v1/jobs",
                        files={"image": (path.name, path.read_bytes())},
                        data={"format": "svg"},
                    )
                    assert response.status_code == 202, response.text
                    running[response.json()["id"]] = path
                time.sleep(0.5)
                for job_id in list(running):
                    job = client.get(f"/v1/jobs/{job_id}").json()
                    if job["status"] in ("succeeded", "failed", "canceled"):
                        if job["status"] == "succeeded":
                            data = client.get(f"/v1/jobs/{job_id}/result").content
                            assert len(data) == job["result"]["bytes"]
                        done[job_id] = job
                        del running[job_id]
            elapsed = time.monotonic() - started
            client.close()
        finally:
            server.stop()
    statuses = [job["status"] for job in done.values()]
    return {
        "images": len(images),
        "workers": os.cpu_count() or 1,
        "seconds": round(elapsed, 1),
        "jobs_per_minute": round(len(done) / elapsed * 60, 1),
        "succeeded": statuses.count("succeeded"),
        "failed": statuses.count("failed"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="wrk runs per route, taken in turn")
    parser.add_argument(
        "--corpus",
        default=os.environ.get("PRINTJOB_CORPUS", str(ROOT.parent / "shared" / "corpus")),
    )
    parser.add_argument("--skip-jobs", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    need_wrk()
    print(f"load average before: {os.getloadavg()}", flush=True)
    report: dict[str, object] = {"reads": bench_reads(args)}
    reads = report["reads"]
    assert isinstance(reads, dict)
    for name, figures in reads.items():
        print(
            f"{name:34s} {figures['requests_per_s']:9.0f} req/s  p50 {figures['p50_ms']:6.2f} ms"
            f"  p99 {figures['p99_ms']:6.2f} ms  non-2xx {figures['non_2xx']:.0f}"
            f"  (runs: {figures['runs_requests_per_s']} req/s, p99 {figures['runs_p99_ms']} ms)"
        )
    bare = reads["bare Litestar GET /v1/jobs/{id}"]["requests_per_s"]
    ours = reads["printjob GET /v1/jobs/{id}"]["requests_per_s"]
    print(f"printjob / bare: {ours / bare:.2f} (target >= 0.5)")
    if not args.skip_jobs:
        report["jobs"] = bench_jobs(args)
        print(f"end to end: {report['jobs']}")
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
