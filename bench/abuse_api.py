"""The API process under slow and hostile clients: its memory, and other clients' reads.

    .venv/bin/python bench/abuse_api.py [--seconds 45] [--scale 1.0] [--compare-with SRC]

`printjob serve` (1 worker, the default connection limits) runs on loopback on a fresh data
directory, with one succeeded job whose stored result is swapped for 42 MB of noise (the
size of the largest EPS the engine wrote in issue 15). Then, from a separate process, for
`--seconds`:

* 30 slow uploads: each sends 29 MB of a declared 30 MB body at once, then a byte every
  5 s; when the server closes one, it starts again (one account, limits raised so that the
  server has to read every one of them);
* 40 downloads of the 42 MB result that never read a byte, reopened when closed;
* 1500 connections trickling a request head, a byte every 2 s, reopened when closed;
* 4 clients submitting, one after another, a valid 64 x 64 JPEG padded to 30 MB with
  empty APP1 markers.

Meanwhile another client reads its job (`GET /v1/jobs/{id}`, kept-alive) in a loop. Printed:
the API process's RSS before the load and at its peak (sampled every 0.25 s), the reads'
p50, p95 and p99 latency before and under the load, and what the attackers saw (how often
the server cut them off, the padded uploads' answers, their time and the MB/s of them the
server took in). Before the load, one padded upload alone gives the time from its last
64 KiB to its answer (`answer_after_last_byte`).

`--scale` multiplies every attacker count (0.25: 8 slow uploads, 10 downloads, 375
trickles, 1 padded JPEG). `--compare-with /path/to/other/src` first runs the same load
against the server of another checkout (say, the code before these bounds), then this
one, and prints both; mind that the code before the bounds takes gigabytes at scale 1.

`run(args)` is the entry `bench/abuse.py --only api` calls with its parsed arguments
(`seconds`, `scale` and `compare_with` read when present, else the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import multiprocessing
import os
import resource
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.contract.support import ServerProcess, png  # noqa: E402

RESULT_BYTES = 42 * 1024 * 1024
SLOW_UPLOADS = 30
UNREAD_DOWNLOADS = 40
TRICKLES = 1500
PADDED_JPEGS = 4
HIGH = "1000000"
BOUNDARY = "abuse-b0undary"


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def memory_detail(pid: int) -> str:
    """The anonymous and file-backed parts of a process's RSS, in MiB."""
    parts = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(("RssAnon:", "RssFile:")):
                parts[line.split(":")[0]] = int(line.split()[1]) // 1024
    return ", ".join(f"{name} {value}" for name, value in parts.items())


def padded_jpeg(size: int = 30 * 1024 * 1024 - 4096) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(buffer, "JPEG")
    jpeg = buffer.getvalue()
    segment = b"\xff\xe1\x00\x02"
    return jpeg[:2] + segment * ((size - len(jpeg)) // 4) + jpeg[2:]


def multipart(image: bytes, filename: str = "picture.jpg") -> bytes:
    return (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="image"; '
            f'filename="{filename}"\r\nContent-Type: image/jpeg\r\n\r\n'
        ).encode()
        + image
        + (
            f'\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name="format"\r\n\r\nsvg'
            f"\r\n--{BOUNDARY}--\r\n"
        ).encode()
    )


# -- the attackers: one asyncio loop in a process of their own --


class Tally:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.padded_ms: list[float] = []
        self.padded_statuses: dict[int, int] = {}

    def add(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


async def _open(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def _closed(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the server closed the connection within `seconds` (what it sent drained)."""
    try:
        while True:
            data = await asyncio.wait_for(reader.read(65536), seconds)
            if not data:
                return True
    except TimeoutError:
        return False
    except OSError:
        return True


async def slow_upload(port: int, key: str, end: float, tally: Tally) -> None:
    body = multipart(b"\xff\xd8" + b"\0" * (29 * 1024 * 1024))
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {len(body) + 1024 * 1024}\r\n\r\n"
    ).encode()
    await _drip(port, head + body, b"x", 5.0, 0.1, end, tally, "slow uploads cut off")


async def _drip(
    port: int,
    start: bytes,
    drop: bytes,
    patience: float,
    backoff: float,
    end: float,
    tally: Tally,
    label: str,
) -> None:
    """Until `end`: send `start`, then one `drop` each time the server kept the connection
    open for `patience` seconds; count every connection the server closed under `label`
    and open the next."""
    while time.monotonic() < end:
        try:
            reader, writer = await _open(port)
            await _send(writer, start)
            while time.monotonic() < end:
                if await _closed(reader, patience):
                    tally.add(label)
                    break
                writer.write(drop)
                await writer.drain()
            writer.close()
        except OSError:
            tally.add(label)
            await asyncio.sleep(backoff)


async def unread_download(port: int, key: str, job_id: str, end: float, tally: Tally) -> None:
    """Ask for the result and never read a byte. (The server's reset of a connection with
    a full receive window does not always reach this end, so the server's log, not this
    side, counts the cut-offs.)"""
    request = (
        f"GET /v1/jobs/{job_id}/result HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {key}\r\n\r\n"
    ).encode()
    try:
        _reader, writer = await _open(port)
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        writer.transport.pause_reading()  # type: ignore[attr-defined]  # never read a byte
        writer.write(request)
        await writer.drain()
        await asyncio.sleep(max(0.0, end - time.monotonic()))
        writer.close()
    except OSError:
        tally.add("unread downloads failed to start")


async def _send(writer: asyncio.StreamWriter, data: bytes, piece: int = 1 << 20) -> None:
    """`data` in 1 MiB pieces, each drained: the attacker's own memory stays small."""
    view = memoryview(data)
    for start in range(0, len(data), piece):
        writer.write(view[start : start + piece])
        await writer.drain()


async def trickle(port: int, end: float, tally: Tally) -> None:
    head = b"GET /v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    await _drip(port, head, b"a", 2.0, 0.2, end, tally, "trickling heads cut off")


async def padded_upload(port: int, key: str, data: bytes, end: float, tally: Tally) -> None:
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    while time.monotonic() < end:
        try:
            reader, writer = await _open(port)
            await _send(writer, head + data)
            sent = time.perf_counter()
            line = await asyncio.wait_for(reader.readline(), 120)
            tally.padded_ms.append((time.perf_counter() - sent) * 1000)
            status = int(line.split()[1]) if line else 0
            tally.padded_statuses[status] = tally.padded_statuses.get(status, 0) + 1
            writer.close()
        except (OSError, TimeoutError, ValueError, IndexError):
            tally.add("padded uploads failed")
            await asyncio.sleep(0.2)


#: The kinds of attacker (`--only`).
KINDS = ("slow", "unread", "trickle", "padded")


def counts(scale: float, only: tuple[str, ...] = KINDS) -> dict[str, int]:
    """How many attackers of each kind run at `scale`."""
    full = {"slow": SLOW_UPLOADS, "unread": UNREAD_DOWNLOADS, "trickle": TRICKLES}
    full["padded"] = PADDED_JPEGS
    return {kind: max(1, int(n * scale)) if kind in only else 0 for kind, n in full.items()}


async def _attack(
    port: int, key: str, job_id: str, seconds: float, number: dict[str, int], tally: Tally
) -> None:
    end = time.monotonic() + seconds
    jpeg = multipart(padded_jpeg())
    tasks = [asyncio.create_task(trickle(port, end, tally)) for _ in range(number["trickle"])]
    tasks += [
        asyncio.create_task(unread_download(port, key, job_id, end, tally))
        for _ in range(number["unread"])
    ]
    tasks += [
        asyncio.create_task(slow_upload(port, key, end, tally)) for _ in range(number["slow"])
    ]
    tasks += [
        asyncio.create_task(padded_upload(port, key, jpeg, end, tally))
        for _ in range(number["padded"])
    ]
    await asyncio.gather(*tasks, return_exceptions=True)


def attack_process(
    port: int, key: str, job_id: str, seconds: float, number: dict[str, int], out: Any
) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tally = Tally()
    asyncio.run(_attack(port, key, job_id, seconds, number, tally))
    out.send((tally.counts, tally.padded_ms, tally.padded_statuses))


# -- the measuring side --


def read_latencies(client: httpx.Client, path: str, seconds: float) -> list[float]:
    samples: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter()
        response = client.get(path)
        samples.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"read answered {response.status_code}: {response.text[:200]}")
        time.sleep(0.01)
    return samples


def _summary(samples: list[float]) -> tuple[float, float, float]:
    """The median, p95 and p99 of `samples`."""
    ordered = sorted(samples)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))]

    return statistics.median(ordered), at(0.95), at(0.99)


def answer_after_last_byte(port: int, key: str, times: int = 5) -> list[float]:
    """Milliseconds from the last piece of a padded 30 MB JPEG upload to its answer's
    status line, the upload alone: all but its last 64 KiB is sent, the server is given
    3 s to read what it has, then the last piece goes. What is measured is what the server
    does once it has the whole body (and reads 64 KiB), not how fast it takes a body in."""
    data = multipart(padded_jpeg())
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    found: list[float] = []
    for _ in range(times):
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(head + data[: -64 * 1024])
            time.sleep(3.0)
            sock.sendall(data[-64 * 1024 :])
            sent = time.perf_counter()
            line = sock.makefile("rb").readline()
            found.append((time.perf_counter() - sent) * 1000)
            if b" 422 " not in line:
                raise RuntimeError(f"the padded upload was answered {line!r}")
    return found


def one_run(src: Path, seconds: float, number: dict[str, int]) -> dict[str, Any]:
    """The whole load once against the server of checkout `src`."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the server inherits it
    with tempfile.TemporaryDirectory(prefix="abuse-api-") as tmp:
        data_dir = Path(tmp) / "data"
        server = ServerProcess(
            data_dir,
            workers=1,
            PYTHONPATH=str(src),
            PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
            PRINTJOB_READS_PER_MINUTE=HIGH,
        ).start()
        try:
            assert server.process is not None
            pid = server.process.pid
            attacker = server.account(credits=1000, active_jobs_max=10)
            reader = server.account(credits=10, active_jobs_max=3)
            job = attacker.submit(png()).json()
            if attacker.wait(job["id"])["status"] != "succeeded":
                raise RuntimeError("the setup job did not succeed")
            (stored,) = (data_dir / "files" / "results").glob(f"{job['id']}*")
            stored.write_bytes(os.urandom(RESULT_BYTES))
            own = reader.submit(png()).json()["id"]
            path = f"/v1/jobs/{own}"
            read_latencies(reader, path, 2.0)  # warm up
            after_last_byte = answer_after_last_byte(server.port, attacker.key)
            rss_before = rss_kib(pid)
            peak_detail = [memory_detail(pid)]
            quiet = read_latencies(reader, path, 5.0)

            receive, send = multiprocessing.get_context("spawn").Pipe(duplex=False)
            process = multiprocessing.get_context("spawn").Process(
                target=attack_process,
                args=(server.port, attacker.key, job["id"], seconds, number, send),
            )
            peak = [rss_before]
            stop = threading.Event()

            def sample() -> None:
                while not stop.wait(0.25):
                    now = rss_kib(pid)
                    if now > peak[0]:
                        peak[0] = now
                        peak_detail[0] = memory_detail(pid)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            process.start()
            time.sleep(min(10.0, seconds / 4))  # the load builds up
            loaded = read_latencies(reader, path, max(5.0, seconds - min(10.0, seconds / 4) - 2))
            seen, padded_ms, statuses = receive.recv()
            process.join(30)
            stop.set()
            sampler.join()
            rss_after = rss_kib(pid)
            reader.close()
            attacker.close()
        finally:
            server.stop()
        cut_offs = server_cut_offs(server.log_path.read_text(errors="replace"))
    padded_bytes = sum(statuses.values()) * len(multipart(padded_jpeg()))
    return {
        "src": str(src),
        "rss_before_mib": rss_before / 1024,
        "rss_peak_mib": peak[0] / 1024,
        "rss_after_mib": rss_after / 1024,
        "rss_peak_detail": peak_detail[0],
        "reads_quiet_ms": (*_summary(quiet), len(quiet)),
        "reads_loaded_ms": (*_summary(loaded), len(loaded)),
        "after_last_byte_ms": (statistics.median(after_last_byte), max(after_last_byte)),
        "padded_mb_per_s": padded_bytes / 1e6 / seconds,
        "attackers": seen,
        "server_cut_offs": cut_offs,
        "padded_statuses": statuses,
        "padded_ms": (statistics.median(padded_ms), max(padded_ms)) if padded_ms else None,
    }


def report(result: dict[str, Any]) -> None:
    quiet, loaded = result["reads_quiet_ms"], result["reads_loaded_ms"]
    print(f"server code: {result['src']}")
    print(
        f"  API process RSS: before {result['rss_before_mib']:.0f} MiB, peak "
        f"{result['rss_peak_mib']:.0f} MiB ({result['rss_peak_detail']}), after "
        f"{result['rss_after_mib']:.0f} MiB"
    )
    for what, (p50, p95, p99, count) in (("quiet:      ", quiet), ("under load:", loaded)):
        print(f"  reads, {what} p50 {p50:.1f} ms, p95 {p95:.1f} ms, p99 {p99:.1f} ms ({count})")
    alone = result["after_last_byte_ms"]
    print(
        f"  a padded JPEG alone: answered {alone[0]:.0f} ms median, {alone[1]:.0f} ms at most "
        "after its last 64 KiB was sent"
    )
    padded = result["padded_ms"]
    if padded is not None:
        print(
            f"  padded JPEGs under load: answers {result['padded_statuses']} "
            f"({result['padded_mb_per_s']:.0f} MB/s taken in), answered {padded[0]:.0f} ms "
            f"median, {padded[1]:.0f} ms at most after the upload was sent"
        )
    for what, count in sorted(result["attackers"].items()):
        print(f"  attackers saw: {what}: {count}")
    for why, count in sorted(result["server_cut_offs"].items()):
        print(f"  server closed: {why}: {count}")


def server_cut_offs(log: str) -> dict[str, int]:
    """The server's `connection ... closed: <why>` lines, counted by their reason."""
    found: dict[str, int] = {}
    for line in log.splitlines():
        if "closed: " in line and "connection from" in line:
            why = line.split("closed: ", 1)[1].split(" (")[0]
            why = why.split(" in ")[0].split(" for ")[0]
            found[why] = found.get(why, 0) + 1
    return found


def run(args: argparse.Namespace) -> None:
    """Run the load (and, with `compare_with`, first against that checkout too) and print."""
    seconds = float(getattr(args, "seconds", 45.0) or 45.0)
    scale = float(getattr(args, "scale", 1.0) or 1.0)
    compare = getattr(args, "compare_with", None)
    only = tuple(getattr(args, "only_kinds", None) or KINDS)
    number = counts(scale, only)
    print(
        f"slow-client load for {seconds:.0f} s at scale {scale:g}: "
        f"{number['slow']} slow uploads, {number['unread']} unread downloads of "
        f"{RESULT_BYTES // 2**20} MB, {number['trickle']} trickling heads, "
        f"{number['padded']} padded-JPEG submitters",
        flush=True,
    )
    for src in ([Path(compare)] if compare else []) + [ROOT / "src"]:
        report(one_run(src, seconds, number))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=45.0)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--compare-with", dest="compare_with", default=None)
    parser.add_argument(
        "--only",
        dest="only_kinds",
        type=lambda text: tuple(text.split(",")),
        default=None,
        help=f"only these attackers, comma-separated: {','.join(KINDS)}",
    )
    run(parser.parse_args(argv))


if __name__ == "__main__":
    main()
