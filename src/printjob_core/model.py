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

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None


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
