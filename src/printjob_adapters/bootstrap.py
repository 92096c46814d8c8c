"""The composition root: settings in, every port and service wired, out.

    from printjob_adapters.bootstrap import bootstrap
    app = bootstrap()                 # settings from the environment
    app.operator.create_account(10)

The data directory (0700), the database schema and the blob directory are created here,
so any process that bootstraps finds storage ready. `PRINTJOB_DATABASE_URL` selects
PostgreSQL (`printjob_adapters.postgres`); unset, the embedded SQLite file in the data
directory. Uploads and results are files under the data directory (with several machines:
a shared volume), or with `PRINTJOB_BLOBS=database` rows of the PostgreSQL database
(`printjob_adapters.postgres_blobs`).
"""

from __future__ import annotations

import attrs

from printjob_adapters.blobs import FilesystemBlobStore, make_private_dirs
from printjob_adapters.settings import BLOBS_DATABASE, Settings, SettingsError
from printjob_adapters.sqlite import SqliteStorage
from printjob_adapters.storage import Storage
from printjob_adapters.system import RandomIds, SystemClock
from printjob_core.ports import BlobStore, Engine, ImageInfo, ImageProbe
from printjob_core.services import ApiService, JobProcessing, OperatorService, Ports


def open_storage(settings: Settings, *, migrate: bool = True) -> Storage:
    """The storage `settings` select, its schema created or upgraded unless told not to."""
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
    if migrate:
        storage.migrate()
    return storage


def open_blobs(settings: Settings, storage: Storage) -> BlobStore:
    """The blob store `settings` select: files in the data directory, or the database."""
    if settings.blobs != BLOBS_DATABASE:
        return FilesystemBlobStore(settings.blobs_dir)
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

    def probe(self, data: bytes) -> ImageInfo:
        if self._probe is None:
            self._probe = default_probe()
        return self._probe.probe(data)


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
) -> Container:
    """Wire the services for `settings` (default: from the environment).

    `engine` and `probe` replace the defaults (tests use small ones). `lazy=True` imports
    neither now, for processes that never convert (the operator commands): the engine
    stays None unless given, and the probe is imported on first use.
    """
    if settings is None:
        settings = Settings.from_env()
    make_private_dirs(settings.data_dir)
    storage = open_storage(settings)
    blobs = open_blobs(settings, storage)
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
        engine=engine,
        probe=probe,
    )


__all__ = [
    "Container",
    "LazyProbe",
    "Storage",
    "bootstrap",
    "default_engine",
    "default_probe",
    "open_blobs",
    "open_storage",
]
