"""The operator's settings, read from the environment (and optionally a settings file).

Every variable is named `PRINTJOB_...` (design.md, "Settings"). A file named by
`PRINTJOB_SETTINGS_FILE` may hold the same variables as `KEY=VALUE` lines; a variable set
in the environment wins over the file. A bad value stops the program with a message that
names the variable.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import attrs

from printjob_core.limits import Policy

DATA_DIR = "PRINTJOB_DATA_DIR"
BASE_URL = "PRINTJOB_BASE_URL"
DOCS_URL = "PRINTJOB_DOCS_URL"
SERVICE_NAME = "PRINTJOB_SERVICE_NAME"
RESULT_TTL = "PRINTJOB_RESULT_TTL_SECONDS"
IDEMPOTENCY_TTL = "PRINTJOB_IDEMPOTENCY_TTL_SECONDS"
SUBMISSIONS_PER_MINUTE = "PRINTJOB_SUBMISSIONS_PER_MINUTE"
READS_PER_MINUTE = "PRINTJOB_READS_PER_MINUTE"
WRONG_KEYS_PER_MINUTE = "PRINTJOB_WRONG_KEYS_PER_MINUTE"
WORKERS = "PRINTJOB_WORKERS"
TRUSTED_PROXIES = "PRINTJOB_TRUSTED_PROXIES"
MAX_QUEUE_DEPTH = "PRINTJOB_MAX_QUEUE_DEPTH"
LEASE_SECONDS = "PRINTJOB_LEASE_SECONDS"
JOB_TIME_BUDGET = "PRINTJOB_JOB_TIME_BUDGET_SECONDS"
BUSY_TIMEOUT = "PRINTJOB_BUSY_TIMEOUT_SECONDS"
DATABASE_URL = "PRINTJOB_DATABASE_URL"
DATABASE_POOL_SIZE = "PRINTJOB_DATABASE_POOL_SIZE"
BLOBS = "PRINTJOB_BLOBS"
METRICS_TOKEN = "PRINTJOB_METRICS_TOKEN"
LOG_FORMAT = "PRINTJOB_LOG_FORMAT"
WORKER_MEMORY_MB = "PRINTJOB_WORKER_MEMORY_MB"
SIGNUP = "PRINTJOB_SIGNUP"
SIGNUPS_PER_DAY = "PRINTJOB_SIGNUPS_PER_DAY"
SETTINGS_FILE = "PRINTJOB_SETTINGS_FILE"
#: The API's connection bounds (issue 15: a slow or silent client holds nothing for long).
HEADER_TIMEOUT = "PRINTJOB_HEADER_TIMEOUT_SECONDS"
BODY_WINDOW = "PRINTJOB_BODY_WINDOW_SECONDS"
BODY_MIN_BYTES = "PRINTJOB_BODY_MIN_BYTES"
KEEPALIVE_TIMEOUT = "PRINTJOB_KEEPALIVE_TIMEOUT_SECONDS"
KEEPALIVE_MAX = "PRINTJOB_KEEPALIVE_MAX"
WRITE_TIMEOUT = "PRINTJOB_WRITE_TIMEOUT_SECONDS"

#: Every variable a settings file may set.
KNOWN_VARIABLES = frozenset(
    {
        DATA_DIR,
        BASE_URL,
        DOCS_URL,
        SERVICE_NAME,
        RESULT_TTL,
        IDEMPOTENCY_TTL,
        SUBMISSIONS_PER_MINUTE,
        READS_PER_MINUTE,
        WRONG_KEYS_PER_MINUTE,
        WORKERS,
        TRUSTED_PROXIES,
        MAX_QUEUE_DEPTH,
        LEASE_SECONDS,
        JOB_TIME_BUDGET,
        BUSY_TIMEOUT,
        DATABASE_URL,
        DATABASE_POOL_SIZE,
        BLOBS,
        METRICS_TOKEN,
        LOG_FORMAT,
        WORKER_MEMORY_MB,
        SIGNUP,
        SIGNUPS_PER_DAY,
        HEADER_TIMEOUT,
        BODY_WINDOW,
        BODY_MIN_BYTES,
        KEEPALIVE_TIMEOUT,
        KEEPALIVE_MAX,
        WRITE_TIMEOUT,
    }
)

#: The errors page the service serves itself: the default base of every Problem `type`.
DOCS_ERRORS_PATH = "/docs/errors"

#: The values of `PRINTJOB_SIGNUP`: whether anyone may sign up on the website.
SIGNUP_OPEN = "open"
SIGNUP_CLOSED = "closed"
SIGNUP_CHOICES = (SIGNUP_OPEN, SIGNUP_CLOSED)

#: The values of `PRINTJOB_LOG_FORMAT`.
LOG_FORMATS = ("text", "json")

#: File names inside the data directory.
DATABASE_FILE = "printjob.sqlite3"
BLOBS_DIR = "files"
#: Where uploads and results are kept (`PRINTJOB_BLOBS`): files in the data directory
#: (a shared volume for several machines), or rows of the PostgreSQL database.
BLOBS_FILES = "files"
BLOBS_DATABASE = "database"
BLOB_STORES = (BLOBS_FILES, BLOBS_DATABASE)

_DEFAULT_POLICY = Policy()
#: No numeric setting may exceed this (about 31 years in seconds).
_MAXIMUM = 1_000_000_000
N = TypeVar("N", int, float)


class SettingsError(ValueError):
    """A setting has a value printjob cannot use; the message names the variable."""


def _default_workers() -> int:
    return os.cpu_count() or 1


@attrs.frozen
class Settings:
    """Everything the operator can set. Build it with `Settings.from_env()`."""

    data_dir: Path = attrs.field(factory=lambda: Path("var").absolute())
    #: Public base address for `Location` and `result.url`; None: derived from host and port.
    base_url: str | None = None
    #: Base of every Problem `type` (`<docs_url>#error-<code>`). None: the service's own
    #: errors page, at the address each request came to (`from_env` fills in
    #: `<PRINTJOB_BASE_URL>/docs/errors` when only that is set).
    docs_url: str | None = None
    service_name: str = "printjob"
    result_ttl_seconds: int = _DEFAULT_POLICY.result_ttl_seconds
    idempotency_ttl_seconds: int = _DEFAULT_POLICY.idempotency_ttl_seconds
    submissions_per_minute: int = _DEFAULT_POLICY.submissions_per_minute
    reads_per_minute: int = _DEFAULT_POLICY.reads_per_minute
    wrong_keys_per_minute: int = _DEFAULT_POLICY.wrong_keys_per_minute
    #: Default of `serve --workers`: background job runners per server.
    workers: int = attrs.field(factory=_default_workers)
    #: Addresses or networks whose `X-Forwarded-For` is believed (design decision 7).
    trusted_proxies: tuple[str, ...] = ()
    max_queue_depth: int = _DEFAULT_POLICY.max_queue_depth
    lease_seconds: int = _DEFAULT_POLICY.lease_seconds
    job_time_budget_seconds: int = _DEFAULT_POLICY.job_time_budget_seconds
    #: How long a write waits for the database lock before answering 503 server_busy.
    busy_timeout_seconds: float = 5.0
    #: `postgresql://...`: jobs, accounts and the queue in PostgreSQL (shared by processes on
    #: several machines); None: the embedded SQLite file in the data directory.
    database_url: str | None = None
    #: Most PostgreSQL connections one process holds at once.
    database_pool_size: int = 10
    #: `files` (under the data directory) or `database` (PostgreSQL only): where uploads
    #: and results are kept.
    blobs: str = BLOBS_FILES
    #: The bearer token `/metrics` requires; None: `/metrics` answers 404. Kept out of
    #: the repr so that a logged or printed settings value never shows it.
    metrics_token: str | None = attrs.field(default=None, repr=False)
    #: `text` (one line per record) or `json` (one JSON object per line).
    log_format: str = "text"
    #: Address-space cap of each worker process in MiB (0: none). A job that reaches it
    #: fails `processing_failed`; the worker lives on. 2 GiB fits the largest images with
    #: room to spare and keeps a handful of workers well inside a 24 GB machine.
    worker_memory_mb: int = 2048
    #: `open`: anyone may sign up on the website; `closed`: only people the operator
    #: invites (`printjob accounts invite`).
    signup: str = SIGNUP_OPEN
    #: Website sign-ups allowed per client network within a sliding day (0: no limit),
    #: so that one visitor cannot collect free daily quotas; invites are not counted.
    signups_per_day: int = 5

    @property
    def signup_open(self) -> bool:
        return self.signup == SIGNUP_OPEN

    #: Seconds a connection has for its request line and headers.
    header_timeout_seconds: float = 10.0
    #: A request body must bring `body_min_bytes` every `body_window_seconds`, or the
    #: connection is closed (and the upload still counts as a submission).
    body_window_seconds: float = 10.0
    body_min_bytes: int = 64 * 1024
    #: Seconds a kept-alive connection may stay idle between requests.
    keepalive_timeout_seconds: float = 5.0
    #: Idle kept-alive connections per API process; beyond it the longest idle is closed.
    keepalive_max: int = 1000
    #: Seconds an answer may wait for a client that reads none of it (unread downloads).
    write_timeout_seconds: float = 30.0

    @property
    def database_path(self) -> Path:
        return self.data_dir / DATABASE_FILE

    @property
    def blobs_dir(self) -> Path:
        return self.data_dir / BLOBS_DIR

    def base_url_for(self, host: str, port: int) -> str:
        """The public base address: `PRINTJOB_BASE_URL`, or `http://HOST:PORT`."""
        if self.base_url is not None:
            return self.base_url
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{port}"

    def policy(self) -> Policy:
        """The core's limits, with the operator's values."""
        return attrs.evolve(
            _DEFAULT_POLICY,
            submissions_per_minute=self.submissions_per_minute,
            reads_per_minute=self.reads_per_minute,
            wrong_keys_per_minute=self.wrong_keys_per_minute,
            idempotency_ttl_seconds=self.idempotency_ttl_seconds,
            result_ttl_seconds=self.result_ttl_seconds,
            lease_seconds=self.lease_seconds,
            job_time_budget_seconds=self.job_time_budget_seconds,
            max_queue_depth=self.max_queue_depth,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the settings; `SettingsError` names the first variable with a bad value."""
        env = dict(os.environ if environ is None else environ)
        settings_file = env.get(SETTINGS_FILE, "").strip()
        if settings_file:
            file_values = read_settings_file(Path(settings_file))
            env = {**file_values, **env}
        return _build(cls, env)


def read_settings_file(path: Path) -> dict[str, str]:
    """`KEY=VALUE` lines; blank lines and `#` comments skipped, quotes around values removed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"{SETTINGS_FILE}: cannot read {path}: {exc.strerror or exc}") from None
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise SettingsError(f"{path} line {number}: expected KEY=VALUE")
        if name not in KNOWN_VARIABLES:
            raise SettingsError(f"{path} line {number}: unknown setting {name}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[name] = value
    return values


def _build(cls: type[Settings], env: Mapping[str, str]) -> Settings:
    def text(name: str) -> str | None:
        value = env.get(name)
        if value is None or value.strip() == "":
            return None
        return value.strip()

    database_url = text(DATABASE_URL)
    if database_url is not None and (
        not database_url.startswith(("postgresql://", "postgres://"))
        or any(c.isspace() for c in database_url)
    ):
        # The value may hold a password: never echo it.
        raise SettingsError(
            f"{DATABASE_URL} must be a postgresql:// address (postgresql://USER:PASSWORD@HOST:"
            f"PORT/DATABASE), or unset to use the embedded database in {DATA_DIR}"
        )

    blobs = _blobs(text(BLOBS), database_url)

    def number(name: str, default: N, minimum: N, kind: Callable[[str], N] = int) -> N:
        value = text(name)
        if value is None:
            return default
        try:
            parsed = kind(value)
        except ValueError:
            parsed = None
        what = "a whole number" if kind is int else "a number"
        if parsed is None or parsed != parsed or not minimum <= parsed <= _MAXIMUM:
            raise SettingsError(
                f"{name} must be {what} from {minimum} to {_MAXIMUM}, not {value!r}"
            )
        return parsed

    data_dir = Path(text(DATA_DIR) or "var").expanduser().absolute()
    base_url = text(BASE_URL)
    if base_url is not None:
        base_url = _url(BASE_URL, base_url).rstrip("/")
    docs_url = text(DOCS_URL)
    if docs_url is not None:
        docs_url = _url(DOCS_URL, docs_url)
    elif base_url is not None:
        docs_url = base_url + DOCS_ERRORS_PATH
    service_name = text(SERVICE_NAME) or "printjob"
    if any(c in service_name for c in '"\\') or not service_name.isprintable():
        raise SettingsError(f"{SERVICE_NAME} may not contain quotes, backslashes or controls")
    metrics_token = text(METRICS_TOKEN)
    if metrics_token is not None and (
        len(metrics_token) < 16 or not metrics_token.isprintable() or " " in metrics_token
    ):
        # The value is a secret: never echo it.
        raise SettingsError(
            f"{METRICS_TOKEN} must be at least 16 printable characters without spaces"
        )
    log_format = (text(LOG_FORMAT) or "text").lower()
    if log_format not in LOG_FORMATS:
        raise SettingsError(f"{LOG_FORMAT} must be text or json, not {log_format!r}")
    signup = (text(SIGNUP) or SIGNUP_OPEN).lower()
    if signup not in SIGNUP_CHOICES:
        raise SettingsError(f"{SIGNUP} must be open or closed, not {signup!r}")
    defaults = cls()
    return cls(
        data_dir=data_dir,
        base_url=base_url,
        docs_url=docs_url,
        service_name=service_name,
        result_ttl_seconds=number(RESULT_TTL, defaults.result_ttl_seconds, 1),
        idempotency_ttl_seconds=number(IDEMPOTENCY_TTL, defaults.idempotency_ttl_seconds, 1),
        submissions_per_minute=number(SUBMISSIONS_PER_MINUTE, defaults.submissions_per_minute, 1),
        reads_per_minute=number(READS_PER_MINUTE, defaults.reads_per_minute, 1),
        wrong_keys_per_minute=number(WRONG_KEYS_PER_MINUTE, defaults.wrong_keys_per_minute, 1),
        workers=number(WORKERS, defaults.workers, 0),
        trusted_proxies=_networks(text(TRUSTED_PROXIES)),
        max_queue_depth=number(MAX_QUEUE_DEPTH, defaults.max_queue_depth, 1),
        lease_seconds=number(LEASE_SECONDS, defaults.lease_seconds, 1),
        job_time_budget_seconds=number(JOB_TIME_BUDGET, defaults.job_time_budget_seconds, 1),
        busy_timeout_seconds=number(BUSY_TIMEOUT, defaults.busy_timeout_seconds, 0.0, float),
        database_url=database_url,
        database_pool_size=number(DATABASE_POOL_SIZE, defaults.database_pool_size, 1),
        blobs=blobs,
        metrics_token=metrics_token,
        log_format=log_format,
        worker_memory_mb=number(WORKER_MEMORY_MB, defaults.worker_memory_mb, 0),
        signup=signup,
        signups_per_day=number(SIGNUPS_PER_DAY, defaults.signups_per_day, 0),
        header_timeout_seconds=number(HEADER_TIMEOUT, defaults.header_timeout_seconds, 0.1, float),
        body_window_seconds=number(BODY_WINDOW, defaults.body_window_seconds, 0.1, float),
        body_min_bytes=number(BODY_MIN_BYTES, defaults.body_min_bytes, 1),
        keepalive_timeout_seconds=number(
            KEEPALIVE_TIMEOUT, defaults.keepalive_timeout_seconds, 0.1, float
        ),
        keepalive_max=number(KEEPALIVE_MAX, defaults.keepalive_max, 1),
        write_timeout_seconds=number(WRITE_TIMEOUT, defaults.write_timeout_seconds, 0.1, float),
    )


def _blobs(value: str | None, database_url: str | None) -> str:
    """`PRINTJOB_BLOBS`: `files` (the default) or `database`, which needs PostgreSQL."""
    if value is None:
        return BLOBS_FILES
    if value not in BLOB_STORES:
        raise SettingsError(f"{BLOBS} must be files or database, not {value!r}")
    if value == BLOBS_DATABASE and database_url is None:
        raise SettingsError(
            f"{BLOBS}=database keeps uploads and results in PostgreSQL and needs "
            f"{DATABASE_URL}; set it, or set {BLOBS}=files"
        )
    return value


def _url(name: str, value: str) -> str:
    if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
        raise SettingsError(f"{name} must be an http:// or https:// address, not {value!r}")
    return value


def _networks(value: str | None) -> tuple[str, ...]:
    """`PRINTJOB_TRUSTED_PROXIES`: comma-separated addresses or networks (CIDR)."""
    if value is None:
        return ()
    networks: list[str] = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise SettingsError(
                f"{TRUSTED_PROXIES} must list IP addresses or networks separated by commas; "
                f"{item!r} is neither"
            ) from None
    return tuple(networks)


__all__ = [
    "BLOBS_DATABASE",
    "BLOBS_FILES",
    "BLOB_STORES",
    "DOCS_ERRORS_PATH",
    "KNOWN_VARIABLES",
    "Settings",
    "SettingsError",
    "read_settings_file",
]
