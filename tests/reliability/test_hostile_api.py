"""The API process does bounded work per request (issue 15, item 3), against the REAL server.

Uploads whose headers are padded to the 30 MB limit with millions of markers, comments or
chunks are refused by the header check without Pillow stepping through them (it took
seconds and a gigabyte each before); slow and silent clients are cut off by the server's
connection timeouts, set small here so the tests run in seconds.
"""

from __future__ import annotations

import io
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image, PngImagePlugin

from tests.contract.support import Client, ServerProcess, assert_problem, fresh_window
from tests.reliability import images
from tests.reliability.conftest import HIGH, new_account, start_server
from tests.reliability.http import body, content_type, file_part, post_form, text_part

FMT = text_part(b"format", b"svg")
#: The bounded server's limits: small, so that every cut-off comes within a few seconds.
HEAD_SECONDS = 1
BODY_WINDOW_SECONDS = 1
KEEPALIVE_SECONDS = 4
KEEPALIVE_MAX = 3
WRITE_SECONDS = 2
SUBMISSIONS_PER_MINUTE = 3
BOUNDS = {
    "PRINTJOB_HEADER_TIMEOUT_SECONDS": str(HEAD_SECONDS),
    "PRINTJOB_BODY_WINDOW_SECONDS": str(BODY_WINDOW_SECONDS),
    "PRINTJOB_BODY_MIN_BYTES": "65536",
    "PRINTJOB_KEEPALIVE_TIMEOUT_SECONDS": str(KEEPALIVE_SECONDS),
    "PRINTJOB_KEEPALIVE_MAX": str(KEEPALIVE_MAX),
    "PRINTJOB_WRITE_TIMEOUT_SECONDS": str(WRITE_SECONDS),
    "PRINTJOB_SUBMISSIONS_PER_MINUTE": str(SUBMISSIONS_PER_MINUTE),
    "PRINTJOB_READS_PER_MINUTE": HIGH,
}


@pytest.fixture(scope="module")
def bounded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Files beside the database the suite runs on (SQLite, or PostgreSQL when
    `PRINTJOB_TEST_STORAGE=postgresql`)."""
    yield from start_server(tmp_path_factory, "bounded", 1, **BOUNDS)


@pytest.fixture(scope="module")
def database_blobs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Uploads and results as rows of PostgreSQL (`PRINTJOB_BLOBS=database`)."""
    yield from start_server(
        tmp_path_factory, "bounded-dbblobs", 1, PRINTJOB_BLOBS="database", **BOUNDS
    )


def connect(server: ServerProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (what it sent first is drained)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(1 << 20):
                return True
        except TimeoutError:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
    return False


def still_open(sock: socket.socket, seconds: float = 0.3) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(1) != b""
    except TimeoutError:
        return True
    except ConnectionResetError:
        return False


def answer_head(sock: socket.socket) -> bytes:
    """Read one small answer (headers and a Content-Length body) off a kept-alive socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += sock.recv(65536)
    return head


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


OPENAPI = b"GET /v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

PADDED: dict[str, Callable[[], bytes]] = {
    "jpeg-app1-markers": lambda: images.padded_jpeg(0xE1),
    "jpeg-com-markers": lambda: images.padded_jpeg(0xFE),
    "gif-comment-blocks": images.gif_with_comments,
    "png-chunks-before-ihdr": lambda: images.png_with_chunks(before_ihdr=True),
    "png-chunks-before-idat": lambda: images.png_with_chunks(before_ihdr=False),
}


@pytest.mark.parametrize("name", list(PADDED))
def test_a_header_padded_to_30_mb_is_refused_without_reading_it_all(
    hostile_client: Client, name: str
) -> None:
    data = PADDED[name]()
    assert len(data) > 29 * 1024 * 1024
    # The client's read timeout bounds the check: Pillow alone spent 5 to 22 s on these.
    timeout = httpx.Timeout(60.0, read=5.0)
    with httpx.Client(
        base_url=hostile_client.base_url, headers=hostile_client.headers, timeout=timeout
    ) as http:
        answer = post_form(http, file_part(data, content_type=b"image/jpeg"), FMT)
    body = assert_problem(answer, 422, "unsupported_image", "image")
    assert "header" in body["detail"] or "IHDR" in body["detail"], body
    # The server answers the next request at once, the upload forgotten.
    assert hostile_client.get("/v1/account").status_code == 200


def test_headers_that_trickle_are_cut_off(bounded_server: ServerProcess) -> None:
    with connect(bounded_server) as sock:
        sock.sendall(b"GET /v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        cut = False
        for _ in range(25):  # a byte every 0.2 s: 5 s, far past the 1 s allowed
            try:
                sock.sendall(b"X")
            except (BrokenPipeError, ConnectionResetError):
                cut = True
                break
            if not still_open(sock, 0.2):
                cut = True
                break
        assert cut, "a connection trickling its headers stayed open"
    with connect(bounded_server) as silent:  # one that sends nothing at all
        assert closed_within(silent, HEAD_SECONDS + 4)


def test_an_idle_kept_alive_connection_is_closed(bounded_server: ServerProcess) -> None:
    with connect(bounded_server) as sock:
        sock.sendall(OPENAPI)
        assert answer_head(sock).startswith(b"HTTP/1.1 200")
        assert still_open(sock, 1.0)
        assert closed_within(sock, KEEPALIVE_SECONDS + 4)


def test_idle_kept_alive_connections_are_capped_the_longest_idle_closed_first(
    bounded_server: ServerProcess,
) -> None:
    socks = [connect(bounded_server) for _ in range(KEEPALIVE_MAX + 2)]
    try:
        for sock in socks:
            sock.sendall(OPENAPI)
            assert answer_head(sock).startswith(b"HTTP/1.1 200")
        # Two over the cap: the two that have been idle longest are closed at once...
        assert all(closed_within(sock, 1.5) for sock in socks[:2])
        # ...while the others wait for their own keep-alive timeout.
        assert all(still_open(sock) for sock in socks[2:])
    finally:
        for sock in socks:
            sock.close()


def slow_upload(client: Client) -> socket.socket:
    """A submission that announces 1 MB, sends 10 KB and then nothing."""
    form = body(file_part(b"\x89PNG\r\n\x1a\n" + b"\0" * 10_000), FMT)
    head = (
        "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {client.key}\r\nContent-Type: {content_type()}\r\n"
        "Content-Length: 1000000\r\n\r\n"
    ).encode()
    sock = connect(client.server)
    sock.sendall(head + form[:10_000])
    return sock


def test_a_slow_body_is_cut_off_and_counts_against_the_submission_limit(
    bounded_server: ServerProcess,
) -> None:
    fresh_window(margin=30)
    with new_account(bounded_server) as client:
        for _ in range(SUBMISSIONS_PER_MINUTE):
            with slow_upload(client) as sock:
                assert closed_within(sock, 2 * BODY_WINDOW_SECONDS + 4)
        time.sleep(0.5)  # the server counts a cut-off upload right after closing it
        assert_problem(client.submit(), 429, "rate_limited")
        assert client.account_view()["active_jobs"] == 0
    log = bounded_server.log()
    assert "request body too slow" in log
    assert "Traceback" not in log and " 500" not in log


def test_an_unread_download_holds_no_memory_and_is_closed(
    bounded_server: ServerProcess,
) -> None:
    """Decision: the result file is swapped for 40 MB of noise after the job succeeded, so
    the test needs no slow engine run to get a large file; the server sends what it
    stores."""
    with new_account(bounded_server) as client:
        job = client.submit().json()
        assert client.wait(job["id"])["status"] == "succeeded"
        (stored,) = (bounded_server.data_dir / "files" / "results").glob(f"{job['id']}*")
        size = 40 * 1024 * 1024
        stored.write_bytes(os.urandom(size))
        request = (
            f"GET /v1/jobs/{job['id']}/result HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {client.key}\r\n\r\n"
        ).encode()
        assert bounded_server.process is not None
        pid = bounded_server.process.pid
        before = rss_bytes(pid)
        readers = [connect(bounded_server) for _ in range(10)]
        try:
            for sock in readers:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
                sock.sendall(request)
            time.sleep(1.0)  # every download has started and filled what the socket takes
            grown = rss_bytes(pid) - before
            # Whole files in memory would be 400 MB; streamed, each holds about one piece.
            assert grown < 60 * 1024 * 1024, f"the API process grew by {grown / 2**20:.0f} MiB"
            time.sleep(WRITE_SECONDS + 1)
            for sock in readers:
                received = 0
                sock.settimeout(10)
                try:
                    while chunk := sock.recv(1 << 20):
                        received += len(chunk)
                except ConnectionResetError:
                    pass
                assert received < size  # cut off by the write timeout, not sent whole
        finally:
            for sock in readers:
                sock.close()
        # Another client, reading, gets the whole file.
        whole = client.get(f"/v1/jobs/{job['id']}/result")
        assert whole.status_code == 200 and len(whole.content) == size


def big_png() -> bytes:
    """A valid PNG of 3 MB (a large text chunk), so the upload spans several spool buffers."""
    info = PngImagePlugin.PngInfo()
    info.add_text("comment", "x" * (3 * 1024 * 1024))
    image = images.picture(96, 64)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


@pytest.mark.parametrize("blobs", ["files", "database"])
def test_a_real_upload_is_spooled_converted_and_downloaded(
    request: pytest.FixtureRequest, blobs: str
) -> None:
    server: ServerProcess = request.getfixturevalue(
        "bounded_server" if blobs == "files" else "database_blobs_server"
    )
    fresh_window()
    with new_account(server) as client:
        data = big_png()
        assert len(data) > 3 * 1024 * 1024
        answer = client.submit(data)
        assert answer.status_code == 202, answer.text
        job = client.wait(answer.json()["id"])
        assert job["status"] == "succeeded", job
        result = client.get(f"/v1/jobs/{job['id']}/result")
        assert result.status_code == 200
        assert (
            len(result.content) == job["result"]["bytes"] == int(result.headers["content-length"])
        )
        assert b"<svg" in result.content[:400]
        with Image.open(io.BytesIO(data)) as sent:
            assert sent.size == (job["result"]["width"], job["result"]["height"])
