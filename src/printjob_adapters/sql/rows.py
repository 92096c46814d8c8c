"""Domain values <-> database rows, for every SQL database.

Both databases keep the same columns; they differ only in how a time is stored:
SQLite as fixed-width UTC text (so text order is time order), PostgreSQL as a
`timestamptz`. A `RowMapper` is built with the matching `TimeCodec`; everything else is
one mapping, so a field added to a Job is mapped once for every database.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

import attrs
import cattrs

from printjob_core.model import (
    Account,
    ApiKey,
    IdempotencyRecord,
    Invite,
    Job,
    JobChannel,
    JobError,
    JobOptions,
    JobResult,
    JobStatus,
    LedgerEntry,
    LedgerKind,
    Person,
    Phase,
    Plan,
    WebSession,
)
from printjob_core.ports import AccountByKey, JobByKey

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_T = TypeVar("_T")

#: The columns of a job row, in the order every SELECT asks for them.
JOB_COLUMNS = (
    "id, account_id, status, phase, progress, created_at, finished_at, options, "
    "credits_charged, result, error, attempts, image_key, result_key, result_expires_at, "
    "lease_expires_at, request_id, channel"
)


KEY_COLUMNS = (
    "id",
    "account_id",
    "key_hash",
    "hint",
    "created_at",
    "revoked_at",
    "label",
    "last_used_at",
    "last_chars",
)
ACCOUNT_COLUMNS = (
    "id",
    "created_at",
    "credits_balance",
    "credits_held",
    "active_jobs_max",
    "disabled",
    "name",
    "email",
    "plan",
)
JOB_NAMES = tuple(JOB_COLUMNS.split(", "))
#: The unfinished statuses as an SQL list: a literal, so PostgreSQL's planner can use the
#: partial indexes on `status` and no statement needs a parameter for them.
UNFINISHED_SQL = f"('{JobStatus.QUEUED.value}', '{JobStatus.RUNNING.value}')"

_KEYS_END = len(KEY_COLUMNS)
_ACCOUNTS_END = _KEYS_END + len(ACCOUNT_COLUMNS)


def _columns(values: Sequence[Any], names: tuple[str, ...], start: int) -> dict[str, Any]:
    """One table's columns of a joined row read as a tuple (`_aliased` order)."""
    return dict(zip(names, values[start : start + len(names)], strict=True))


def aware_utc(moment: datetime) -> datetime:
    """The time in UTC; a naive time is refused rather than guessed at."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"refusing to store a naive datetime {moment!r}")
    return moment.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """A timezone-aware time as fixed-width UTC text (text order is time order)."""
    return aware_utc(moment).strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime:
    # The stored form is always `format_time`'s, which fromisoformat reads (with its "Z")
    # straight into an aware UTC time, ~100x faster than strptime.
    if len(text) == 27 and text[-1] == "Z" and text[10] == "T":
        return datetime.fromisoformat(text)
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC)


# The JSON columns (options, result, error) store times as text in both databases.
_json = cattrs.Converter()
_json.register_unstructure_hook(datetime, format_time)
_json.register_structure_hook(datetime, lambda value, _: parse_time(value))


def dump_json(value: object) -> str | None:
    if value is None:
        return None
    return json.dumps(_json.unstructure(value), separators=(",", ":"), sort_keys=True)


def load_json(value: Any, kind: type[_T]) -> _T | None:
    """Read a JSON column: text (SQLite, PostgreSQL `json`) or already parsed (`jsonb`)."""
    if value is None:
        return None
    if isinstance(value, str):
        loader = _TEXT_LOADERS.get(kind)
        if loader is None:
            loader = _TEXT_LOADERS[kind] = _text_loader(kind)
        loaded: _T = loader(value)
        return loaded
    if isinstance(value, bytes):
        value = json.loads(value)
    return _json.structure(value, kind)


def _text_loader(kind: type[Any]) -> Callable[[str], Any]:
    """JSON text to a `kind`, remembered: a polled job's options and result are read again
    and again, and the values are immutable (frozen attrs), so one copy serves every read."""

    @functools.lru_cache(maxsize=4096)
    def load(text: str) -> Any:
        return _json.structure(json.loads(text), kind)

    return load


_TEXT_LOADERS: dict[type[Any], Callable[[str], Any]] = {}


@attrs.frozen
class TimeCodec:
    """How one database stores a time column."""

    write: Callable[[datetime], Any]
    read: Callable[[Any], datetime]


class Row(Protocol):
    """A row read by column name: a `dict` (psycopg) or an `sqlite3.Row`."""

    def __getitem__(self, key: str, /) -> Any: ...


class RowMapper:
    """Turns domain values into column dicts and rows back into domain values."""

    def __init__(self, times: TimeCodec) -> None:
        self.times = times

    def time_or_none(self, value: Any) -> datetime | None:
        return None if value is None else self.times.read(value)

    def write_or_none(self, moment: datetime | None) -> Any:
        return None if moment is None else self.times.write(moment)

    def job_row(self, job: Job) -> dict[str, Any]:
        write = self.times.write
        return {
            "id": job.id,
            "account_id": job.account_id,
            "status": job.status.value,
            "phase": None if job.phase is None else job.phase.value,
            "progress": job.progress,
            "created_at": write(job.created_at),
            "finished_at": self.write_or_none(job.finished_at),
            "options": dump_json(job.options),
            "credits_charged": job.credits_charged,
            "result": dump_json(job.result),
            "error": dump_json(job.error),
            "attempts": job.attempts,
            "image_key": job.image_key,
            "result_key": job.result_key,
            "result_expires_at": None if job.result is None else write(job.result.expires_at),
            "lease_expires_at": self.write_or_none(job.lease_expires_at),
            "request_id": job.request_id,
            "channel": job.channel.value,
        }

    def job(self, row: Row) -> Job:
        options = load_json(row["options"], JobOptions)
        assert options is not None
        return Job(
            id=row["id"],
            account_id=row["account_id"],
            status=JobStatus(row["status"]),
            phase=None if row["phase"] is None else Phase(row["phase"]),
            progress=row["progress"],
            created_at=self.times.read(row["created_at"]),
            finished_at=self.time_or_none(row["finished_at"]),
            options=options,
            credits_charged=row["credits_charged"],
            result=load_json(row["result"], JobResult),
            error=load_json(row["error"], JobError),
            attempts=row["attempts"],
            image_key=row["image_key"],
            result_key=row["result_key"],
            lease_expires_at=self.time_or_none(row["lease_expires_at"]),
            request_id=row["request_id"],
            channel=JobChannel(row["channel"]),
        )

    def account(self, row: Row) -> Account:
        return Account(
            id=row["id"],
            created_at=self.times.read(row["created_at"]),
            credits_balance=row["credits_balance"],
            credits_held=row["credits_held"],
            active_jobs_max=row["active_jobs_max"],
            disabled=bool(row["disabled"]),
            name=row["name"],
            email=row["email"],
            plan=Plan(row["plan"]),
        )

    def ledger_entry(self, row: Row) -> LedgerEntry:
        return LedgerEntry(
            id=int(row["id"]),
            account_id=row["account_id"],
            at=self.times.read(row["at"]),
            kind=LedgerKind(row["kind"]),
            amount=int(row["amount"]),
            balance_after=int(row["balance_after"]),
            held_after=int(row["held_after"]),
            job_id=row["job_id"],
            reason=row["reason"],
        )

    def key(self, row: Row) -> ApiKey:
        return ApiKey(
            id=row["id"],
            account_id=row["account_id"],
            key_hash=row["key_hash"],
            hint=row["hint"],
            created_at=self.times.read(row["created_at"]),
            revoked_at=self.time_or_none(row["revoked_at"]),
            label=row["label"],
            last_used_at=self.time_or_none(row["last_used_at"]),
            last_chars=row["last_chars"],
        )

    def person(self, row: Row) -> Person:
        return Person(
            id=row["id"],
            account_id=row["account_id"],
            email=row["email"],
            password_hash=row["password_hash"],
            created_at=self.times.read(row["created_at"]),
            password_changed_at=self.times.read(row["password_changed_at"]),
        )

    def session(self, row: Row) -> WebSession:
        return WebSession(
            token_hash=row["token_hash"],
            person_id=row["person_id"],
            account_id=row["account_id"],
            created_at=self.times.read(row["created_at"]),
            last_seen_at=self.times.read(row["last_seen_at"]),
            expires_at=self.times.read(row["expires_at"]),
        )

    def invite(self, row: Row) -> Invite:
        return Invite(
            token_hash=row["token_hash"],
            account_id=row["account_id"],
            email=row["email"],
            created_at=self.times.read(row["created_at"]),
            expires_at=self.times.read(row["expires_at"]),
            used_at=self.time_or_none(row["used_at"]),
        )

    def job_by_key(self, values: Sequence[Any]) -> JobByKey:
        """A row of `job_by_key_sql`, read as a tuple (a name lookup in a 28-column row
        costs more than the whole statement)."""
        job = None
        if values[_ACCOUNTS_END] is not None:  # the job's id: NULL when the LEFT JOIN missed
            job = self.job(_columns(values, JOB_NAMES, _ACCOUNTS_END))
        return JobByKey(
            self.key(_columns(values, KEY_COLUMNS, 0)),
            self.account(_columns(values, ACCOUNT_COLUMNS, _KEYS_END)),
            job,
        )

    def account_by_key(self, values: Sequence[Any]) -> AccountByKey:
        """A row of `account_by_key_sql`, read as a tuple."""
        return AccountByKey(
            self.key(_columns(values, KEY_COLUMNS, 0)),
            self.account(_columns(values, ACCOUNT_COLUMNS, _KEYS_END)),
            int(values[_ACCOUNTS_END]),
        )

    def record(self, row: Row) -> IdempotencyRecord:
        return IdempotencyRecord(
            account_id=row["account_id"],
            key=row["key"],
            fingerprint=row["fingerprint"],
            job_id=row["job_id"],
            created_at=self.times.read(row["created_at"]),
            expires_at=self.times.read(row["expires_at"]),
        )
