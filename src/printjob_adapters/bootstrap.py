"""The composition root: settings in, every port and service wired, out.

    from printjob_adapters.bootstrap import bootstrap
    app = bootstrap()                 # settings from the environment
    app.operator.create_account(10)

The data directory (0700), the database schema and the blob directory are created here,
so any process that bootstraps finds storage ready; except with `create=False` (the
operator's commands), which opens only a printjob database that exists and otherwise
raises `NoDatabase`, having created nothing. `PRINTJOB_DATABASE_URL` selects
PostgreSQL (`printjob_adapters.postgres`); unset, the embedded SQLite file in the data
directory. Uploads and results are files under the data directory (with several machines:
a shared volume), or with `PRINTJOB_BLOBS=database` rows of the PostgreSQL database
(`printjob_adapters.postgres_blobs`).
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs

from printjob_adapters.blobs import FilesystemBlobStore, make_private_dirs
from printjob_adapters.passwords import Argon2PasswordHasher
from printjob_adapters.settings import (
    BLOBS_DATABASE,
    DATA_DIR,
    DATABASE_URL,
    Settings,
    SettingsError,
)
from printjob_adapters.sqlite import SqliteStorage
from printjob_adapters.storage import Storage
from printjob_adapters.system import RandomIds, SystemClock
from printjob_core.ports import (
    BlobReader,
    BlobStore,
    Engine,
    ImageBytes,
    ImageInfo,
    ImageProbe,
    PasswordHasher,
)
from printjob_core.services import (
    ApiService,
    JobProcessing,
    OperatorService,
    Ports,
    WebsiteService,
)


class NoDatabase(Exception):
    """The configured data dir or database holds no printjob database, and the command
    must not create one: an operator pointed at the wrong place would otherwise make keys
    and accounts that the running server never sees."""


def hide_password(url: str) -> str:
    """A database URL fit to show: its password (in the address or the query) as `***`."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            netloc = f"{user.split(':', 1)[0]}:***@{host}"
        query = urlencode(
            [
                (name, "***" if name.lower() == "password" else value)
                for name, value in parse_qsl(parts.query, keep_blank_values=True)
            ],
            safe="*",
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "(an unreadable address)"


def storage_description(settings: Settings) -> str:
    """Which database `settings` select, for the operator: `/srv/var (PRINTJOB_DATA_DIR)`
    or the PostgreSQL URL without its password."""
    if settings.database_url is not None:
        return f"{hide_password(settings.database_url)} ({DATABASE_URL})"
    return f"{settings.data_dir} ({DATA_DIR})"


def _no_database(settings: Settings) -> NoDatabase:
    variable = DATA_DIR if settings.database_url is None else DATABASE_URL
    where = "the server's data dir" if settings.database_url is None else "the server's database"
    return NoDatabase(
        f"no printjob database in {storage_description(settings)}; run "
        f'"printjob db upgrade" to create one, or point {variable} at {where}'
    )


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; only its absence is "no": a data dir that cannot be read
    (or whose parent is a file) is the OSError it is, for the operator to see."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        return False


def open_storage(settings: Settings, *, migrate: bool = True, create: bool = True) -> Storage:
    """The storage `settings` select, its schema created or upgraded unless told not to.

    `create=False` opens only a database that already holds printjob's schema (upgrading
    it when `migrate`); anything else raises `NoDatabase` and creates nothing: no
    directory, no file, no table.
    """
    if not create and settings.database_url is None and not _is_file(settings.database_path):
        raise _no_database(settings)
    storage: Storage
    if settings.database_url is not None:
        from printjob_adapters.postgres import PostgresStorage

        storage = PostgresStorage(
            settings.database_url,
            busy_timeout=settings.busy_timeout_seconds,
            pool_size=settings.database_pool_size,
        )
    else:
        storage = SqliteStorage(settings.database_path, busy_timeout=settings.busy_timeout_seconds)
    try:
        if not create and storage.schema_version() == 0:
            raise _no_database(settings)
        if migrate:
            storage.migrate()
    except BaseException:
        storage.close()
        raise
    return storage


def open_blobs(settings: Settings, storage: Storage, *, create: bool = True) -> BlobStore:
    """The blob store `settings` select: files in the data directory, or the database.

    Without `create`, the files' directory is made on first use only (`LazyBlobs`).
    """
    if settings.blobs != BLOBS_DATABASE:
        return FilesystemBlobStore(settings.blobs_dir) if create else LazyBlobs(settings.blobs_dir)
    from printjob_adapters.postgres import PostgresStorage
    from printjob_adapters.postgres_blobs import PostgresBlobStore

    if not isinstance(storage, PostgresStorage):
        raise SettingsError("PRINTJOB_BLOBS=database needs PRINTJOB_DATABASE_URL")
    return PostgresBlobStore(storage)


@attrs.frozen
class Container:
    """Everything a process needs, wired once."""

    settings: Settings
    storage: Storage
    ports: Ports
    api: ApiService
    processing: JobProcessing
    operator: OperatorService
    website: WebsiteService
    #: The tracing engine; None when it could not be imported (API-only processes run).
    engine: Engine | None
    probe: ImageProbe

    def close(self) -> None:
        """Close the database connections this process opened."""
        self.storage.close()


def default_probe() -> ImageProbe:
    """The Pillow header probe (imported on demand: it pulls in Pillow and NumPy)."""
    from printjob_adapters.tracing import PillowImageProbe

    return PillowImageProbe()


class LazyProbe:
    """The Pillow probe, imported on its first use (for processes that seldom probe)."""

    def __init__(self) -> None:
        self._probe: ImageProbe | None = None

    def probe(self, data: ImageBytes) -> ImageInfo:
        if self._probe is None:
            self._probe = default_probe()
        return self._probe.probe(data)


class LazyBlobs:
    """The filesystem blob store, its directory made on first use: an operator command
    that touches no file (most of them) then leaves the data dir as it found it."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._store: FilesystemBlobStore | None = None

    def _blobs(self) -> FilesystemBlobStore:
        if self._store is None:
            self._store = FilesystemBlobStore(self._root)
        return self._store

    def put(self, key: str, data: ImageBytes) -> None:
        self._blobs().put(key, data)

    def put_with_digest(self, key: str, data: ImageBytes) -> str:
        return self._blobs().put_with_digest(key, data)

    def get(self, key: str) -> bytes:
        return self._blobs().get(key)

    def open(self, key: str) -> BlobReader:
        return self._blobs().open(key)

    def delete(self, key: str) -> None:
        self._blobs().delete(key)

    def exists(self, key: str) -> bool:
        return self._blobs().exists(key)

    def keys(self, prefix: str) -> Iterator[str]:
        return self._blobs().keys(prefix)

    def sweep_temp_files(self, older_than_seconds: float) -> int:
        return self._blobs().sweep_temp_files(older_than_seconds)


def default_engine() -> Engine | None:
    """The tracing engine, or None when it cannot be imported."""
    try:
        from printjob_adapters.tracing import TracingEngine
    except ImportError:
        return None
    return TracingEngine()


def bootstrap(
    settings: Settings | None = None,
    *,
    engine: Engine | None = None,
    probe: ImageProbe | None = None,
    lazy: bool = False,
    create: bool = True,
    hasher: PasswordHasher | None = None,
) -> Container:
    """Wire the services for `settings` (default: from the environment).

    `engine`, `probe` and `hasher` replace the defaults (tests use small or fast ones).
    `lazy=True` imports neither engine nor probe now, for processes that never convert
    (the operator commands): the engine stays None unless given, and the probe is
    imported on first use. `create=False` (the operator commands) raises `NoDatabase`,
    creating nothing, unless the data dir or database already holds a printjob database.
    """
    if settings is None:
        settings = Settings.from_env()
    if create:
        make_private_dirs(settings.data_dir)
    storage = open_storage(settings, create=create)
    blobs = open_blobs(settings, storage, create=create)
    if probe is None:
        probe = LazyProbe() if lazy else default_probe()
    if engine is None and not lazy:
        engine = default_engine()
    ports = Ports(
        uow=storage.unit_of_work,
        reader=storage.reader,
        clock=SystemClock(),
        ids=RandomIds(),
        blobs=blobs,
        limiter=storage.rate_limiter(),
        probe=probe,
        policy=settings.policy(),
        views=storage.views(),
    )
    return Container(
        settings=settings,
        storage=storage,
        ports=ports,
        api=ApiService(ports),
        processing=JobProcessing(ports),
        operator=OperatorService(ports),
        website=WebsiteService(
            ports,
            Argon2PasswordHasher() if hasher is None else hasher,
            signup_open=settings.signup_open,
            sign_ups_per_day=settings.signups_per_day,
        ),
        engine=engine,
        probe=probe,
    )


__all__ = [
    "Container",
    "LazyBlobs",
    "LazyProbe",
    "NoDatabase",
    "Storage",
    "bootstrap",
    "default_engine",
    "default_probe",
    "hide_password",
    "open_blobs",
    "open_storage",
    "storage_description",
]
