"""The reliability suite: the REAL server (`printjob serve`) over loopback, as subprocesses.

Servers of this suite (each on its own data directory and port, started once per session):

* `hostile_server`: 1 worker; per-minute limits (submissions, reads, wrong keys) set very
  high so that a catalogue of bad requests is judged on its own merits, not throttled;
* `secure_server`: 1 worker with the contract's default limits (wrong keys: 30 a minute)
  and 127.0.0.1 as a trusted proxy, so a test can spend the wrong-key budget of its own
  `X-Forwarded-For` network without touching anyone else's.

The concurrency and crash tests start their own servers (two processes on one data dir,
SIGKILL and restart).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.contract.support import Client, ServerProcess

HIGH = "1000000"


def start_server(
    factory: pytest.TempPathFactory, name: str, workers: int, **settings: str
) -> Iterator[ServerProcess]:
    data_dir: Path = factory.mktemp(name) / "data"
    server = ServerProcess(data_dir, workers=workers, **settings).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from start_server(
        tmp_path_factory,
        "hostile",
        1,
        PRINTJOB_SUBMISSIONS_PER_MINUTE=HIGH,
        PRINTJOB_READS_PER_MINUTE=HIGH,
        PRINTJOB_WRONG_KEYS_PER_MINUTE=HIGH,
    )


@pytest.fixture(scope="session")
def secure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # Idle keep-alive connections kept a minute, not 5 s: a test holds one open while an
    # operator command (a whole Python process, slow on a loaded machine) revokes its key.
    yield from start_server(
        tmp_path_factory,
        "secure",
        1,
        PRINTJOB_TRUSTED_PROXIES="127.0.0.1",
        PRINTJOB_KEEPALIVE_TIMEOUT_SECONDS="60",
    )


#: Operator services by the server's data directory. Not by `id(server)`: a server object
#: that was stopped and collected may hand its id to a new one, whose keys would then be
#: made in the old server's database.
_operators: dict[Path, Any] = {}


def new_account(server: ServerProcess, credits: int = 10, active_jobs_max: int = 10) -> Client:
    """A fresh account with one key; the operator services are bootstrapped once per server."""
    operator = _operators.get(server.data_dir)
    if operator is None:
        operator = _operators[server.data_dir] = server.operator()
    account = operator.create_account(credits, active_jobs_max)
    _key, secret = operator.create_key(account.id)
    return Client(server, account.id, secret)


@pytest.fixture(scope="module")
def hostile_client(hostile_server: ServerProcess) -> Iterator[Client]:
    """One account for the refusals of the catalogue (they create no job)."""
    with new_account(hostile_server, credits=1000, active_jobs_max=10) as client:
        yield client
