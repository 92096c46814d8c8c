"""The SQLite adapter's lock handling (in-process): writers of one process queue on a Python
lock, and the event loop's `nonblocking()` calls never wait (they raise `WouldBlock`, and the
API runs them again in a thread)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from printjob_adapters.sqlite import WouldBlock, nonblocking, open_storage
from printjob_core.errors import ServerBusy

NOW = datetime(2026, 11, 22, 12, 0, 30, tzinfo=UTC)


def test_nonblocking_write_raises_would_block_instead_of_waiting(tmp_path: Path) -> None:
    storage = open_storage(tmp_path / "db.sqlite3", busy_timeout=0.5)
    limiter = storage.rate_limiter()
    assert limiter.hit("b", 10, NOW).allowed
    held = threading.Event()
    release = threading.Event()

    def writer() -> None:
        with storage.unit_of_work():
            held.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert held.wait(10)
        with nonblocking(), pytest.raises(WouldBlock):
            limiter.hit("b", 10, NOW)
        with pytest.raises(ServerBusy):  # the ordinary mode waits its busy timeout, then 503
            limiter.hit("b", 10, NOW)
    finally:
        release.set()
        thread.join(10)
    with nonblocking():
        assert limiter.hit("b", 10, NOW).allowed  # free again: no waiting needed
    assert limiter.count("b", NOW) == 2  # the refused tries counted nothing
    storage.close()


def test_nonblocking_reads_work_while_a_writer_holds_the_lock(tmp_path: Path) -> None:
    storage = open_storage(tmp_path / "db.sqlite3")
    with storage.unit_of_work() as uow:
        with nonblocking(), storage.reader() as reader:
            assert reader.jobs.count_queued() == 0  # WAL: readers never wait for writers
        uow.commit()
    storage.close()
