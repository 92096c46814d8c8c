"""Throughput of printjob on PostgreSQL with several processes on this machine.

    .venv/bin/python bench/cluster_bench.py [--jobs 24] [--workers 1,2,4] [--seconds 8]
    .venv/bin/python bench/cluster_bench.py --blobs files,database [--jobs 16]

1. Jobs per minute with 1, 2 and 4 `printjob worker` processes: N jobs are queued first
   (through an API process with `--workers 0`), then the workers are started and the
   clock runs until the last job is final.
2. API reads per second (`GET /v1/jobs/{id}`, authenticated, rate limit raised) with one
   and with two `printjob serve --workers 0` processes on one database, from 32 concurrent
   connections of an asyncio client in this process.

With `--blobs`, instead, the blob stores side by side (`PRINTJOB_BLOBS=files`, one data
directory shared by every process; `database`, a data directory per process and the blobs
in PostgreSQL), each with one API process and one `printjob worker` per core:

3. Upload: the time to accept (202) a ~1 MB and a ~20 MB image (`--uploads` of each,
   canceled at once; no worker runs meanwhile), median and throughput.
4. Download: `GET /v1/jobs/{id}/result` of a print PNG (4500x5400, 300 dpi), median.
5. Jobs per minute: `--jobs` posters queued to SVG, then the workers started.

PostgreSQL comes from `PRINTJOB_TEST_DATABASE_URL` or `.ci/postgres-up`; every run uses a
fresh database. Figures are written to docs/operations.md by hand ("Several machines").
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path

import httpx
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.contract.support import ServerProcess  # noqa: E402
from tests.postgres_support import create_database, drop_database  # noqa: E402
from tests.reliability.test_postgres_cluster import Worker  # noqa: E402

HIGH = "1000000000"


def picture(n: int, size: int = 900) -> bytes:
    """A poster-like picture: bands and discs in 6 colours (a typical job, ~1-2 s)."""
    image = Image.new("RGB", (size, size * 3 // 4), (250, 248, 240))
    draw = ImageDraw.Draw(image)
    colours = [(200, 30, 40), (20, 90, 180), (240, 190, 20), (30, 140, 70), (40, 40, 40)]
    for i in range(18):
        c = colours[(i + n) % len(colours)]
        x, y = (i * 97 + n * 13) % size, (i * 61) % (size * 3 // 4)
        draw.ellipse((x, y, x + 120 + i * 3, y + 90 + i * 2), fill=c)
    draw.rectangle((0, 0, size, 40 + n % 7), fill=colours[n % 5])
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def noise_png(side: int, pad_to: int = 0) -> bytes:
    """A square PNG of random pixels (incompressible, like a photo's bytes), padded up to
    `pad_to` bytes with a private ancillary chunk after the pixels: the pixel limit (3 MP)
    keeps real pixels under ~9 MB, and an upload's cost is its bytes."""
    image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    data = out.getvalue()
    missing = pad_to - len(data) - 12
    if missing <= 0:
        return data
    body = os.urandom(missing)
    chunk = struct.pack(">I", len(body)) + b"prVt" + body
    chunk += struct.pack(">I", zlib.crc32(b"prVt" + body) & 0xFFFFFFFF)
    iend = data.rindex(b"IEND") - 4
    return data[:iend] + chunk + data[iend:]


def settings_for(url: str, blobs: str = "files") -> dict[str, str]:
    return {
        "PRINTJOB_DATABASE_URL": url,
        "PRINTJOB_BLOBS": blobs,
        "PRINTJOB_SUBMISSIONS_PER_MINUTE": HIGH,
        "PRINTJOB_READS_PER_MINUTE": HIGH,
        "PRINTJOB_MAX_QUEUE_DEPTH": "100000",
    }


def jobs_per_minute(workers: int, jobs: int, root: Path) -> float:
    url = create_database()
    data_dir = root / f"jobs-{workers}" / "data"
    settings = settings_for(url)
    api = ServerProcess(data_dir, workers=0, **settings).start()
    procs: list[Worker] = []
    try:
        client = api.account(credits=jobs, active_jobs_max=10)
        ids: list[str] = []
        # active_jobs_max is at most 10: use several accounts.
        clients = [client] + [
            api.account(credits=jobs, active_jobs_max=10) for _ in range((jobs - 1) // 10)
        ]
        for n in range(jobs):
            response = clients[n // 10].submit(picture(n), format="svg")
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])
        started = time.monotonic()
        procs = [
            Worker(data_dir, settings, root / f"jobs-{workers}-w{n}.log") for n in range(workers)
        ]
        for proc in procs:
            proc.start()
        for n, job_id in enumerate(ids):
            job = clients[n // 10].wait(job_id, timeout=900)
            assert job["status"] == "succeeded", job
        elapsed = time.monotonic() - started
    finally:
        for proc in procs:
            proc.stop()
        api.stop()
        drop_database(url)
    return jobs / elapsed * 60


async def _hammer(urls: list[str], key: str, job_id: str, seconds: float) -> float:
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    headers = {"Authorization": f"Bearer {key}"}
    clients = [
        httpx.AsyncClient(base_url=u, headers=headers, limits=limits, timeout=30) for u in urls
    ]
    done = 0
    stop_at = time.monotonic() + seconds

    async def loop(n: int) -> None:
        nonlocal done
        client = clients[n % len(clients)]
        while time.monotonic() < stop_at:
            response = await client.get(f"/v1/jobs/{job_id}")
            assert response.status_code == 200, response.text
            done += 1

    started = time.monotonic()
    await asyncio.gather(*(loop(n) for n in range(32)))
    elapsed = time.monotonic() - started
    for client in clients:
        await client.aclose()
    return done / elapsed


def reads_per_second(apis: int, seconds: float, root: Path) -> float:
    url = create_database()
    data_dir = root / f"reads-{apis}" / "data"
    servers = [ServerProcess(data_dir, workers=0, **settings_for(url)) for _ in range(apis)]
    try:
        for server in servers:
            server.start()
        client = servers[0].account(credits=5)
        response = client.submit(picture(1), format="svg")
        job_id = response.json()["id"]
        asyncio.run(_hammer([s.base_url for s in servers], client.key, job_id, 1.0))  # warm
        return asyncio.run(_hammer([s.base_url for s in servers], client.key, job_id, seconds))
    finally:
        for server in servers:
            server.stop()
        drop_database(url)


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def blob_store_figures(blobs: str, jobs: int, uploads: int, root: Path) -> dict[str, str]:
    """Upload, download and jobs per minute with one blob store (see the module notes)."""
    url = create_database()
    settings = settings_for(url, blobs)
    base = root / f"blobs-{blobs}"

    def data_dir(process: str) -> Path:
        return base / ("shared" if blobs == "files" else process) / "data"

    api = ServerProcess(data_dir("api"), workers=0, **settings).start()
    cores = os.cpu_count() or 1
    procs = [
        Worker(data_dir(f"worker-{n}"), settings, base / f"worker-{n}.log") for n in range(cores)
    ]
    figures: dict[str, str] = {}
    try:
        client = api.account(credits=jobs + 2 * uploads + 10, active_jobs_max=10)
        for label, image in (("1 MB", noise_png(580)), ("20 MB", noise_png(1700, 20_000_000))):
            times: list[float] = []
            for n in range(uploads + 1):
                started = time.perf_counter()
                response = client.submit(image, format="svg")
                elapsed = time.perf_counter() - started
                assert response.status_code == 202, response.text
                client.post(f"/v1/jobs/{response.json()['id']}/cancel")
                if n:  # the first one warms the connection and the pool
                    times.append(elapsed)
            mb = len(image) / 1e6
            figures[f"upload {label}"] = (
                f"{_median_ms(times):.0f} ms ({mb / statistics.median(times):.0f} MB/s, "
                f"{mb:.1f} MB)"
            )

        for proc in procs:
            proc.start()
        # Print PNG: 4500x5400 at 300 dpi (size "original"), the largest result there is.
        response = client.submit(picture(0), format="png", size="original")
        assert response.status_code == 202, response.text
        job = client.wait(response.json()["id"], timeout=300)
        assert job["status"] == "succeeded", job
        times = []
        for _ in range(uploads + 1):
            started = time.perf_counter()
            got = client.get(f"/v1/jobs/{job['id']}/result")
            times.append(time.perf_counter() - started)
            assert got.status_code == 200 and len(got.content) == job["result"]["bytes"]
        times = times[1:]
        mb = job["result"]["bytes"] / 1e6
        figures["download print PNG"] = (
            f"{_median_ms(times):.0f} ms ({mb / statistics.median(times):.0f} MB/s, {mb:.1f} MB)"
        )
        for proc in procs:
            proc.stop()

        # active_jobs_max is at most 10: use several accounts.
        clients = [api.account(credits=10, active_jobs_max=10) for _ in range((jobs + 9) // 10)]
        ids: list[str] = []
        for n in range(jobs):
            response = clients[n // 10].submit(picture(n + 1), format="svg")
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])
        started = time.monotonic()
        for proc in procs:
            proc.start()
        for n, job_id in enumerate(ids):
            done = clients[n // 10].wait(job_id, timeout=900)
            assert done["status"] == "succeeded", done
        rate = jobs / (time.monotonic() - started) * 60
        figures["jobs per minute"] = f"{rate:.1f} ({cores} workers)"
    finally:
        for proc in procs:
            proc.stop()
        api.stop()
        drop_database(url)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=24)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--blobs", help="compare blob stores instead, e.g. files,database")
    parser.add_argument("--uploads", type=int, default=8, help="uploads (and downloads) timed")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    print(f"machine: {cores} core(s); PostgreSQL on loopback")
    with tempfile.TemporaryDirectory(prefix="printjob-cluster-bench-") as tmp:
        root = Path(tmp)
        if args.blobs:
            stores = args.blobs.split(",")
            table = {
                store: blob_store_figures(store, args.jobs, args.uploads, root) for store in stores
            }
            print("| figure | " + " | ".join(f"`{store}`" for store in stores) + " |")
            print("|---|" + "---|" * len(stores))
            for figure in table[stores[0]]:
                cells = " | ".join(table[store][figure] for store in stores)
                print(f"| {figure} | {cells} |", flush=True)
            return
        for workers in (int(w) for w in args.workers.split(",")):
            rate = jobs_per_minute(workers, args.jobs, root)
            print(
                f"jobs/min with {workers} worker process(es): {rate:7.1f} "
                f"({rate / min(workers, cores):6.1f} per busy core)",
                flush=True,
            )
        for apis in (1, 2):
            rate = reads_per_second(apis, args.seconds, root)
            print(f"API reads/s with {apis} API process(es): {rate:7.0f}", flush=True)


if __name__ == "__main__":
    main()
