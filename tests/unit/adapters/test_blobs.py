"""The filesystem blob store: atomic private files, keys checked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from printjob_adapters.blobs import FilesystemBlobStore, check_key


@pytest.fixture
def blobs(tmp_path: Path) -> FilesystemBlobStore:
    return FilesystemBlobStore(tmp_path / "files")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_put_get_exists_delete(blobs: FilesystemBlobStore) -> None:
    key = "uploads/job_" + "a" * 32
    assert not blobs.exists(key)
    blobs.put(key, b"image bytes")
    assert blobs.exists(key)
    assert blobs.get(key) == b"image bytes"
    blobs.put(key, b"replaced")
    assert blobs.get(key) == b"replaced"
    blobs.delete(key)
    assert not blobs.exists(key)
    blobs.delete(key)  # deleting a missing blob is not an error
    with pytest.raises(KeyError):
        blobs.get(key)


def test_empty_blob(blobs: FilesystemBlobStore) -> None:
    blobs.put("results/empty.svg", b"")
    assert blobs.get("results/empty.svg") == b""


def test_files_are_0600_and_directories_0700(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        blobs = FilesystemBlobStore(tmp_path / "data" / "files")
        blobs.put("results/deep/job_1.svg", b"<svg/>")
    finally:
        os.umask(old_umask)
    assert mode(tmp_path / "data") == 0o700
    assert mode(tmp_path / "data" / "files") == 0o700
    assert mode(tmp_path / "data" / "files" / "results") == 0o700
    assert mode(tmp_path / "data" / "files" / "results" / "deep") == 0o700
    assert mode(tmp_path / "data" / "files" / "results" / "deep" / "job_1.svg") == 0o600


def test_a_write_leaves_no_temporary_file(blobs: FilesystemBlobStore) -> None:
    blobs.put("uploads/job_1", b"x" * 100_000)
    assert sorted(p.name for p in (blobs.root / "uploads").iterdir()) == ["job_1"]


def test_a_failed_write_keeps_the_old_content_and_no_temporary(
    blobs: FilesystemBlobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    blobs.put("uploads/job_1", b"old")

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        blobs.put("uploads/job_1", b"new")
    monkeypatch.undo()
    assert blobs.get("uploads/job_1") == b"old"
    assert sorted(p.name for p in (blobs.root / "uploads").iterdir()) == ["job_1"]


def test_keys_lists_by_prefix_and_skips_temporaries(blobs: FilesystemBlobStore) -> None:
    for key in ("uploads/job_2", "uploads/job_1", "results/job_1.svg"):
        blobs.put(key, b"x")
    (blobs.root / "uploads" / ".tmp-abandoned").write_bytes(b"half")
    assert list(blobs.keys("uploads/")) == ["uploads/job_1", "uploads/job_2"]
    assert list(blobs.keys("results/")) == ["results/job_1.svg"]
    assert list(blobs.keys("")) == ["results/job_1.svg", "uploads/job_1", "uploads/job_2"]
    assert list(blobs.keys("nothing/")) == []


@pytest.mark.parametrize(
    "key",
    [
        "",
        "/etc/passwd",
        "../outside",
        "uploads/../../outside",
        "uploads/..",
        "uploads/./job",
        "uploads//job",
        "uploads/",
        ".hidden",
        "uploads/.tmp-x",
        "uploads\\job",
        "uploads/job name",
        "uploads/jöb",
        "uploads/job\x00",
        "a" * 600,
    ],
)
def test_bad_keys_are_refused(blobs: FilesystemBlobStore, key: str) -> None:
    with pytest.raises(ValueError):
        check_key(key)
    for operation in (blobs.get, blobs.delete, blobs.exists):
        with pytest.raises(ValueError):
            operation(key)
    with pytest.raises(ValueError):
        blobs.put(key, b"x")


def test_good_keys_are_accepted() -> None:
    assert check_key("uploads/job_" + "0" * 32) == ["uploads", "job_" + "0" * 32]
    assert check_key("results/job_1.svg") == ["results", "job_1.svg"]
    assert check_key("a-b_c.d") == ["a-b_c.d"]
