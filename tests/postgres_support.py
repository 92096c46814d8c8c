"""A real PostgreSQL for the tests: the server `make test` started, or one started here.

`PRINTJOB_TEST_DATABASE_URL` names a database on a server the tests may create databases
on (`make test` sets it from `.ci/postgres-up`). Unset, the first use runs
`.ci/postgres-up` itself, which installs PostgreSQL from the Debian packages if needed and
starts a throwaway cluster on loopback. There is no skip: without PostgreSQL the tests
that need it fail.

`PRINTJOB_TEST_STORAGE=postgresql` makes the servers of the contract and reliability
suites (tests/contract/support.py) use PostgreSQL: one fresh database per data directory.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import subprocess
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
URL_VARIABLE = "PRINTJOB_TEST_DATABASE_URL"
STORAGE_VARIABLE = "PRINTJOB_TEST_STORAGE"

_admin_url: str | None = None
_by_data_dir: dict[str, str] = {}
#: Databases this test process created: dropped when it exits (the cluster is reused).
_created: list[str] = []


def admin_url() -> str:
    """The URL of the test server's maintenance database (started on first use)."""
    global _admin_url
    if _admin_url is None:
        url = os.environ.get(URL_VARIABLE, "").strip()
        if not url:
            done = subprocess.run(
                [str(ROOT / ".ci" / "postgres-up")],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"could not start PostgreSQL for the tests:\n{done.stderr}")
            url = done.stdout.strip().splitlines()[-1]
            os.environ[URL_VARIABLE] = url
        _admin_url = url
    return _admin_url


def url_for(database: str) -> str:
    parts = urlsplit(admin_url())
    return urlunsplit(parts._replace(path="/" + database))


def create_database(name: str | None = None) -> str:
    """Create a database (a fresh random name unless given; existing: kept) and return its URL."""
    name = name or f"pjtest_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                _created.append(name)
    return url_for(name)


@atexit.register
def _drop_created() -> None:
    for name in _created:
        with contextlib.suppress(Exception):
            drop_database(url_for(name))


def drop_database(url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(admin_url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def use_postgres_servers() -> bool:
    """Whether the suites' servers run on PostgreSQL (`PRINTJOB_TEST_STORAGE=postgresql`)."""
    value = os.environ.get(STORAGE_VARIABLE, "").strip().lower()
    if value in ("", "sqlite"):
        return False
    if value in ("postgresql", "postgres"):
        return True
    raise RuntimeError(f"{STORAGE_VARIABLE} must be sqlite or postgresql, not {value!r}")


def database_for(data_dir: Path) -> str:
    """The database of the server on `data_dir`: the same one for every call (restarts)."""
    key = str(Path(data_dir).absolute())
    if key not in _by_data_dir:
        digest = hashlib.sha256(key.encode()).hexdigest()[:24]
        _by_data_dir[key] = create_database(f"pjsrv_{digest}")
    return _by_data_dir[key]


def database_bytes(data_dir: Path) -> bytes:
    """Every row of the data-dir server's database as text (for greps of data at rest)."""
    out = bytearray()
    with psycopg.connect(database_for(data_dir), autocommit=True) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
        for (table,) in tables:
            query = sql.SQL("COPY {} TO STDOUT").format(sql.Identifier(table))
            with conn.cursor().copy(query) as copy:
                for block in copy:
                    out += bytes(block)
    return bytes(out)
