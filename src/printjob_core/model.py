"""The resources of contract section 2 as immutable values.

Every rule in the core takes these values and returns new ones; nothing here does I/O.
"""

from __future__ import annotations

import enum
from datetime import datetime

import attrs


class OutputFormat(enum.StrEnum):
    """The four print files a job can produce (contract 4.1 `format`)."""

    SVG = "svg"
    PDF = "pdf"
    EPS = "eps"
    PNG = "png"

    @property
    def media_type(self) -> str:
        return _MEDIA_TYPES[self]


_MEDIA_TYPES = {
    OutputFormat.SVG: "image/svg+xml",
    OutputFormat.PDF: "application/pdf",
    OutputFormat.EPS: "application/postscript",
    OutputFormat.PNG: "image/png",
}


class Background(enum.StrEnum):
    """Whether the background colour is kept or left out (contract 4.1 `background`)."""

    KEEP = "keep"
    REMOVE = "remove"


class JobStatus(enum.StrEnum):
    """Contract section 3: two unfinished and three final statuses."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"

    @property
    def is_final(self) -> bool:
        return self in (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELED)


class Phase(enum.StrEnum):
    """Progress phases, in the order a job passes them (design decision 14)."""

    QUEUED = "queued"
    ANALYSING = "analysing"
    BUILDING = "building"
    FINISHING = "finishing"


class Plan(enum.StrEnum):
    """What an account pays for on the website: `free` has a daily download quota,
    `monthly` has none. Set by the operator; the API's credits do not depend on it."""

    FREE = "free"
    MONTHLY = "monthly"


class JobChannel(enum.StrEnum):
    """Which door a job came in by. Website jobs move no credits and are invisible under
    `/v1`; everything else about them (queue, workers, retention, cancel) is shared."""

    API = "api"
    WEBSITE = "website"


class JobErrorCode(enum.StrEnum):
    """Why a failed job failed (contract 2.4)."""

    PROCESSING_FAILED = "processing_failed"
    INTERRUPTED = "interrupted"


#: dpi a file states when the client sent none (contract 4.1).
DEFAULT_DPI = 300
#: The print-on-demand canvas of a `png` with size `original` (contract 4.1).
PRINT_CANVAS = (4500, 5400)


@attrs.frozen
class Size:
    """An explicit canvas `<width>x<height>` in pixels; `None` in JobOptions means `original`."""

    width: int
    height: int

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


@attrs.frozen
class JobOptions:
    """The normalised options of one submission (contract 2.2).

    `dpi` is `None` when the client did not send it (it is then not echoed, design 1);
    `effective_dpi` is what the file states.
    """

    format: OutputFormat
    size: Size | None = None
    colors: int | None = None
    background: Background = Background.KEEP
    dpi: int | None = None

    @property
    def effective_dpi(self) -> int:
        return self.dpi if self.dpi is not None else DEFAULT_DPI

    @property
    def size_text(self) -> str:
        return "original" if self.size is None else str(self.size)


@attrs.frozen
class JobResult:
    """What a succeeded job produced (contract 2.3, without the URL, which is the shell's)."""

    format: OutputFormat
    width: int
    height: int
    bytes: int
    colors: int
    background_removed: bool
    expires_at: datetime


@attrs.frozen
class JobError:
    """Why a job failed (contract 2.4)."""

    code: JobErrorCode
    detail: str


@attrs.frozen
class Job:
    """One conversion job and everything the service keeps about it.

    The contract fields are those of section 2.1; `account_id`, `attempts`,
    `image_key`, `result_key`, `lease_expires_at` and `request_id` are internal bookkeeping.
    """

    id: str
    account_id: str
    status: JobStatus
    phase: Phase | None
    progress: int | None
    created_at: datetime
    finished_at: datetime | None
    options: JobOptions
    credits_charged: int = 0
    result: JobResult | None = None
    error: JobError | None = None
    #: How many times a worker has started this job (design decision 9).
    attempts: int = 0
    #: Blob key of the uploaded image while the job is unfinished; None once deleted.
    image_key: str | None = None
    #: Blob key of the result file while it is kept.
    result_key: str | None = None
    #: A running job whose lease has passed belongs to a dead worker.
    lease_expires_at: datetime | None = None
    #: The `X-Request-Id` of the submitting request, for the worker's log lines; never
    #: shown to clients.
    request_id: str | None = None
    #: The API's jobs hold and charge credits; the website's do not.
    channel: JobChannel = JobChannel.API

    @property
    def is_final(self) -> bool:
        return self.status.is_final


@attrs.frozen
class Account:
    """An API customer: its credits and limits (contract 2.5)."""

    id: str
    created_at: datetime
    credits_balance: int = 0
    credits_held: int = 0
    active_jobs_max: int = 3
    disabled: bool = False
    #: Who the account is, for the operator only (never shown to API clients).
    name: str | None = None
    #: Lower-cased; for the operator only.
    email: str | None = None
    #: The website's plan (the daily download quota); the operator sets it.
    plan: Plan = Plan.FREE

    @property
    def credits_available(self) -> int:
        return self.credits_balance - self.credits_held


class LedgerKind(enum.StrEnum):
    """What one credit ledger entry records."""

    #: The operator added credits (or the account was created with some).
    ADD = "add"
    #: The operator took credits back (`credits remove`, with a reason).
    REMOVE = "remove"
    #: A job was accepted: one job's cost set aside.
    HOLD = "hold"
    #: A job succeeded: its hold became a charge, the balance went down.
    CHARGE = "charge"
    #: A job failed, was canceled or interrupted: its hold was given back.
    RELEASE = "release"


@attrs.frozen
class LedgerEntry:
    """One credit movement, written in the same transaction as the movement itself.

    `balance_after` and `held_after` are the account's figures once the entry applied, so
    the ledger replays to the account: the sum of adds, removes and charges is the
    balance, and holds minus charges and releases is what is held.
    """

    account_id: str
    at: datetime
    kind: LedgerKind
    amount: int
    balance_after: int
    held_after: int
    job_id: str | None = None
    reason: str | None = None
    #: Given by the storage as the entry is written (0 before): increasing, so entries
    #: list in the order they were written, even within one moment.
    id: int = 0


@attrs.frozen
class ApiKey:
    """A stored API key: only its hash is kept (contract 5.2)."""

    id: str
    account_id: str
    key_hash: str
    #: The first characters of the key, so an operator can tell keys apart.
    hint: str
    created_at: datetime
    revoked_at: datetime | None = None
    #: What the person who made it on the website called it ("" for the operator's keys).
    label: str = ""
    #: When the key last authenticated a request, to the minute (None: never).
    last_used_at: datetime | None = None
    #: The key's last 4 characters, so its owner can tell keys apart on the account page
    #: ("" for keys made before the website).
    last_chars: str = ""

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None


@attrs.frozen
class Person:
    """Someone who signs in to the website; belongs to one account (the one that holds
    the API keys and credits). Only the password's hash is kept."""

    id: str
    account_id: str
    #: Lower-cased and trimmed; unique among people.
    email: str
    password_hash: str
    created_at: datetime
    password_changed_at: datetime


@attrs.frozen
class WebSession:
    """A signed-in browser. The cookie carries a random token; only its SHA-256 is kept."""

    token_hash: str
    person_id: str
    account_id: str
    created_at: datetime
    #: Written at most once a minute (the idle expiry counts from it).
    last_seen_at: datetime
    #: The absolute expiry: no session lives longer, however active.
    expires_at: datetime


@attrs.frozen
class Invite:
    """A one-time link the operator hands out so someone can set a password for an
    account made with the CLI. Only the token's SHA-256 is kept."""

    token_hash: str
    account_id: str
    email: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None


@attrs.frozen
class IdempotencyRecord:
    """A remembered submission key (contract 4.1 rule 3): which job it made, from what."""

    account_id: str
    key: str
    fingerprint: str
    job_id: str
    created_at: datetime
    expires_at: datetime


@attrs.frozen
class ConversionOutput:
    """What the engine hands back for one job: the file and its facts (contract 2.3)."""

    data: bytes
    width: int
    height: int
    colors: int
    background_removed: bool
