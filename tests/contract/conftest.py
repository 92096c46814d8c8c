"""The contract suite runs the REAL server (`printjob serve`) as subprocesses and talks HTTP.

Servers (each on its own data directory and port, started once per session):

* `server`: 1 worker; 127.0.0.1 is a trusted proxy, so tests that exhaust the per-network
  wrong-key limit use their own `X-Forwarded-For` network and leave others alone;
* `idle_server`: `--workers 0`, so jobs stay queued (active-job limit, queued answers);
* `busy_server`: `--workers 0` and a queue depth of 1 (503 server_busy);
* `expiring_server`: results kept 5 s (410 result_expired);
* `fuzz_server`: high per-minute limits, for schemathesis;
* `database_blobs_server`: uploads and results in PostgreSQL (`PRINTJOB_BLOBS=database`,
  on PostgreSQL whatever `PRINTJOB_TEST_STORAGE` says), results kept 8 s.

The kill-and-restart test starts its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.support import Client, ServerProcess


def _server(
    factory: pytest.TempPathFactory,
    name: str,
    workers: int,
    *,
    blobs: str = "files",
    **settings: str,
) -> Iterator[ServerProcess]:
    """A server on its own data directory; `blobs="database"` keeps uploads and results
    in its PostgreSQL database instead of files."""
    data_dir: Path = factory.mktemp(name) / "data"
    settings["PRINTJOB_BLOBS"] = blobs
    server = ServerProcess(data_dir, workers=workers, **settings).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _server(tmp_path_factory, "main", 1, PRINTJOB_TRUSTED_PROXIES="127.0.0.1")


@pytest.fixture(scope="session")
def idle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _server(tmp_path_factory, "idle", 0)


@pytest.fixture(scope="session")
def busy_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _server(tmp_path_factory, "busy", 0, PRINTJOB_MAX_QUEUE_DEPTH="1")


@pytest.fixture(scope="session")
def expiring_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _server(tmp_path_factory, "expiring", 1, PRINTJOB_RESULT_TTL_SECONDS="5")


@pytest.fixture(scope="session")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _server(
        tmp_path_factory,
        "fuzz",
        0,
        PRINTJOB_READS_PER_MINUTE="1000000",
        PRINTJOB_SUBMISSIONS_PER_MINUTE="1000000",
    )


@pytest.fixture(scope="session")
def database_blobs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _server(
        tmp_path_factory, "dbblobs", 1, blobs="database", PRINTJOB_RESULT_TTL_SECONDS="8"
    )


@pytest.fixture
def client(server: ServerProcess) -> Iterator[Client]:
    """A fresh account with 10 credits on the main server."""
    with server.account(credits=10) as account:
        yield account


@pytest.fixture
def idle_client(idle_server: ServerProcess) -> Iterator[Client]:
    with idle_server.account(credits=10) as account:
        yield account
