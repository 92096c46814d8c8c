"""The `BlobStore` port on the local filesystem: one file per key, written atomically.

Keys are relative paths such as `uploads/job_...` or `results/job_....svg`: segments of
letters, digits, `_`, `.` and `-` separated by `/`, none starting with a dot (so no `..`,
no hidden files, and the store's own temporary files can never collide with a key).
Files are created 0600 and directories 0700: uploads and results are customers' data.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

from printjob_core.ports import ImageBytes

_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
_TEMP_PREFIX = ".tmp-"
FILE_MODE = 0o600
DIR_MODE = 0o700


def check_key(key: str) -> list[str]:
    """The key's path segments; `ValueError` for anything that is not a plain relative key."""
    if not isinstance(key, str) or key == "" or len(key) > 512:
        raise ValueError(f"invalid blob key {key!r}")
    segments = key.split("/")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment):
            raise ValueError(
                f"invalid blob key {key!r}: segments are letters, digits, '_', '.', '-', "
                "separated by '/', and may not start with '.'"
            )
    return segments


class FileReader:
    """A stored file, open for reading piece by piece (the `BlobReader` port). An open file
    stays readable whole even if the file is deleted meanwhile (results expire)."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        self.size = os.fstat(handle.fileno()).st_size

    def read(self, limit: int) -> bytes:
        return self._handle.read(limit)

    def close(self) -> None:
        self._handle.close()


def while_hashing(data: ImageBytes, store: Callable[[], None]) -> str:
    """Run `store()` while another thread computes the SHA-256 (hex) of `data`; both let
    go of the GIL on large buffers, so the two overlap. Returns the digest."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        digest = pool.submit(lambda: hashlib.sha256(data).hexdigest())
        store()
        return digest.result()


class FilesystemBlobStore:
    """Blobs as files under `root`; a write is a temporary file, fsync, then `os.replace`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        make_private_dirs(self.root)

    def path(self, key: str) -> Path:
        return self.root.joinpath(*check_key(key))

    def put(self, key: str, data: ImageBytes) -> None:
        target = self.path(key)
        make_private_dirs(target.parent)
        fd, temp_name = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(handle.fileno(), FILE_MODE)
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_name, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
            raise
        _fsync_dir(target.parent)

    def put_with_digest(self, key: str, data: ImageBytes) -> str:
        """The digest is computed on another thread while the file is written and synced
        (hashing and `fsync` both let go of the GIL): a 30 MB upload costs the longer of
        the two, not their sum."""
        return while_hashing(data, lambda: self.put(key, data))

    def get(self, key: str) -> bytes:
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(key) from None

    def open(self, key: str) -> FileReader:
        try:
            handle = self.path(key).open("rb")
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(key) from None
        return FileReader(handle)

    def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            self.path(key).unlink()

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def sweep_temp_files(self, older_than_seconds: float) -> int:
        """Delete temporary files a killed writer left behind; the number deleted.

        A `put` that is killed between creating its temporary file and renaming it leaves
        the temporary file. One older than `older_than_seconds` (a put takes milliseconds)
        can belong to no writer still alive, whatever process wrote it.
        """
        deadline = time.time() - older_than_seconds
        removed = 0
        for directory, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                if not name.startswith(_TEMP_PREFIX):
                    continue
                path = Path(directory) / name
                with contextlib.suppress(FileNotFoundError):
                    if path.stat().st_mtime < deadline:
                        path.unlink()
                        removed += 1
        return removed

    def keys(self, prefix: str) -> Iterator[str]:
        """Every stored key starting with `prefix`, sorted; temporary files are skipped."""
        found: list[str] = []
        for directory, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            relative = Path(directory).relative_to(self.root)
            for name in filenames:
                if name.startswith("."):
                    continue
                key = (relative / name).as_posix()
                if key.startswith(prefix):
                    found.append(key)
        return iter(sorted(found))


def make_private_dirs(path: Path) -> None:
    """Create `path` and its missing parents as 0700 directories (whatever the umask).

    An existing `path` of this user that group or others may enter (a data directory made
    beforehand with `mkdir`, say) is made 0700 too: it holds customers' data. Existing
    parents are left alone.
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)
        os.chmod(directory, DIR_MODE)
    if not missing:
        info = os.stat(path)
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, DIR_MODE)


def _fsync_dir(path: Path) -> None:
    """Make a rename durable: fsync the directory holding it (where the OS allows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "FileReader",
    "FilesystemBlobStore",
    "check_key",
    "make_private_dirs",
]
