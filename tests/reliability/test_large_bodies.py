"""Large request bodies cost the API process little, against the REAL server (issue 15,
item 3): a 30 MB upload is answered as soon as its last byte is read (its delimiters were
found while it arrived, its image checked in place), the process's own memory hardly
grows while it arrives, and several at once are taken in turns, at a bounded rate, while
other clients' small requests are answered.

Time bounds here are generous (a loaded machine); the figures are `bench/abuse_api.py`'s.
"""

from __future__ import annotations

import io
import json
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from printjob_http.spooling import LARGE_BODY_BYTES, LARGE_BODY_BYTES_PER_SECOND
from tests.contract.support import Client, ServerProcess, fresh_window
from tests.reliability import images
from tests.reliability.conftest import HIGH, new_account, start_server
from tests.reliability.http import body, content_type, file_part, text_part

FMT = text_part(b"format", b"svg")
#: What the answer to a refused 30 MB upload may take after its last byte is read.
ANSWER_AFTER_LAST_BYTE_SECONDS = 1.0
#: How much the API process's own (anonymous) memory may grow while a 30 MB upload
#: arrives and is checked: a copy of the upload alone would be 30 MiB.
GROWTH_BOUND = 20 * 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Limits high enough that every upload here is received and checked."""
    yield from start_server(
        tmp_path_factory,
        "large-bodies",
        1,
        PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        PRINTJOB_READS_PER_MINUTE=HIGH,
    )


def request_bytes(client: Client, form: bytes) -> bytes:
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {client.key}\r\n"
        f"Content-Type: {content_type()}\r\nContent-Length: {len(form)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    return head + form


def status_of(sock: socket.socket) -> int:
    line = b""
    while not line.endswith(b"\r\n"):
        piece = sock.recv(1)
        if not piece:
            raise AssertionError(f"closed without an answer after {line!r}")
        line += piece
    return int(line.split()[1])


def rss_anon(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no RssAnon for process {pid}")


class PeakSampler:
    """The most a process's anonymous memory grew over its level at the start, sampled
    every few milliseconds (the spool file's mapped pages are the kernel's cache, not
    the process's, and are not counted)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.start = rss_anon(pid)
        self.peak = self.start
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss_anon(self.pid))

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def growth(self) -> int:
        return self.peak - self.start


def pid_of(server: ServerProcess) -> int:
    assert server.process is not None
    return server.process.pid


def big_png(size: int) -> bytes:
    """A valid small PNG padded to `size` bytes with a private chunk after its pixel data
    (before it, the header budget would refuse it): the server accepts it."""
    small = io.BytesIO()
    images.picture(96, 64).save(small, "PNG")
    png = small.getvalue()
    filler = b"\0" * (size - len(png) - 12)
    kind = b"prVt"  # ancillary, private: readers skip it
    padding = struct.pack(">I", len(filler)) + kind + filler
    padding += struct.pack(">I", zlib.crc32(kind + filler))
    return png[:-12] + padding + png[-12:]  # before IEND


def test_a_padded_30_mb_jpeg_is_answered_at_once_with_little_memory(
    server: ServerProcess,
) -> None:
    fresh_window()
    with new_account(server) as client:
        data = request_bytes(client, body(file_part(images.padded_jpeg(), b"image"), FMT))
        assert len(data) > 29 * 1024 * 1024
        client.get("/v1/account")  # the process has warmed up
        with (
            PeakSampler(pid_of(server)) as memory,
            socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock,
        ):
            # A small send buffer: once `sendall` returns, what is left for the server to
            # read is little more than its own receive buffer.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
            sock.sendall(data)
            sent = time.perf_counter()
            status = status_of(sock)
            answered = time.perf_counter() - sent
        assert status == 422
        assert answered < ANSWER_AFTER_LAST_BYTE_SECONDS, f"answered {answered:.3f} s after"
        assert memory.growth < GROWTH_BOUND, f"grew {memory.growth / 2**20:.1f} MiB"


def test_an_accepted_30_mb_upload_is_stored_without_a_copy_in_memory(
    server: ServerProcess,
) -> None:
    fresh_window()
    with new_account(server) as client:
        image = big_png(29 * 1024 * 1024)
        data = request_bytes(client, body(file_part(image), FMT))
        with (
            PeakSampler(pid_of(server)) as memory,
            socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock,
        ):
            sock.sendall(data)
            status = status_of(sock)
            rest = b""
            while piece := sock.recv(65536):  # the answer is sent with Connection: close
                rest += piece
        job_id = json.loads(rest.split(b"\r\n\r\n", 1)[1])["id"]
        assert status == 202
        assert memory.growth < GROWTH_BOUND, f"grew {memory.growth / 2**20:.1f} MiB"
        # Stored whole and intact from the spool file: the engine reads it (PNG chunks
        # carry checksums) and converts it.
        job = client.wait(job_id)
        assert job["status"] == "succeeded", job
        assert (job["result"]["width"], job["result"]["height"]) == (96, 64)


def test_many_large_bodies_are_taken_in_turns_while_small_requests_are_answered(
    server: ServerProcess,
) -> None:
    """Six 30 MB uploads at once: the process takes them in at its budget's rate (so the
    last is answered no sooner than the rate allows), every one is answered, and a small
    read meanwhile is answered quickly all the same."""
    fresh_window()
    uploads = 6
    with new_account(server) as client:
        data = request_bytes(client, body(file_part(images.padded_jpeg(), b"image"), FMT))
        statuses: list[int] = []

        def upload() -> None:
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
                sock.sendall(data)
                statuses.append(status_of(sock))

        senders = [threading.Thread(target=upload) for _ in range(uploads)]
        started = time.perf_counter()
        for sender in senders:
            sender.start()
        reads: list[float] = []
        while any(sender.is_alive() for sender in senders):
            asked = time.perf_counter()
            assert client.get("/v1/account").status_code == 200
            reads.append(time.perf_counter() - asked)
            time.sleep(0.02)
        for sender in senders:
            sender.join()
        took = time.perf_counter() - started
    assert statuses == [422] * uploads
    # The rate bound is a floor, whatever the machine: bytes past each body's first
    # LARGE_BODY_BYTES are taken at LARGE_BODY_BYTES_PER_SECOND at most (less a burst).
    paced = uploads * (len(data) - LARGE_BODY_BYTES) / LARGE_BODY_BYTES_PER_SECOND
    assert took > paced - 0.5, f"{uploads} uploads took {took:.2f} s, the budget {paced:.2f} s"
    assert len(reads) >= 5
    assert max(reads) < 1.0, f"the slowest read took {max(reads):.3f} s"
