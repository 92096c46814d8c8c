"""`PRINTJOB_DATABASE_URL` picks the storage; `printjob db upgrade` migrates either one; an
idle runner waits on the storage's wake-up signal when there is one (PostgreSQL)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from printjob_adapters.blobs import FilesystemBlobStore
from printjob_adapters.bootstrap import bootstrap
from printjob_adapters.postgres import SCHEMA_VERSION as PG_VERSION
from printjob_adapters.postgres import PostgresJobSignal, PostgresStorage
from printjob_adapters.postgres_blobs import PostgresBlobStore
from printjob_adapters.runner import JobRunner
from printjob_adapters.settings import Settings
from printjob_adapters.sqlite import SCHEMA_VERSION as SQLITE_VERSION
from printjob_adapters.sqlite import SqliteStorage
from printjob_core.fakes import FakeImageProbe
from tests.postgres_support import create_database, drop_database

ROOT = Path(__file__).resolve().parents[2]


def upgrade(data_dir: Path, **extra: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRINTJOB_")}
    env.update(PRINTJOB_DATA_DIR=str(data_dir), PYTHONPATH=str(ROOT / "src"), **extra)
    done = subprocess.run(
        [sys.executable, "-m", "printjob_http.cli", "db", "upgrade", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_db_upgrade_on_sqlite(tmp_path: Path) -> None:
    first = upgrade(tmp_path / "data")
    assert first == {"database": "sqlite", "schema_version": SQLITE_VERSION, "previous_version": 0}
    again = upgrade(tmp_path / "data")
    assert again["previous_version"] == SQLITE_VERSION
    assert (tmp_path / "data" / "printjob.sqlite3").exists()


def test_db_upgrade_on_postgresql(tmp_path: Path) -> None:
    url = create_database()
    try:
        first = upgrade(tmp_path / "data", PRINTJOB_DATABASE_URL=url)
        assert first == {
            "database": "postgresql",
            "schema_version": PG_VERSION,
            "previous_version": 0,
        }
        again = upgrade(tmp_path / "data", PRINTJOB_DATABASE_URL=url)
        assert again["previous_version"] == PG_VERSION
        assert not (tmp_path / "data" / "printjob.sqlite3").exists()
    finally:
        drop_database(url)


def test_the_url_selects_postgresql_and_its_wake_up_signal(tmp_path: Path) -> None:
    url = create_database()
    try:
        settings = Settings(data_dir=tmp_path / "data", database_url=url)
        container = bootstrap(settings, lazy=True, probe=FakeImageProbe())
        assert isinstance(container.storage, PostgresStorage)
        signal = container.storage.job_signal()
        assert isinstance(signal, PostgresJobSignal)
        signal.close()
        account = container.operator.create_account(3)
        assert container.operator.show_account(account.id).account.credits_balance == 3
        container.close()
    finally:
        drop_database(url)
    plain = bootstrap(Settings(data_dir=tmp_path / "sqlite"), lazy=True, probe=FakeImageProbe())
    assert isinstance(plain.storage, SqliteStorage)
    assert plain.storage.job_signal() is None
    plain.close()


def test_blobs_setting_selects_the_blob_store(tmp_path: Path) -> None:
    url = create_database()
    try:
        settings = Settings(data_dir=tmp_path / "data", database_url=url, blobs="database")
        container = bootstrap(settings, lazy=True, probe=FakeImageProbe())
        assert isinstance(container.ports.blobs, PostgresBlobStore)
        container.ports.blobs.put("uploads/job_1", b"image")
        container.close()
        files = bootstrap(
            Settings(data_dir=tmp_path / "files", database_url=url),
            lazy=True,
            probe=FakeImageProbe(),
        )
        assert isinstance(files.ports.blobs, FilesystemBlobStore)
        assert not files.ports.blobs.exists("uploads/job_1")  # not in the files store
        files.close()
    finally:
        drop_database(url)
    assert not (tmp_path / "data" / "files").exists()


class CountingSignal:
    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.waits: list[float] = []
        self.closed = False

    def wait(self, timeout: float) -> bool:
        self.waits.append(timeout)
        if len(self.waits) >= 3:
            self.stop.set()
        return False

    def close(self) -> None:
        self.closed = True


def test_an_idle_runner_waits_on_the_signal(tmp_path: Path) -> None:
    container = bootstrap(Settings(data_dir=tmp_path / "d"), lazy=True, probe=FakeImageProbe())
    stop = threading.Event()
    signal = CountingSignal(stop)
    runner = JobRunner(
        container.processing, engine=None, job_signal=signal, signal_poll_seconds=0.01
    )  # type: ignore[arg-type]
    runner.run(stop)
    assert signal.waits == [0.01, 0.01, 0.01]
    container.close()


def test_an_unreachable_database_is_reported_as_such(tmp_path: Path) -> None:
    """A PostgreSQL server that is down is named as unreachable, with psycopg's reason,
    not as a database "locked by another process"."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRINTJOB_")}
    env.update(
        PRINTJOB_DATA_DIR=str(tmp_path),
        PYTHONPATH=str(ROOT / "src"),
        # Port 1 on loopback: nothing listens there, so the connection is refused at once.
        PRINTJOB_DATABASE_URL="postgresql://printjob@127.0.0.1:1/printjob",
    )
    done = subprocess.run(
        [sys.executable, "-m", "printjob_http.cli", "accounts", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "the database could not be reached" in last
    assert "refused" in last.lower()
    assert "locked" not in last
