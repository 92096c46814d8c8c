"""The website's converter receives an upload as the API's submit does, against the REAL
server: spooled to a nameless file as it arrives and parsed from a memory map, so a
25 MB upload never sits whole in the API process's memory.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.contract.support import ServerProcess
from tests.reliability.conftest import HIGH, start_server

PASSWORD = "a long enough passphrase"
CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]*)"')
UPLOAD_BYTES = 25 * 1024 * 1024


@pytest.fixture(scope="module")
def website_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from start_server(tmp_path_factory, "webspool", 1, PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH)


def form_token(browser: httpx.Client, path: str) -> str:
    page = browser.get(path)
    assert page.status_code == 200, page.text
    found = CSRF_INPUT.search(page.text)
    assert found is not None, page.text
    return found.group(1)


def signed_in(server: ServerProcess) -> httpx.Client:
    browser = httpx.Client(base_url=server.base_url, timeout=60)
    token = form_token(browser, "/signup")
    data = {"csrf_token": token, "email": "spool@example.com", "password": PASSWORD}
    answer = browser.post("/signup", data=data)
    assert answer.status_code == 303, answer.text
    return browser


def anonymous_memory(pid: int) -> int:
    """The process's resident anonymous memory (RssAnon), in bytes: its heap, not the
    pages of files it maps (the spool file's pages are the kernel's cache to drop)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no RssAnon for process {pid}")


class PeakMemory:
    """The highest `anonymous_memory` of a process while the block runs, sampled often."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._done = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, anonymous_memory(self.pid))
            time.sleep(0.002)

    def __enter__(self) -> PeakMemory:
        self._sampler.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._sampler.join()


def test_a_25_mb_website_upload_is_not_held_in_memory(website_server: ServerProcess) -> None:
    """Decision: the picture is 25 MB of noise, so the core refuses it (422) once it is
    read; what is measured is receiving and parsing it. The image part itself is the one
    copy the process holds (the core takes the picture as bytes, as the API's submit
    does); reading the body whole, then parsing it, held it three or four times over."""
    assert website_server.process is not None
    pid = website_server.process.pid
    browser = signed_in(website_server)
    try:
        token = form_token(browser, "/")
        picture = os.urandom(UPLOAD_BYTES)
        before = anonymous_memory(pid)
        with PeakMemory(pid) as measured:
            answer = browser.post(
                "/convert",
                data={"csrf_token": token, "format": "svg"},
                files={"image": ("noise.png", picture, "image/png")},
            )
        assert answer.status_code == 422, answer.text
        assert "noise.png" in answer.text
        grown = measured.peak - before
        assert grown < 1.5 * UPLOAD_BYTES, f"the API process grew by {grown / 2**20:.0f} MiB"
    finally:
        browser.close()
