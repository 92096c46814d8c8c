"""HTTP benchmarks of the real server: time to accept a 1 MB PNG, time to first answer.

    .venv/bin/python bench/http_bench.py [--runs 60] [--starts 5]

Both figures are taken against `printjob serve` started as a subprocess on loopback,
exactly as an operator runs it (uvicorn + uvloop + httptools, SQLite in a temporary data
directory). Targets (docs/operations.md, "HTTP performance"): median accept < 50 ms,
process start to first answer < 2 s.

* accept: POST /v1/jobs with a 1 MB PNG (random pixels, so it does not compress) over a
  kept-alive connection, timed from the first byte sent to the 202 read. The server runs
  with `--workers 0` and each job is canceled after it is timed (not timed), so the
  queue and the active-job limit stay small; per-minute limits are raised for the run.
* start: from `Popen` of `printjob serve` to the first 200 from GET /v1/openapi.json,
  polled every 10 ms; measured on an empty data directory (first start, which also
  creates the demo account) and again on the same directory (a restart).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.contract.support import ServerProcess, base_env, free_port  # noqa: E402


def one_megabyte_png() -> bytes:
    rng = random.Random(1)
    side = 600
    image = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def bench_accept(runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(
            Path(tmp) / "data",
            workers=0,
            PRINTJOB_SUBMISSIONS_PER_MINUTE="100000",
            PRINTJOB_READS_PER_MINUTE="100000",
        ).start()
        try:
            client = server.account(credits=runs + 10, active_jobs_max=10)
            image = one_megabyte_png()
            timings: list[float] = []
            for index in range(runs + 5):
                files = {"image": ("bench.png", image, "image/png")}
                started = time.perf_counter()
                response = client.post("/v1/jobs", files=files, data={"format": "svg"})
                elapsed = time.perf_counter() - started
                assert response.status_code == 202, response.text
                client.post(f"/v1/jobs/{response.json()['id']}/cancel")
                if index >= 5:  # the first few warm up connections and caches
                    timings.append(elapsed * 1000)
            client.close()
        finally:
            server.stop()
    timings.sort()
    return {
        "bytes": len(image),
        "median_ms": statistics.median(timings),
        "p95_ms": timings[int(len(timings) * 0.95) - 1],
        "min_ms": timings[0],
        "max_ms": timings[-1],
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_first_answer(data_dir: Path) -> tuple[float, float]:
    """Wall time from Popen to the first 200, and the CPU time the server used by then."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1/openapi.json"
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "printjob_http.cli", "serve", "--port", str(port), "--workers", "0"],
        env=base_env(data_dir, PRINTJOB_BASE_URL=f"http://127.0.0.1:{port}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    client = httpx.Client()
    try:
        while True:
            try:
                if client.get(url, timeout=0.5).status_code == 200:
                    return time.perf_counter() - started, cpu_seconds(process.pid)
            except httpx.HTTPError:
                pass
            if time.perf_counter() - started > 30:
                raise RuntimeError("the server did not answer in 30 s")
            time.sleep(0.01)
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=20)


def bench_start(starts: int) -> dict[str, float]:
    first, again = [], []
    for _ in range(starts):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            first.append(time_to_first_answer(data_dir))
            again.append(time_to_first_answer(data_dir))
    return {
        "first_start_median_s": statistics.median(w for w, _ in first),
        "first_start_max_s": max(w for w, _ in first),
        "first_start_cpu_s": statistics.median(c for _, c in first),
        "restart_median_s": statistics.median(w for w, _ in again),
        "restart_max_s": max(w for w, _ in again),
        "restart_cpu_s": statistics.median(c for _, c in again),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="timed submissions (60)")
    parser.add_argument("--starts", type=int, default=5, help="timed server starts (5)")
    args = parser.parse_args()
    # Let the servers cache bytecode as an installed service does.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    accept = bench_accept(args.runs)
    print(
        f"accept 1 MB PNG ({accept['bytes']:,} bytes, {args.runs} runs): "
        f"median {accept['median_ms']:.1f} ms, p95 {accept['p95_ms']:.1f} ms, "
        f"min {accept['min_ms']:.1f} ms, max {accept['max_ms']:.1f} ms"
    )
    start = bench_start(args.starts)
    print(
        f"process start to first answer ({args.starts} runs each): first start median "
        f"{start['first_start_median_s']:.2f} s (max {start['first_start_max_s']:.2f} s); "
        f"restart median {start['restart_median_s']:.2f} s (max {start['restart_max_s']:.2f} s)"
    )
    print(
        f"server CPU time used by the first answer (median): first start "
        f"{start['first_start_cpu_s']:.2f} s, restart {start['restart_cpu_s']:.2f} s"
    )
    print(f"load average during the run: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
