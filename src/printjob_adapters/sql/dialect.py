"""What tells one SQL database from another, as one small value.

The schema (`schema`), the repositories (`repositories`), the polling views (`views`) and
the rate counter's statements are written once against a `Dialect`; `SQLITE` and
`POSTGRESQL` are the two there are. Everything a dialect holds is a fact about the
database, never about printjob: how a parameter is written, how a time is stored, which
column types exist, whether rows can be locked, and how a waiting worker is told.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime

import attrs

from printjob_adapters.sql.rows import RowMapper, TimeCodec, aware_utc, format_time, parse_time

#: The channel a newly queued job is announced on (PostgreSQL `NOTIFY`).
JOB_CHANNEL = "printjob_jobs"


def _as_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


#: SQLite: fixed-width UTC text, so text order is time order.
TEXT_TIMES = TimeCodec(write=format_time, read=parse_time)
#: PostgreSQL: `timestamptz`, read back in UTC.
NATIVE_TIMES = TimeCodec(write=aware_utc, read=_as_utc)


@attrs.frozen(cache_hash=True)
class Dialect:
    """One database's SQL: placeholders, time codec, column types, row locks, notify."""

    name: str
    #: The positional placeholder the driver expects; statements are written with `?`.
    mark: str
    times: TimeCodec
    # -- column types --
    time_type: str
    bigint_type: str
    json_type: str
    #: Appended to a JSON parameter so the driver's text becomes the column's type.
    json_cast: str
    #: A true boolean column type (PostgreSQL); SQLite keeps 0/1 under a CHECK.
    native_booleans: bool
    #: The type of an ever-growing insertion-order primary key.
    serial_key: str
    #: The implicit insertion-order column every row has (SQLite's `rowid`); without one,
    #: a table that needs insertion order gets an identity column `seq` of its own.
    rowid: str | None
    identity_type: str
    #: Appended to a table with a composite primary key and no need of a rowid.
    keyed_table_suffix: str
    # -- locks and signals --
    #: Rows can be locked one by one (PostgreSQL). SQLite's write transaction holds the
    #: whole database, so it locks nothing more and waits for nothing more.
    row_locks: bool
    for_update: str
    skip_locked: str
    #: Sent inside the transaction that queued a job: delivered on commit only.
    notify_queued: str | None
    #: Domain values <-> rows, with this database's times.
    rows: RowMapper = attrs.field(
        init=False,
        eq=False,
        default=attrs.Factory(lambda self: RowMapper(self.times), takes_self=True),
    )

    def sql(self, text: str) -> str:
        """A statement written with `?` placeholders, in this database's style."""
        return text if self.mark == "?" else _translated(text, self.mark)

    def param(self, name: str, *, json: bool = False) -> str:
        """A named placeholder (`:name` or `%(name)s`), cast to JSON when asked."""
        mark = f":{name}" if self.mark == "?" else f"%({name})s"
        return mark + self.json_cast if json else mark

    def flag(self, column: str) -> str:
        """A boolean column's type, default false."""
        if self.native_booleans:
            return "BOOLEAN NOT NULL DEFAULT FALSE"
        return f"INTEGER NOT NULL DEFAULT 0 CHECK ({column} IN (0, 1))"

    @property
    def insertion_order(self) -> str:
        """The column that orders a table's rows as they were inserted."""
        return self.rowid or "seq"


@functools.lru_cache(maxsize=512)
def _translated(text: str, mark: str) -> str:
    # No statement of printjob has a `?` or `%` inside a literal, so a plain replace is
    # exact; remembered, since the same few statements run again and again.
    return text.replace("?", mark)


SQLITE = Dialect(
    name="sqlite",
    mark="?",
    times=TEXT_TIMES,
    time_type="TEXT",
    bigint_type="INTEGER",
    json_type="TEXT",
    json_cast="",
    native_booleans=False,
    serial_key="INTEGER PRIMARY KEY AUTOINCREMENT",
    rowid="rowid",
    identity_type="",
    keyed_table_suffix=" WITHOUT ROWID",
    row_locks=False,
    for_update="",
    skip_locked="",
    notify_queued=None,
)

POSTGRESQL = Dialect(
    name="postgresql",
    mark="%s",
    times=NATIVE_TIMES,
    time_type="TIMESTAMPTZ",
    bigint_type="BIGINT",
    json_type="JSONB",
    json_cast="::jsonb",
    native_booleans=True,
    serial_key="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    rowid=None,
    identity_type="BIGINT GENERATED ALWAYS AS IDENTITY",
    keyed_table_suffix="",
    row_locks=True,
    for_update=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    notify_queued=f"NOTIFY {JOB_CHANNEL}",
)

__all__ = ["JOB_CHANNEL", "NATIVE_TIMES", "POSTGRESQL", "SQLITE", "TEXT_TIMES", "Dialect"]
