"""The two polling reads as one statement each (`ReadViews`), written once.

A single statement reads one consistent snapshot in SQLite and in PostgreSQL, so none
opens a transaction: a poll costs one `execute` instead of a unit of work's five. The
statement is rendered once per dialect; each database brings only `fetch_one`, how it
runs a statement on a connection of its own and hands back the row as a tuple (a name
lookup in a 28-column row costs more than the whole statement).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from printjob_adapters.sql.dialect import Dialect
from printjob_adapters.sql.rows import ACCOUNT_COLUMNS, JOB_NAMES, KEY_COLUMNS, UNFINISHED_SQL
from printjob_core.ports import AccountByKey, JobByKey

#: Runs one statement with its parameters; its one row as a tuple, or None.
FetchOne = Callable[[str, tuple[str, ...]], Sequence[Any] | None]


def _aliased(table: str, names: tuple[str, ...]) -> str:
    """`t.a AS t_a, t.b AS t_b, ...`: the columns of one table in a join, told apart."""
    return ", ".join(f"{table}.{name} AS {table}_{name}" for name in names)


#: `ReadViews.job_by_key`; parameters (job_id, key_hash). Decoded by `RowMapper.job_by_key`.
JOB_BY_KEY = (
    f"SELECT {_aliased('k', KEY_COLUMNS)}, {_aliased('a', ACCOUNT_COLUMNS)}, "
    f"{_aliased('j', JOB_NAMES)} "
    "FROM api_keys k JOIN accounts a ON a.id = k.account_id "
    "LEFT JOIN jobs j ON j.id = ? AND j.account_id = k.account_id "
    "WHERE k.key_hash = ?"
)
#: `ReadViews.account_by_key`; parameter (key_hash). Decoded by `RowMapper.account_by_key`.
ACCOUNT_BY_KEY = (
    f"SELECT {_aliased('k', KEY_COLUMNS)}, {_aliased('a', ACCOUNT_COLUMNS)}, "
    "(SELECT count(*) FROM jobs WHERE jobs.account_id = k.account_id "
    f"AND jobs.status IN {UNFINISHED_SQL} AND jobs.channel = 'api') AS active_jobs "
    "FROM api_keys k JOIN accounts a ON a.id = k.account_id "
    "WHERE k.key_hash = ?"
)


class SqlViews:
    """The `ReadViews` port: each read is one statement."""

    def __init__(self, dialect: Dialect, fetch_one: FetchOne) -> None:
        self._fetch_one = fetch_one
        self._rows = dialect.rows
        self._job_by_key = dialect.sql(JOB_BY_KEY)
        self._account_by_key = dialect.sql(ACCOUNT_BY_KEY)

    def job_by_key(self, key_hash: str, job_id: str) -> JobByKey | None:
        row = self._fetch_one(self._job_by_key, (job_id, key_hash))
        return None if row is None else self._rows.job_by_key(row)

    def account_by_key(self, key_hash: str) -> AccountByKey | None:
        row = self._fetch_one(self._account_by_key, (key_hash,))
        return None if row is None else self._rows.account_by_key(row)


__all__ = ["ACCOUNT_BY_KEY", "JOB_BY_KEY", "FetchOne", "SqlViews"]
