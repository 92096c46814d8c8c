"""The ports: what the core needs from the world, as `typing.Protocol`s.

Adapters implement them (SQLite or PostgreSQL storage, the filesystem blob store, the
tracing engine); `printjob_core.fakes` has an in-memory fake of each for unit tests.
Nothing here assumes a particular database: a unit of work is "one transaction that
either commits whole or changes nothing", and `jobs.next_queued` is where a database
that can skip locked rows does so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, datetime
from types import TracebackType
from typing import Protocol, Self

import attrs

from printjob_core.model import (
    Account,
    ApiKey,
    ConversionOutput,
    IdempotencyRecord,
    Invite,
    Job,
    JobChannel,
    JobOptions,
    LedgerEntry,
    Person,
    Phase,
    WebSession,
)
from printjob_core.readiness import QueueState


class Clock(Protocol):
    """Tells the time, always timezone-aware UTC."""

    def now(self) -> datetime: ...


class IdSource(Protocol):
    """Makes the random identifiers and secrets the service hands out."""

    def job_id(self) -> str:
        """`job_` + 32 lower-case hex digits (contract 2.1)."""
        ...

    def account_id(self) -> str: ...

    def key_id(self) -> str: ...

    def api_key(self) -> str:
        """A new secret key: 43 characters, starting with the fixed prefix (contract 5.2)."""
        ...

    def person_id(self) -> str: ...

    def secret_token(self) -> str:
        """32 random bytes, URL-safe base64 (43 characters): a session or invite token."""
        ...


#: An upload's bytes as the core is handed them: in memory, or a view of the spool file
#: the shell received them into (a `memoryview` of its map), so that a refused upload is
#: never copied and an accepted one is copied once, into the blob store. The core only
#: measures, hashes and hands them on.
ImageBytes = bytes | memoryview


class BlobReader(Protocol):
    """One stored blob, read a piece at a time: a download streams it and never holds it
    whole (forty unread downloads of a 42 MB result held 1.6 GB when it did)."""

    @property
    def size(self) -> int:
        """The blob's length in bytes."""
        ...

    def read(self, limit: int) -> bytes:
        """The next piece of at most `limit` bytes; `b""` at the end."""
        ...

    def close(self) -> None: ...


class BlobStore(Protocol):
    """Keeps uploaded images and result files by key; writes are atomic.

    Every process of one service (API and workers, on any machine) must see the same
    blobs: one directory, a shared volume, or the shared database.
    """

    def put(self, key: str, data: ImageBytes) -> None:
        """Store `data` under `key`, written from the buffer as it is (no copy of it first)."""
        ...

    def put_with_digest(self, key: str, data: ImageBytes) -> str:
        """`put`, returning the SHA-256 (hex) of `data`: a store may compute it while the
        write is made durable, rather than the caller reading a large upload once more
        before it (an upload with an Idempotency-Key needs its digest)."""
        ...

    def get(self, key: str) -> bytes:
        """The stored bytes; `KeyError` when there are none."""
        ...

    def open(self, key: str) -> BlobReader:
        """The stored blob to read piece by piece; `KeyError` when there is none."""
        ...

    def delete(self, key: str) -> None:
        """Remove the blob; removing a missing blob is not an error."""
        ...

    def exists(self, key: str) -> bool: ...

    def keys(self, prefix: str) -> Iterator[str]:
        """Every stored key starting with `prefix` (for sweeping orphans)."""
        ...

    def sweep_temp_files(self, older_than_seconds: float) -> int:
        """Delete what writers killed mid-write left, if older than `older_than_seconds`;
        the number deleted.

        A store that writes through temporary files (the filesystem) can be left with
        some by a crash; one whose writes are atomic by nature (a database row) has
        nothing to sweep and returns 0.
        """
        ...


@attrs.frozen
class RateDecision:
    """The outcome of counting one request against a per-minute limit."""

    allowed: bool
    #: Seconds until the current window ends (at least 1).
    retry_after: int


class RateLimiter(Protocol):
    """Counts requests per bucket per fixed one-minute window, shared by every process."""

    def hit(self, bucket: str, limit: int, now: datetime) -> RateDecision:
        """Count one request in `bucket`; allowed while the count is at most `limit`."""
        ...

    def count(self, bucket: str, now: datetime) -> int:
        """How many requests `bucket` has in the current window (without counting one)."""
        ...


class AccountRepository(Protocol):
    def add(self, account: Account) -> None: ...

    def get(self, account_id: str) -> Account | None: ...

    def save(self, account: Account) -> None: ...

    def list_all(self, *, disabled_only: bool = False) -> list[Account]:
        """Every account (or only the disabled ones), oldest first."""
        ...


class LedgerRepository(Protocol):
    """The credit ledger: written in the transaction that moves the credits."""

    def add(self, entry: LedgerEntry) -> None: ...

    def history(self, account_id: str) -> list[LedgerEntry]:
        """Every entry of the account, in the order written, each with its stored `id`."""
        ...


class KeyRepository(Protocol):
    def add(self, key: ApiKey) -> None: ...

    def get(self, key_id: str) -> ApiKey | None: ...

    def find_by_hash(self, key_hash: str) -> ApiKey | None: ...

    def list_for(self, account_id: str) -> list[ApiKey]:
        """Every key of the account, live and revoked, oldest first."""
        ...

    def save(self, key: ApiKey) -> None: ...

    def touch(self, key_id: str, at: datetime) -> None:
        """Set the key's `last_used_at` to `at` unless it is already as late; nothing else
        of the key changes (a revoke at the same moment stays)."""
        ...


class JobRepository(Protocol):
    def add(self, job: Job) -> None: ...

    def get(self, job_id: str) -> Job | None: ...

    def save(self, job: Job) -> None: ...

    def unfinished_for(self, account_id: str) -> list[Job]:
        """The account's queued and running jobs."""
        ...

    def count_unfinished(self, account_id: str, channel: JobChannel = JobChannel.API) -> int:
        """The account's queued and running jobs that came in by `channel`."""
        ...

    def recent_for(self, account_id: str, limit: int) -> list[Job]:
        """The account's newest `limit` jobs of both channels, newest first."""
        ...

    def next_queued(self) -> Job | None:
        """The next queued job in fair order, locked for this transaction (skipping rows
        others hold).

        Fair order, by account first: the account with the fewest running jobs, then the
        one served longest ago (its last job ended earliest; never: first), then the oldest
        job (the order jobs were added; a job queued again keeps its place). So accounts
        take turns: an account's queued job goes before the next job of an account that is
        running one or has just had one, and a slow or hostile account delays the others by
        at most one job's run.
        """
        ...

    def running_with_lease_before(self, moment: datetime) -> list[Job]:
        """Running jobs whose lease ended before `moment`: their worker is gone."""
        ...

    def results_expiring_before(self, moment: datetime) -> list[Job]:
        """Succeeded jobs that still keep a result file whose `expires_at` is before `moment`."""
        ...

    def count_queued(self) -> int: ...

    def queue_state(self, stale_before: datetime) -> QueueState:
        """Queued and running counts, the oldest queued job's submission time, and how
        many running jobs have a lease that ended before `stale_before`."""
        ...


class IdempotencyRepository(Protocol):
    def get(self, account_id: str, key: str) -> IdempotencyRecord | None: ...

    def put(self, record: IdempotencyRecord) -> None:
        """Store the record, replacing an expired one with the same account and key."""
        ...

    def purge_expired(self, now: datetime) -> int: ...


class PersonRepository(Protocol):
    """The people who sign in to the website; an email belongs to one person at most."""

    def add(self, person: Person) -> bool:
        """Store a new person; False (nothing stored) when the email is taken already."""
        ...

    def get(self, person_id: str) -> Person | None: ...

    def find_by_email(self, email: str) -> Person | None:
        """The person with this email (compared lower-cased)."""
        ...

    def for_account(self, account_id: str) -> list[Person]:
        """The account's people, oldest first."""
        ...

    def save(self, person: Person) -> None: ...


class SessionRepository(Protocol):
    """The website's sessions, by the SHA-256 of their token."""

    def add(self, session: WebSession) -> None: ...

    def get(self, token_hash: str) -> WebSession | None: ...

    def touch(self, token_hash: str, last_seen_at: datetime) -> None: ...

    def delete(self, token_hash: str) -> None:
        """End one session; ending a missing one is not an error."""
        ...

    def delete_for_person(self, person_id: str, *, keep: str | None = None) -> int:
        """End every session of the person but the one whose hash is `keep`; how many."""
        ...

    def delete_for_account(self, account_id: str) -> int:
        """End every session of every person of the account; how many."""
        ...

    def purge_expired(self, now: datetime, idle_before: datetime) -> int:
        """Delete sessions past their absolute expiry or last seen before `idle_before`."""
        ...


class InviteRepository(Protocol):
    """The operator's one-time invite links, by the SHA-256 of their token."""

    def add(self, invite: Invite) -> None: ...

    def get(self, token_hash: str) -> Invite | None: ...

    def use(self, token_hash: str, now: datetime) -> bool:
        """Mark the invite used if it is unused and unexpired at `now`; True only for the
        one call that did (two racing for one invite: one wins)."""
        ...


class DownloadRepository(Protocol):
    """Which website results an account has downloaded, for the daily quota."""

    def record(self, account_id: str, job_id: str, day: date, at: datetime) -> bool:
        """Count the job's result against `day`; False (nothing changed) when this job was
        counted already, on any day."""
        ...

    def counted(self, account_id: str, job_id: str) -> bool: ...

    def count_on(self, account_id: str, day: date) -> int:
        """How many distinct results the account downloaded first on `day`."""
        ...


class SignInFailureRepository(Protocol):
    """Failed sign-ins by bucket (a client network, an email), for the sign-in limit."""

    def add(self, bucket: str, at: datetime) -> None: ...

    def since(self, bucket: str, moment: datetime) -> list[datetime]:
        """When the bucket's failures after `moment` happened, oldest first."""
        ...

    def clear(self, bucket: str) -> None: ...

    def purge_before(self, moment: datetime) -> int: ...


class UnitOfWork(Protocol):
    """One transaction over every repository: commits whole or changes nothing.

    Entering it starts a transaction that takes the write lock at once (SQLite
    `BEGIN IMMEDIATE`), so two processes can never both spend one credit. Leaving it
    without `commit()` rolls back.
    """

    accounts: AccountRepository
    keys: KeyRepository
    jobs: JobRepository
    idempotency: IdempotencyRepository
    ledger: LedgerRepository
    people: PersonRepository
    sessions: SessionRepository
    invites: InviteRepository
    downloads: DownloadRepository
    sign_in_failures: SignInFailureRepository

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def commit(self) -> None: ...


UnitOfWorkFactory = Callable[[], UnitOfWork]

#: Called by the engine as it works: the phase it is in and a 0..100 percentage.
ProgressCallback = Callable[[Phase, int], None]
#: Asked by the engine between steps: true once the job was canceled.
CancelCheck = Callable[[], bool]


@attrs.frozen
class JobByKey:
    """What one read found for a poll: the key, its account and the job (None when the
    account has no such job)."""

    key: ApiKey
    account: Account
    job: Job | None = None


@attrs.frozen
class AccountByKey:
    """What one read found for `GET /v1/account`: the key, its account and how many of
    the account's jobs are unfinished."""

    key: ApiKey
    account: Account
    active_jobs: int


class ReadViews(Protocol):
    """The reads clients repeat most, each in one consistent read (a CQRS view).

    Polling is most of an API's traffic; a storage that can answer "this key's account
    and that job" in one statement does so here instead of one query per repository.
    `printjob_core.views.UnitOfWorkViews` answers them from any `reader`.
    """

    def job_by_key(self, key_hash: str, job_id: str) -> JobByKey | None:
        """The key with `key_hash` (live or not), its account, and the account's job
        `job_id`; None when no key has that hash."""
        ...

    def account_by_key(self, key_hash: str) -> AccountByKey | None:
        """The key with `key_hash`, its account and the account's unfinished job count."""
        ...


class PasswordHasher(Protocol):
    """Turns a password into a slow salted hash and checks one against it (argon2id in
    production; the fake is fast)."""

    def hash(self, password: str) -> str: ...

    def verify(self, password_hash: str, password: str) -> bool:
        """Whether `password` is the one hashed; False for a malformed hash, never raises."""
        ...


@attrs.frozen
class ImageInfo:
    """What an image's header says, read without decoding its pixels."""

    format: str
    width: int
    height: int


class ImageProbe(Protocol):
    """Reads an upload's header to learn its format and size before anything decodes it."""

    def probe(self, data: ImageBytes) -> ImageInfo:
        """Raise `UnsupportedImage` (or `ImageTooLarge` for a decompression bomb); reads
        `data` in place, only as far as the header goes."""
        ...


class Engine(Protocol):
    """Turns one image into one print file."""

    def convert(
        self,
        image: bytes,
        options: JobOptions,
        progress: ProgressCallback,
        cancelled: CancelCheck,
    ) -> ConversionOutput:
        """Raise `ConversionFailed` when no file can be made, `ConversionCancelled` on cancel."""
        ...
