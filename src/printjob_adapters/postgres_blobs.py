"""The `BlobStore` port in PostgreSQL: uploads and results as rows of the `blobs` table.

Selected by `PRINTJOB_BLOBS=database` (with `PRINTJOB_DATABASE_URL`): API and worker
processes on several machines then share nothing but the database, no blob volume.

- One row per key (`key`, `data bytea`, `created_at`), made by the schema migration
  `_database_blobs`; the column's storage is `EXTERNAL` (out of line, not compressed
  again: PNG, PDF and JPEG are compressed already).
- `put` is one upsert: atomic by nature, so nothing half-written can ever be read or
  left behind, and `sweep_temp_files` has nothing to do.
- Keys obey the filesystem store's rules (`printjob_adapters.blobs.check_key`), so a
  service can move from one store to the other without meeting a key one refuses.
- `keys(prefix)` is a range on the primary key (`key >= prefix AND key < next`), which
  the "C" collation of the key column lets its index serve, in byte order.
- Each call borrows a connection from the storage's pool, in autocommit; running out of
  connections, a lock wait past `PRINTJOB_BUSY_TIMEOUT_SECONDS` or a lost database
  answers 503 `server_busy`, like every other storage call.
- Bytes travel in psycopg's binary format both ways, not as hex text.
"""

from __future__ import annotations

from collections.abc import Iterator

from printjob_adapters.blobs import check_key, while_hashing
from printjob_adapters.postgres import PostgresStorage
from printjob_core.ports import ImageBytes

_PUT = (
    "INSERT INTO blobs (key, data, created_at) VALUES (%s, %b, now()) "
    "ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data, created_at = EXCLUDED.created_at"
)
_GET = "SELECT data FROM blobs WHERE key = %s"
_EXISTS = "SELECT 1 FROM blobs WHERE key = %s"
_SIZE = "SELECT octet_length(data) AS size FROM blobs WHERE key = %s"
#: `substring` of an uncompressed out-of-line value reads only the TOAST chunks it needs.
_PIECE = "SELECT substring(data FROM %s FOR %s) AS piece FROM blobs WHERE key = %s"
_DELETE = "DELETE FROM blobs WHERE key = %s"
_KEYS_FROM = "SELECT key FROM blobs WHERE key >= %s ORDER BY key"
_KEYS_BETWEEN = "SELECT key FROM blobs WHERE key >= %s AND key < %s ORDER BY key"


def prefix_end(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix` (in code point
    order); None when there is none (an empty prefix, or one of only the last code
    point)."""
    trimmed = prefix.rstrip(chr(0x10FFFF))
    if not trimmed:
        return None
    return trimmed[:-1] + chr(ord(trimmed[-1]) + 1)


class DatabaseBlobReader:
    """A `blobs` row read piece by piece (the `BlobReader` port): one short query per
    piece, each on a connection borrowed from the pool only for that query, so a slow
    download holds neither the blob nor a connection."""

    def __init__(self, storage: PostgresStorage, key: str, size: int) -> None:
        self._storage = storage
        self._key = key
        self._position = 0
        self.size = size

    def read(self, limit: int) -> bytes:
        if self._position >= self.size:
            return b""
        with self._storage.connection() as conn:
            cursor = conn.cursor(binary=True)
            row = cursor.execute(_PIECE, (self._position + 1, limit, self._key)).fetchone()
        if row is None:
            raise KeyError(self._key)  # deleted mid-read: the answer is cut short
        piece = bytes(row["piece"])
        self._position += len(piece)
        return piece

    def close(self) -> None:
        self._position = self.size


class PostgresBlobStore:
    """Blobs as rows of the `blobs` table, on the storage's connection pool."""

    def __init__(self, storage: PostgresStorage) -> None:
        self.storage = storage

    def put(self, key: str, data: ImageBytes) -> None:
        check_key(key)
        with self.storage.connection() as conn:
            conn.execute(_PUT, (key, data))

    def put_with_digest(self, key: str, data: ImageBytes) -> str:
        """The digest is computed on another thread while the row is written."""
        return while_hashing(data, lambda: self.put(key, data))

    def get(self, key: str) -> bytes:
        check_key(key)
        with self.storage.connection() as conn:
            row = conn.cursor(binary=True).execute(_GET, (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        data: bytes = row["data"]
        return data

    def open(self, key: str) -> DatabaseBlobReader:
        check_key(key)
        with self.storage.connection() as conn:
            row = conn.execute(_SIZE, (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return DatabaseBlobReader(self.storage, key, int(row["size"]))

    def delete(self, key: str) -> None:
        check_key(key)
        with self.storage.connection() as conn:
            conn.execute(_DELETE, (key,))

    def exists(self, key: str) -> bool:
        check_key(key)
        with self.storage.connection() as conn:
            return conn.execute(_EXISTS, (key,)).fetchone() is not None

    def keys(self, prefix: str) -> Iterator[str]:
        """Every stored key starting with `prefix`, sorted (byte order, as the filesystem
        store sorts)."""
        end = prefix_end(prefix)
        with self.storage.connection() as conn:
            if end is None:
                rows = conn.execute(_KEYS_FROM, (prefix,)).fetchall()
            else:
                rows = conn.execute(_KEYS_BETWEEN, (prefix, end)).fetchall()
        return iter([str(row["key"]) for row in rows])

    def sweep_temp_files(self, older_than_seconds: float) -> int:
        """Nothing to sweep: an upsert is never left half-written."""
        return 0


__all__ = ["DatabaseBlobReader", "PostgresBlobStore", "prefix_end"]
