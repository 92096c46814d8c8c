"""The blob store contract: one suite of `BlobStore` behaviours, run on the core's fake,
on the filesystem store and on the PostgreSQL store (`PRINTJOB_BLOBS=database`).

A new blob store adds its line to `STORES` and must pass every test here. What only one
store does (file modes and temporary files; the table's storage, the index behind the
prefix query and 503 on a lock wait) is tested below the suite, and then retention (the
core's sweeps) over the database store.
PostgreSQL is the server `make test` starts (`PRINTJOB_TEST_DATABASE_URL`); never skipped.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from printjob_adapters.blobs import FilesystemBlobStore
from printjob_adapters.postgres import PostgresStorage
from printjob_adapters.postgres import open_storage as open_postgres
from printjob_adapters.postgres_blobs import PostgresBlobStore, prefix_end
from printjob_core.errors import ResultExpired, ServerBusy
from printjob_core.fakes import FakeBlobStore, FakeClock, FakeIds, FakeImageProbe, fake_image
from printjob_core.limits import Policy
from printjob_core.model import ConversionOutput
from printjob_core.ports import BlobStore
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports
from tests.keyed_reads import KeyedReads
from tests.postgres_support import create_database, drop_database
from tests.unit.adapters.storage_support import T0

STORES = ["fake", "files", "postgresql"]
#: The stores that check keys (the fake keeps the port's promises, not the key rules).
CHECKED = ["files", "postgresql"]
UPLOAD = "uploads/job_" + "a" * 32

#: Opens another handle on the same stored blobs (another process would).
Reopen = Callable[[], BlobStore]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """One database per test module and process, emptied before each test."""
    url = create_database()
    open_postgres(url).close()
    yield url
    drop_database(url)


def _open(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Reopen]:
    if name == "fake":
        fake = FakeBlobStore()
        yield lambda: fake
    elif name == "files":
        yield lambda: FilesystemBlobStore(tmp_path / "files")
    else:
        storages: list[PostgresStorage] = []

        def reopen() -> BlobStore:
            storages.append(PostgresStorage(request.getfixturevalue("postgres_url")))
            return PostgresBlobStore(storages[-1])

        with PostgresStorage(request.getfixturevalue("postgres_url")).connection() as conn:
            conn.execute("TRUNCATE blobs")
        yield reopen
        for storage in storages:
            storage.close()


@pytest.fixture(params=STORES)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Reopen]:
    yield from _open(request.param, request, tmp_path)


@pytest.fixture
def blobs(stores: Reopen) -> BlobStore:
    return stores()


@pytest.fixture(params=CHECKED)
def checked(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlobStore]:
    for reopen in _open(request.param, request, tmp_path):
        yield reopen()


# -- every store --


def test_put_get_exists_delete(blobs: BlobStore) -> None:
    assert not blobs.exists(UPLOAD)
    blobs.put(UPLOAD, b"image bytes")
    assert blobs.exists(UPLOAD)
    assert blobs.get(UPLOAD) == b"image bytes"
    blobs.delete(UPLOAD)
    assert not blobs.exists(UPLOAD)
    with pytest.raises(KeyError):
        blobs.get(UPLOAD)


def test_a_blob_reads_piece_by_piece(blobs: BlobStore) -> None:
    data = bytes(range(256)) * 4000 + b"tail"
    blobs.put(UPLOAD, data)
    reader = blobs.open(UPLOAD)
    try:
        assert reader.size == len(data)
        pieces = []
        while piece := reader.read(100_000):
            assert len(piece) <= 100_000
            pieces.append(piece)
        assert b"".join(pieces) == data
        assert reader.read(10) == b""
    finally:
        reader.close()
    with pytest.raises(KeyError):
        blobs.open("results/job_" + "b" * 32 + ".svg")


def test_a_put_replaces_whole(blobs: BlobStore) -> None:
    blobs.put(UPLOAD, b"x" * 100_000)
    blobs.put(UPLOAD, b"short")
    assert blobs.get(UPLOAD) == b"short"
    assert list(blobs.keys("uploads/")) == [UPLOAD]


def test_deleting_a_missing_blob_is_not_an_error(blobs: BlobStore) -> None:
    blobs.delete(UPLOAD)
    blobs.put(UPLOAD, b"x")
    blobs.delete(UPLOAD)
    blobs.delete(UPLOAD)
    assert not blobs.exists(UPLOAD)


def test_an_empty_blob_is_a_blob(blobs: BlobStore) -> None:
    blobs.put("results/empty.svg", b"")
    assert blobs.exists("results/empty.svg")
    assert blobs.get("results/empty.svg") == b""


def test_every_byte_value_comes_back(blobs: BlobStore) -> None:
    data = bytes(range(256)) * 64 + b"\x00\\x00'\"%s"
    blobs.put("results/job_1-1.png", data)
    assert blobs.get("results/job_1-1.png") == data


def test_a_large_blob_comes_back_exactly(blobs: BlobStore) -> None:
    data = os.urandom(20 * 1024 * 1024 + 7)  # incompressible, like a PNG upload
    blobs.put(UPLOAD, data)
    assert blobs.get(UPLOAD) == data


def test_put_with_digest_stores_the_blob_and_gives_its_sha256(blobs: BlobStore) -> None:
    data = bytes(range(256)) * 40_000  # 10 MB: hashed on another thread while stored
    view = memoryview(bytearray(b"xx" + data + b"yy"))[2:-2]  # a view, as uploads are
    digest = blobs.put_with_digest("uploads/job_hashed", view)
    assert digest == hashlib.sha256(data).hexdigest()
    assert blobs.get("uploads/job_hashed") == data
    assert blobs.put_with_digest("uploads/job_empty", b"") == hashlib.sha256(b"").hexdigest()
    assert blobs.get("uploads/job_empty") == b""


def test_keys_lists_by_prefix_in_order(blobs: BlobStore) -> None:
    stored = [
        "uploads/job_2",
        "uploads/job_1",
        "uploadsX/job_1",
        "uploads-x",
        "results/job_1-1.svg",
        "results/job_1-2.svg",
        "results/job_10-1.pdf",
        "results/job_2-1.png",
    ]
    for key in stored:
        blobs.put(key, b"x")
    assert list(blobs.keys("uploads/")) == ["uploads/job_1", "uploads/job_2"]
    assert list(blobs.keys("results/job_1")) == [
        "results/job_1-1.svg",
        "results/job_1-2.svg",
        "results/job_10-1.pdf",
    ]
    assert list(blobs.keys("results/job_1-")) == ["results/job_1-1.svg", "results/job_1-2.svg"]
    assert list(blobs.keys("")) == sorted(stored)
    assert list(blobs.keys("nothing/")) == []
    assert list(blobs.keys("uploads/job_1")) == ["uploads/job_1"]


def test_other_handles_see_the_same_blobs(stores: Reopen) -> None:
    """What one process stores, another reads and deletes (API and worker processes)."""
    first, second = stores(), stores()
    first.put(UPLOAD, b"shared")
    assert second.exists(UPLOAD)
    assert second.get(UPLOAD) == b"shared"
    assert list(second.keys("uploads/")) == [UPLOAD]
    second.delete(UPLOAD)
    assert not first.exists(UPLOAD)


def test_concurrent_puts_of_one_key_leave_one_whole_value(stores: Reopen) -> None:
    values = [bytes([n]) * 300_000 for n in range(6)]
    handles = [stores() for _ in values]
    threads = [
        threading.Thread(target=handle.put, args=(UPLOAD, value))
        for handle, value in zip(handles, values, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert handles[0].get(UPLOAD) in values


def test_sweeping_temporary_files_keeps_every_blob(blobs: BlobStore) -> None:
    blobs.put(UPLOAD, b"kept")
    blobs.put("results/job_1-1.svg", b"<svg/>")
    assert blobs.sweep_temp_files(0) == 0
    assert blobs.get(UPLOAD) == b"kept"
    assert list(blobs.keys("")) == ["results/job_1-1.svg", UPLOAD]


# -- the stores that check keys --


@pytest.mark.parametrize(
    "key", ["", "/etc/passwd", "../outside", "uploads/../x", "uploads/", ".hidden", "a b"]
)
def test_bad_keys_are_refused(checked: BlobStore, key: str) -> None:
    for operation in (checked.get, checked.delete, checked.exists):
        with pytest.raises(ValueError):
            operation(key)
    with pytest.raises(ValueError):
        checked.put(key, b"x")


# -- what only the PostgreSQL store does --


@pytest.fixture
def postgres_blobs(postgres_url: str) -> Iterator[PostgresBlobStore]:
    storage = PostgresStorage(postgres_url, busy_timeout=0.3)
    with storage.connection() as conn:
        conn.execute("TRUNCATE blobs")
    yield PostgresBlobStore(storage)
    storage.close()


def test_prefix_end() -> None:
    assert prefix_end("uploads/") == "uploads0"
    assert prefix_end("results/job_1") == "results/job_2"
    assert prefix_end("") is None
    assert prefix_end("a" + chr(0x10FFFF)) == "b"
    assert prefix_end(chr(0x10FFFF)) is None


def test_blobs_are_stored_out_of_line_uncompressed(postgres_blobs: PostgresBlobStore) -> None:
    with postgres_blobs.storage.connection() as conn:
        row = conn.execute(
            "SELECT attstorage FROM pg_attribute "
            "WHERE attrelid = 'blobs'::regclass AND attname = 'data'"
        ).fetchone()
    assert row is not None and row["attstorage"] == "e"  # EXTERNAL


def test_the_prefix_query_is_served_by_the_primary_key(
    postgres_blobs: PostgresBlobStore,
) -> None:
    for n in range(50):
        postgres_blobs.put(f"results/job_{n}-1.svg", b"x")
    with postgres_blobs.storage.connection() as conn, conn.transaction():
        # A table this small is read whole; forbid that to see what the index can do.
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            str(row["QUERY PLAN"])
            for row in conn.execute(
                "EXPLAIN SELECT key FROM blobs WHERE key >= %s AND key < %s ORDER BY key",
                ("uploads/", prefix_end("uploads/")),
            ).fetchall()
        )
    assert "blobs_pkey" in plan and "Index Cond" in plan, plan


def test_a_put_that_waits_for_a_locked_row_is_server_busy(
    postgres_blobs: PostgresBlobStore, postgres_url: str
) -> None:
    postgres_blobs.put(UPLOAD, b"old")
    with psycopg.connect(postgres_url) as holder:
        holder.execute("SELECT 1 FROM blobs WHERE key = %s FOR UPDATE", (UPLOAD,))
        with pytest.raises(ServerBusy) as caught:
            postgres_blobs.put(UPLOAD, b"new")
        assert caught.value.code == "server_busy"
        holder.rollback()
    assert postgres_blobs.get(UPLOAD) == b"old"


# -- retention deletes what the database store keeps --


@pytest.fixture
def database_services(postgres_url: str) -> Iterator[tuple[Ports, ApiService, JobProcessing]]:
    """The core's services on PostgreSQL, blobs in the database, on a fake clock."""
    storage = PostgresStorage(postgres_url)
    with storage.connection() as conn:
        conn.execute(
            "TRUNCATE blobs, rate_counts, idempotency_keys, credit_ledger, website_downloads, "
            "invites, web_sessions, people, sign_in_failures, jobs, api_keys, accounts"
        )
    ports = Ports(
        uow=storage.unit_of_work,
        reader=storage.reader,
        clock=FakeClock(T0),
        ids=FakeIds(),
        blobs=PostgresBlobStore(storage),
        limiter=storage.rate_limiter(),
        probe=FakeImageProbe(),
        policy=Policy(submissions_per_minute=1000, result_ttl_seconds=60, lease_seconds=30),
    )
    yield ports, ApiService(ports), JobProcessing(ports)
    storage.close()


def _stored_keys(ports: Ports) -> list[str]:
    return list(ports.blobs.keys(""))


def test_retention_deletes_uploads_and_results_in_the_database(
    database_services: tuple[Ports, ApiService, JobProcessing],
) -> None:
    ports, api, processing = database_services
    clock = ports.clock
    assert isinstance(clock, FakeClock)
    operator = OperatorService(ports)
    acct = operator.create_account(5, 10)
    image = fake_image(salt="retention")
    job = api.submit(acct, [("format", "png")], image).job
    assert _stored_keys(ports) == [f"uploads/{job.id}"]

    claim = processing.claim()
    assert claim is not None and processing.image(claim) == image
    output = ConversionOutput(b"\x89PNG result", 10, 10, 2, False)
    done = processing.succeed(claim, output)
    assert done is not None and done.result_key is not None
    # The job ended: its upload is gone; the result is kept.
    assert _stored_keys(ports) == [done.result_key]
    assert api.result(acct, job.id)[1] == output.data

    clock.advance(61)
    assert processing.sweep() == 1
    assert _stored_keys(ports) == []
    with pytest.raises(ResultExpired) as caught:
        api.result(acct, job.id)
    assert caught.value.status == 410
    assert KeyedReads(api, operator).job(acct, job.id).result is not None  # the job stays readable

    canceled = api.submit(acct, [("format", "svg")], fake_image(salt="cancel")).job
    assert _stored_keys(ports) == [f"uploads/{canceled.id}"]
    api.cancel(acct, canceled.id)
    assert _stored_keys(ports) == []


def test_the_orphan_sweep_deletes_database_blobs_no_job_needs(
    database_services: tuple[Ports, ApiService, JobProcessing],
) -> None:
    ports, api, processing = database_services
    clock = ports.clock
    assert isinstance(clock, FakeClock)
    acct = OperatorService(ports).create_account(5, 10)
    live = api.submit(acct, [("format", "svg")], fake_image(salt="live")).job
    orphans = ["uploads/job_" + "e" * 32, "results/job_" + "f" * 32 + "-1.svg"]
    for key in orphans:
        ports.blobs.put(key, b"left by a crash")
    ports.blobs.put("notes/readme", b"not ours")

    assert processing.sweep_orphans() == 0  # first seen: kept for a lease
    clock.advance(31)
    assert processing.sweep_orphans() == 2
    assert _stored_keys(ports) == ["notes/readme", f"uploads/{live.id}"]
