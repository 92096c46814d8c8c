"""In-memory fakes of every port, for the core's unit tests.

They keep the ports' promises (a unit of work commits whole or not at all; a rate
window is one minute) with plain dicts, so the service layer can be tested without a
database. Production never uses them.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import itertools
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from types import TracebackType
from typing import Self

import attrs

from printjob_core.errors import UnsupportedImage
from printjob_core.keys import KEY_ALPHABET, KEY_LENGTH, KEY_PREFIX
from printjob_core.model import (
    Account,
    ApiKey,
    IdempotencyRecord,
    Invite,
    Job,
    JobChannel,
    JobStatus,
    LedgerEntry,
    Person,
    WebSession,
)
from printjob_core.ports import (
    AccountRepository,
    DownloadRepository,
    IdempotencyRepository,
    ImageBytes,
    ImageInfo,
    InviteRepository,
    JobRepository,
    KeyRepository,
    LedgerRepository,
    PersonRepository,
    RateDecision,
    SessionRepository,
    SignInFailureRepository,
)
from printjob_core.readiness import QueueState


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self.moment = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


class FakeIds:
    """Predictable ids and keys of the right shapes."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def _next(self) -> int:
        return next(self._counter)

    def job_id(self) -> str:
        return f"job_{self._next():032x}"

    def account_id(self) -> str:
        return f"acct_{self._next():024x}"

    def key_id(self) -> str:
        return f"key_{self._next():016x}"

    def api_key(self) -> str:
        n = self._next()
        body = []
        for _ in range(KEY_LENGTH - len(KEY_PREFIX)):
            n, digit = divmod(n, len(KEY_ALPHABET))
            body.append(KEY_ALPHABET[digit])
        return KEY_PREFIX + "".join(reversed(body))

    def person_id(self) -> str:
        return f"person_{self._next():024x}"

    def secret_token(self) -> str:
        # 43 URL-safe characters, like `secrets.token_urlsafe(32)`.
        return f"tok{self._next():040x}"


class FakePasswordHasher:
    """A salted SHA-256 standing in for argon2id: the same promises, none of the cost."""

    def __init__(self) -> None:
        self._salts = itertools.count(1)

    def hash(self, password: str) -> str:
        salt = f"{next(self._salts):08x}"
        return f"fake${salt}${self._digest(salt, password)}"

    def verify(self, password_hash: str, password: str) -> bool:
        parts = password_hash.split("$")
        if len(parts) != 3 or parts[0] != "fake":
            return False
        return hmac.compare_digest(parts[2], self._digest(parts[1], password))

    @staticmethod
    def _digest(salt: str, password: str) -> str:
        return hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()


class FakeBlobReader:
    """A blob of `FakeBlobStore`, read piece by piece."""

    def __init__(self, data: bytes) -> None:
        self.size = len(data)
        self._data = data
        self._position = 0

    def read(self, limit: int) -> bytes:
        piece = self._data[self._position : self._position + limit]
        self._position += len(piece)
        return piece

    def close(self) -> None:
        self._data = b""


class FakeBlobStore:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, key: str, data: ImageBytes) -> None:
        self.blobs[key] = bytes(data)

    def put_with_digest(self, key: str, data: ImageBytes) -> str:
        self.put(key, data)
        return hashlib.sha256(data).hexdigest()

    def get(self, key: str) -> bytes:
        return self.blobs[key]

    def open(self, key: str) -> FakeBlobReader:
        return FakeBlobReader(self.blobs[key])

    def delete(self, key: str) -> None:
        self.blobs.pop(key, None)

    def exists(self, key: str) -> bool:
        return key in self.blobs

    def keys(self, prefix: str) -> Iterator[str]:
        return iter(sorted(k for k in self.blobs if k.startswith(prefix)))

    def sweep_temp_files(self, older_than_seconds: float) -> int:
        return 0  # a dict entry is never half-written


class FakeRateLimiter:
    """Fixed one-minute windows, aligned to the minute like the real adapters."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], int] = {}

    @staticmethod
    def _window(now: datetime) -> tuple[int, int]:
        seconds = int(now.timestamp())
        start = seconds - seconds % 60
        return start, max(1, start + 60 - seconds)

    def hit(self, bucket: str, limit: int, now: datetime) -> RateDecision:
        start, retry_after = self._window(now)
        count = self.counts.get((bucket, start), 0) + 1
        self.counts[(bucket, start)] = count
        return RateDecision(allowed=count <= limit, retry_after=retry_after)

    def count(self, bucket: str, now: datetime) -> int:
        start, _ = self._window(now)
        return self.counts.get((bucket, start), 0)


class FakeImageProbe:
    """Reads a tiny made-up header: b"IMG <format> <width> <height>"."""

    def probe(self, data: ImageBytes) -> ImageInfo:
        parts = bytes(data[:64]).split(b" ", 4)
        if len(parts) < 4 or parts[0] != b"IMG":
            raise UnsupportedImage("not an openable PNG, JPEG, GIF, BMP or WebP image")
        return ImageInfo(parts[1].decode(), int(parts[2]), int(parts[3]))


def fake_image(width: int = 100, height: int = 100, fmt: str = "PNG", salt: str = "") -> bytes:
    """An upload the fake probe understands; `salt` makes otherwise equal images differ."""
    return f"IMG {fmt} {width} {height} {salt}".encode()


@attrs.define
class _State:
    accounts: dict[str, Account] = attrs.Factory(dict)
    keys: dict[str, ApiKey] = attrs.Factory(dict)
    jobs: dict[str, Job] = attrs.Factory(dict)
    idempotency: dict[tuple[str, str], IdempotencyRecord] = attrs.Factory(dict)
    job_order: list[str] = attrs.Factory(list)
    ledger: list[LedgerEntry] = attrs.Factory(list)
    people: dict[str, Person] = attrs.Factory(dict)
    sessions: dict[str, WebSession] = attrs.Factory(dict)
    invites: dict[str, Invite] = attrs.Factory(dict)
    #: (account_id, job_id) -> the UTC day it was counted against.
    downloads: dict[tuple[str, str], date] = attrs.Factory(dict)
    sign_in_failures: list[tuple[str, datetime]] = attrs.Factory(list)


class _Accounts:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, account: Account) -> None:
        self.state.accounts[account.id] = account

    def get(self, account_id: str) -> Account | None:
        return self.state.accounts.get(account_id)

    def save(self, account: Account) -> None:
        if account.id not in self.state.accounts:
            raise KeyError(f"no account {account.id}")
        self.state.accounts[account.id] = account

    def list_all(self, *, disabled_only: bool = False) -> list[Account]:
        # Oldest first, like the databases; accounts made at one moment in id order.
        chosen = [a for a in self.state.accounts.values() if a.disabled or not disabled_only]
        return sorted(chosen, key=lambda a: (a.created_at, a.id))


class _Ledger:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, entry: LedgerEntry) -> None:
        # Ids increase in the order entries are written, like the databases' sequences.
        self.state.ledger.append(attrs.evolve(entry, id=len(self.state.ledger) + 1))

    def history(self, account_id: str) -> list[LedgerEntry]:
        return [entry for entry in self.state.ledger if entry.account_id == account_id]


class _Keys:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, key: ApiKey) -> None:
        self.state.keys[key.id] = key

    def get(self, key_id: str) -> ApiKey | None:
        return self.state.keys.get(key_id)

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        return next((k for k in self.state.keys.values() if k.key_hash == key_hash), None)

    def list_for(self, account_id: str) -> list[ApiKey]:
        # Oldest first, like the databases; keys made at one moment in insertion order.
        mine = [k for k in self.state.keys.values() if k.account_id == account_id]
        return sorted(mine, key=lambda k: k.created_at)

    def save(self, key: ApiKey) -> None:
        if key.id not in self.state.keys:
            raise KeyError(f"no key {key.id}")
        self.state.keys[key.id] = key

    def touch(self, key_id: str, at: datetime) -> None:
        key = self.state.keys.get(key_id)
        if key is not None and (key.last_used_at is None or key.last_used_at < at):
            self.state.keys[key_id] = attrs.evolve(key, last_used_at=at)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class _Jobs:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, job: Job) -> None:
        self.state.jobs[job.id] = job
        self.state.job_order.append(job.id)

    def get(self, job_id: str) -> Job | None:
        return self.state.jobs.get(job_id)

    def save(self, job: Job) -> None:
        if job.id not in self.state.jobs:
            raise KeyError(f"no job {job.id}")
        self.state.jobs[job.id] = job

    def _all(self) -> list[Job]:
        return [self.state.jobs[i] for i in self.state.job_order]

    def unfinished_for(self, account_id: str) -> list[Job]:
        return [j for j in self._all() if j.account_id == account_id and not j.is_final]

    def count_unfinished(self, account_id: str, channel: JobChannel = JobChannel.API) -> int:
        return sum(1 for j in self.unfinished_for(account_id) if j.channel is channel)

    def recent_for(self, account_id: str, limit: int) -> list[Job]:
        mine = [(seq, j) for seq, j in enumerate(self._all()) if j.account_id == account_id]
        mine.sort(key=lambda entry: (entry[1].created_at, entry[0]), reverse=True)
        return [j for _, j in mine[:limit]]

    def next_queued(self) -> Job | None:
        jobs = self._all()
        running = Counter(j.account_id for j in jobs if j.status is JobStatus.RUNNING)
        served: dict[str, datetime] = {}
        for j in jobs:
            if j.finished_at is not None:
                served[j.account_id] = max(j.finished_at, served.get(j.account_id, j.finished_at))

        def rank(entry: tuple[int, Job]) -> tuple[int, bool, datetime, int]:
            seq, job = entry
            last = served.get(job.account_id)
            return (running[job.account_id], last is not None, last or _EPOCH, seq)

        queued = [(seq, j) for seq, j in enumerate(jobs) if j.status is JobStatus.QUEUED]
        return min(queued, key=rank)[1] if queued else None

    def running_with_lease_before(self, moment: datetime) -> list[Job]:
        return [
            j
            for j in self._all()
            if j.status is JobStatus.RUNNING
            and j.lease_expires_at is not None
            and j.lease_expires_at < moment
        ]

    def results_expiring_before(self, moment: datetime) -> list[Job]:
        expiring = [
            j
            for j in self._all()
            if j.result is not None and j.result_key is not None and j.result.expires_at < moment
        ]
        # Soonest first, like the databases (ties in insertion order).
        return sorted(expiring, key=lambda j: j.result.expires_at if j.result else moment)

    def count_queued(self) -> int:
        return sum(1 for j in self._all() if j.status is JobStatus.QUEUED)

    def queue_state(self, stale_before: datetime) -> QueueState:
        queued = [j for j in self._all() if j.status is JobStatus.QUEUED]
        running = [j for j in self._all() if j.status is JobStatus.RUNNING]
        return QueueState(
            queued=len(queued),
            running=len(running),
            oldest_queued_at=min((j.created_at for j in queued), default=None),
            stale_running=len(self.running_with_lease_before(stale_before)),
        )


class _Idempotency:
    def __init__(self, state: _State) -> None:
        self.state = state

    def get(self, account_id: str, key: str) -> IdempotencyRecord | None:
        return self.state.idempotency.get((account_id, key))

    def put(self, record: IdempotencyRecord) -> None:
        self.state.idempotency[(record.account_id, record.key)] = record

    def purge_expired(self, now: datetime) -> int:
        old = [k for k, r in self.state.idempotency.items() if r.expires_at <= now]
        for k in old:
            del self.state.idempotency[k]
        return len(old)


class _People:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, person: Person) -> bool:
        if self.find_by_email(person.email) is not None:
            return False
        self.state.people[person.id] = person
        return True

    def get(self, person_id: str) -> Person | None:
        return self.state.people.get(person_id)

    def find_by_email(self, email: str) -> Person | None:
        wanted = email.lower()
        return next((p for p in self.state.people.values() if p.email.lower() == wanted), None)

    def for_account(self, account_id: str) -> list[Person]:
        mine = [p for p in self.state.people.values() if p.account_id == account_id]
        return sorted(mine, key=lambda p: (p.created_at, p.id))

    def save(self, person: Person) -> None:
        if person.id not in self.state.people:
            raise KeyError(f"no person {person.id}")
        self.state.people[person.id] = person


class _Sessions:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, session: WebSession) -> None:
        self.state.sessions[session.token_hash] = session

    def get(self, token_hash: str) -> WebSession | None:
        return self.state.sessions.get(token_hash)

    def touch(self, token_hash: str, last_seen_at: datetime) -> None:
        session = self.state.sessions.get(token_hash)
        if session is not None and session.last_seen_at < last_seen_at:
            self.state.sessions[token_hash] = attrs.evolve(session, last_seen_at=last_seen_at)

    def delete(self, token_hash: str) -> None:
        self.state.sessions.pop(token_hash, None)

    def _delete_where(self, doomed: list[str]) -> int:
        for token_hash in doomed:
            del self.state.sessions[token_hash]
        return len(doomed)

    def delete_for_person(self, person_id: str, *, keep: str | None = None) -> int:
        return self._delete_where(
            [
                h
                for h, session in self.state.sessions.items()
                if session.person_id == person_id and h != keep
            ]
        )

    def delete_for_account(self, account_id: str) -> int:
        return self._delete_where(
            [h for h, session in self.state.sessions.items() if session.account_id == account_id]
        )

    def purge_expired(self, now: datetime, idle_before: datetime) -> int:
        return self._delete_where(
            [
                h
                for h, session in self.state.sessions.items()
                if session.expires_at <= now or session.last_seen_at < idle_before
            ]
        )


class _Invites:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, invite: Invite) -> None:
        self.state.invites[invite.token_hash] = invite

    def get(self, token_hash: str) -> Invite | None:
        return self.state.invites.get(token_hash)

    def use(self, token_hash: str, now: datetime) -> bool:
        invite = self.state.invites.get(token_hash)
        if invite is None or invite.used_at is not None or invite.expires_at <= now:
            return False
        self.state.invites[token_hash] = attrs.evolve(invite, used_at=now)
        return True


class _Downloads:
    def __init__(self, state: _State) -> None:
        self.state = state

    def record(self, account_id: str, job_id: str, day: date, at: datetime) -> bool:
        if (account_id, job_id) in self.state.downloads:
            return False
        self.state.downloads[(account_id, job_id)] = day
        return True

    def counted(self, account_id: str, job_id: str) -> bool:
        return (account_id, job_id) in self.state.downloads

    def count_on(self, account_id: str, day: date) -> int:
        return sum(
            1
            for (owner, _), counted in self.state.downloads.items()
            if owner == account_id and counted == day
        )


class _SignInFailures:
    def __init__(self, state: _State) -> None:
        self.state = state

    def add(self, bucket: str, at: datetime) -> None:
        self.state.sign_in_failures.append((bucket, at))

    def since(self, bucket: str, moment: datetime) -> list[datetime]:
        return sorted(at for b, at in self.state.sign_in_failures if b == bucket and at > moment)

    def clear(self, bucket: str) -> None:
        self.state.sign_in_failures = [f for f in self.state.sign_in_failures if f[0] != bucket]

    def purge_before(self, moment: datetime) -> int:
        kept = [f for f in self.state.sign_in_failures if f[1] >= moment]
        purged = len(self.state.sign_in_failures) - len(kept)
        self.state.sign_in_failures = kept
        return purged


class FakeStore:
    """The shared "database" several fake units of work commit into."""

    def __init__(self) -> None:
        self.state = _State()
        self.lock = threading.RLock()
        self.commits = 0

    def unit_of_work(self) -> FakeUnitOfWork:
        return FakeUnitOfWork(self)

    def reader(self) -> FakeUnitOfWork:
        """A read-only snapshot that never waits for a writer, like the databases' readers."""
        return FakeUnitOfWork(self, read_only=True)


class FakeUnitOfWork:
    """Works on a private copy and publishes it on commit, like a serialisable transaction.

    A reader (`read_only=True`) takes the last committed state without the writers' lock
    and its `commit()` publishes nothing.
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

    def __init__(self, store: FakeStore, *, read_only: bool = False) -> None:
        self.store = store
        self.read_only = read_only

    def __enter__(self) -> Self:
        if not self.read_only:
            self.store.lock.acquire()
        # One committed state, read once: a reader holds no lock while writers commit.
        state = self.store.state
        self._working = copy.copy(state)
        self._working.accounts = dict(state.accounts)
        self._working.keys = dict(state.keys)
        self._working.jobs = dict(state.jobs)
        self._working.idempotency = dict(state.idempotency)
        self._working.job_order = list(state.job_order)
        self._working.ledger = list(state.ledger)
        self._working.people = dict(state.people)
        self._working.sessions = dict(state.sessions)
        self._working.invites = dict(state.invites)
        self._working.downloads = dict(state.downloads)
        self._working.sign_in_failures = list(state.sign_in_failures)
        self.accounts = _Accounts(self._working)
        self.keys = _Keys(self._working)
        self.jobs = _Jobs(self._working)
        self.idempotency = _Idempotency(self._working)
        self.ledger = _Ledger(self._working)
        self.people = _People(self._working)
        self.sessions = _Sessions(self._working)
        self.invites = _Invites(self._working)
        self.downloads = _Downloads(self._working)
        self.sign_in_failures = _SignInFailures(self._working)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self.read_only:
            self.store.lock.release()

    def commit(self) -> None:
        if self.read_only:
            return
        self.store.state = self._working
        self.store.commits += 1
