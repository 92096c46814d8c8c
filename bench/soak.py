"""Soak: a mixed workload against the real server for N seconds, watching memory and files.

    .venv/bin/python bench/soak.py [--seconds 180] [--accounts 6] [--sample 3] [--workers 2]

`printjob serve` (default limits, `--workers` worker processes) runs on loopback on a fresh
data directory. One thread per account loops: submit a picture (PNG or JPEG, from the public
corpus when it is there, else a generated one), poll at the Retry-After the server gives,
cancel about one job in five (right after submitting it), download every result and check
its size; a 429 is waited out
as told (the per-account limits stay the contract's: 10 submissions and 120 reads a minute).
Every `--sample` seconds the RSS (VmRSS) and open file descriptors of the server and of each
worker process are read from /proc.

Reported: answers by status (5xx must be 0), jobs by final status, downloads, and for the
server and the workers the first sample after warm-up (the first quarter of the run, at least
30 s), the last, the peak and the growth from the one to the other.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.contract.support import ServerProcess, busy_png, png  # noqa: E402


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def sample(server_pid: int) -> dict[str, object]:
    out: dict[str, object] = {"t": time.monotonic()}
    try:
        out["server_rss_kib"] = rss_kib(server_pid)
        out["server_fds"] = fds(server_pid)
        workers = []
        for pid in children(server_pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"spawn_main" not in handle.read():
                        continue  # the resource tracker and the like: not a worker
                workers.append((pid, rss_kib(pid), fds(pid)))
            except OSError:
                continue
        out["workers"] = workers
    except OSError:
        pass
    return out


def corpus_pictures() -> list[bytes]:
    corpus = Path(os.environ.get("PRINTJOB_CORPUS", ROOT.parent / "shared" / "corpus"))
    if corpus.is_dir():
        found = [
            p.read_bytes()
            for p in sorted(corpus.iterdir())
            if p.suffix.lower() in (".png", ".jpg", ".jpeg")
        ]
        if found:
            return found
    return [busy_png(800, 150) for _ in range(4)]


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: collections.Counter[int] = collections.Counter()
        self.finals: collections.Counter[str] = collections.Counter()
        self.downloads = 0
        self.short_downloads = 0
        self.errors: list[str] = []

    def answer(self, response: httpx.Response) -> httpx.Response:
        with self.lock:
            self.statuses[response.status_code] += 1
            if response.status_code >= 500:
                self.errors.append(
                    f"{response.request.method} {response.request.url.path}: "
                    f"{response.status_code} {response.text[:200]}"
                )
        return response


def account_loop(
    server: ServerProcess, key: str, pictures: list[bytes], tally: Tally, until: float, seed: int
) -> None:
    rng = random.Random(seed)
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60
    ) as http:

        def call(method: str, path: str, **kwargs: object) -> httpx.Response | None:
            while time.monotonic() < until:
                try:
                    response = tally.answer(http.request(method, path, **kwargs))  # type: ignore[arg-type]
                except httpx.HTTPError as error:
                    with tally.lock:
                        tally.errors.append(f"{method} {path}: {error!r}")
                    return None
                if response.status_code == 429:
                    time.sleep(
                        min(
                            int(response.headers.get("retry-after", "5")),
                            until - time.monotonic() + 0.1,
                        )
                    )
                    continue
                return response
            return None

        while time.monotonic() < until:
            picture = rng.choice(pictures) if rng.random() < 0.7 else png(200, 150)
            fmt = rng.choice(["svg", "svg", "pdf", "eps", "png"])
            data = {"format": fmt}
            if fmt == "png":
                data["size"] = "900x600"
            submitted = call("POST", "/v1/jobs", files={"image": ("p", picture)}, data=data)
            if submitted is None or submitted.status_code != 202:
                time.sleep(1)
                continue
            job = submitted.json()
            cancel = rng.random() < 0.2
            wait = int(submitted.headers.get("retry-after", "5"))
            while job["status"] in ("queued", "running") and time.monotonic() < until:
                if cancel:  # at once, while it is queued or running
                    answer = call("POST", f"/v1/jobs/{job['id']}/cancel")
                    cancel = False
                else:
                    time.sleep(min(wait, max(0.0, until - time.monotonic())))
                    answer = call("GET", f"/v1/jobs/{job['id']}")
                if answer is None:
                    break
                if answer.status_code == 409:  # finished before the cancel: read it
                    continue
                job = answer.json()
                wait = int(answer.headers.get("retry-after", "3"))
            if job["status"] in ("succeeded", "failed", "canceled"):
                with tally.lock:
                    tally.finals[job["status"]] += 1
            if job["status"] == "succeeded":
                result = call("GET", f"/v1/jobs/{job['id']}/result")
                if result is not None and result.status_code == 200:
                    with tally.lock:
                        tally.downloads += 1
                        if len(result.content) != job["result"]["bytes"]:
                            tally.short_downloads += 1


def summarise(samples: list[dict], warm_up: float, start: float) -> dict[str, object]:
    steady = [s for s in samples if s["t"] - start >= warm_up and "server_rss_kib" in s]
    if len(steady) < 2:
        steady = samples[-2:]
    first, last = steady[0], steady[-1]

    def worker_total(s: dict, index: int) -> int:
        return sum(w[index] for w in s.get("workers", []))

    return {
        "samples": len(samples),
        "server_rss_mib": {
            "after_warm_up": round(first["server_rss_kib"] / 1024, 1),
            "last": round(last["server_rss_kib"] / 1024, 1),
            "peak": round(max(s["server_rss_kib"] for s in steady) / 1024, 1),
            "growth": round((last["server_rss_kib"] - first["server_rss_kib"]) / 1024, 1),
        },
        "server_fds": {
            "after_warm_up": first["server_fds"],
            "last": last["server_fds"],
            "peak": max(s["server_fds"] for s in steady),
        },
        "workers_rss_mib_total": {
            "after_warm_up": round(worker_total(first, 1) / 1024, 1),
            "last": round(worker_total(last, 1) / 1024, 1),
            "peak": round(max(worker_total(s, 1) for s in steady) / 1024, 1),
        },
        "workers_fds_total": {
            "after_warm_up": worker_total(first, 2),
            "last": worker_total(last, 2),
            "peak": max(worker_total(s, 2) for s in steady),
        },
        "worker_pids_seen": sorted({w[0] for s in samples for w in s.get("workers", [])}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--accounts", type=int, default=6)
    parser.add_argument("--sample", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    pictures = corpus_pictures()
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "data", workers=args.workers).start()
        assert server.process is not None
        try:
            keys = [
                server.account(credits=100000, active_jobs_max=3).key for _ in range(args.accounts)
            ]
            start = time.monotonic()
            until = start + args.seconds
            threads = [
                threading.Thread(
                    target=account_loop, args=(server, key, pictures, tally, until, n), daemon=True
                )
                for n, key in enumerate(keys)
            ]
            for thread in threads:
                thread.start()
            samples = []
            while time.monotonic() < until:
                samples.append(sample(server.process.pid))
                time.sleep(args.sample)
            samples.append(sample(server.process.pid))
            for thread in threads:
                thread.join(timeout=90)
            alive = server.process.poll() is None
        finally:
            server.stop()
    warm_up = max(30.0, args.seconds / 4)
    report = {
        "command": " ".join(sys.argv),
        "seconds": args.seconds,
        "accounts": args.accounts,
        "workers": args.workers,
        "answers_by_status": dict(sorted(tally.statuses.items())),
        "5xx": sum(n for status, n in tally.statuses.items() if status >= 500),
        "jobs_final": dict(tally.finals),
        "downloads": tally.downloads,
        "short_downloads": tally.short_downloads,
        "client_errors": tally.errors[:10],
        "server_alive_at_end": alive,
        "warm_up_seconds": warm_up,
        **summarise(samples, warm_up, start),
    }
    print(json.dumps(report, indent=2))
    if report["5xx"] or tally.short_downloads or not alive:
        sys.exit(1)


if __name__ == "__main__":
    main()
