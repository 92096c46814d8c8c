"""The schema, written once and rendered for each database.

Migration N brings a database from schema version N-1 to N. Each is a function of the
`Dialect`, so a table is declared once with its database's types filled in. Where the
version is kept differs (SQLite's `PRAGMA user_version`, PostgreSQL's
`printjob_schema_version` table under an advisory lock): that lives with each database's
connections. A migration, once released, is never edited: databases made by it exist.
Version 1 renders exactly the statements printjob shipped before the schema was shared
(a test compares a database made from those with one made from this).
"""

from __future__ import annotations

from collections.abc import Callable

from printjob_adapters.sql.dialect import Dialect


class SchemaError(RuntimeError):
    """The database was made by a newer printjob than this one."""


def _version_1(d: Dialect) -> tuple[str, ...]:
    """Accounts, keys, jobs, idempotency records and rate counters."""
    # A table without a rowid that must list rows in insertion order gets `seq`.
    key_seq = f"seq {d.identity_type},\n            " if d.rowid is None else ""
    key_order = ", seq" if d.rowid is None else ""
    if d.row_locks:
        # The queue's reads lock rows: partial indexes keep only the few queued and
        # running rows, so `status = 'queued' ORDER BY seq` and recovery scan nothing else.
        queue_indexes: tuple[str, ...] = (
            "CREATE INDEX jobs_queued ON jobs (seq) WHERE status = 'queued'",
            "CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE status = 'running'",
        )
    else:
        queue_indexes = ("CREATE INDEX jobs_status_seq ON jobs (status, seq)",)
    return (
        f"""
        CREATE TABLE accounts (
            id TEXT PRIMARY KEY,
            created_at {d.time_type} NOT NULL,
            credits_balance {d.bigint_type} NOT NULL,
            credits_held {d.bigint_type} NOT NULL CHECK (credits_held >= 0),
            active_jobs_max INTEGER NOT NULL CHECK (active_jobs_max >= 1),
            disabled {d.flag("disabled")}
        )
        """,
        f"""
        CREATE TABLE api_keys (
            {key_seq}id TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id),
            key_hash TEXT NOT NULL,
            hint TEXT NOT NULL,
            created_at {d.time_type} NOT NULL,
            revoked_at {d.time_type}
        )
        """,
        "CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_hash)",
        f"CREATE INDEX api_keys_account ON api_keys (account_id, created_at{key_order})",
        f"""
        CREATE TABLE jobs (
            seq {d.serial_key},
            id TEXT NOT NULL UNIQUE,
            account_id TEXT NOT NULL REFERENCES accounts(id),
            status TEXT NOT NULL
                CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'canceled')),
            phase TEXT,
            progress INTEGER,
            created_at {d.time_type} NOT NULL,
            finished_at {d.time_type},
            options {d.json_type} NOT NULL,
            credits_charged INTEGER NOT NULL DEFAULT 0,
            result {d.json_type},
            error {d.json_type},
            attempts INTEGER NOT NULL DEFAULT 0,
            image_key TEXT,
            result_key TEXT,
            result_expires_at {d.time_type},
            lease_expires_at {d.time_type}
        )
        """,
        *queue_indexes,
        "CREATE INDEX jobs_account_status ON jobs (account_id, status)",
        """
        CREATE INDEX jobs_result_expiry ON jobs (result_expires_at)
            WHERE result_key IS NOT NULL
        """,
        f"""
        CREATE TABLE idempotency_keys (
            account_id TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            job_id TEXT NOT NULL,
            created_at {d.time_type} NOT NULL,
            expires_at {d.time_type} NOT NULL,
            PRIMARY KEY (account_id, key)
        ){d.keyed_table_suffix}
        """,
        "CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at)",
        f"""
        CREATE TABLE rate_counts (
            bucket TEXT NOT NULL,
            window_start {d.bigint_type} NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (bucket, window_start)
        ){d.keyed_table_suffix}
        """,
        "CREATE INDEX rate_counts_window ON rate_counts (window_start)",
    )


def _database_blobs(d: Dialect) -> tuple[str, ...]:
    """Uploads and results kept in PostgreSQL (`PRINTJOB_BLOBS=database`).

    PostgreSQL only: SQLite is one machine's database, whose blobs stay files beside it.
    The key is in the "C" collation so that its primary key index orders keys byte by
    byte and serves the prefix range `keys(prefix)` asks for. `STORAGE EXTERNAL` keeps
    large values out of line without trying to compress them: PNG, PDF and JPEG are
    compressed already.
    """
    if d.name != "postgresql":
        return ()
    return (
        f"""
        CREATE TABLE blobs (
            key TEXT COLLATE "C" PRIMARY KEY,
            data BYTEA NOT NULL,
            created_at {d.time_type} NOT NULL
        )
        """,
        "ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL",
    )


def _credit_ledger(d: Dialect) -> tuple[str, ...]:
    """The credit ledger (every add, remove, hold, charge and release) and the accounts'
    operator-only name and e-mail address.

    Accounts made before this migration have no ledger entries for what they already hold:
    their ledger starts at the upgrade (docs/operations.md).
    """
    return (
        "ALTER TABLE accounts ADD COLUMN name TEXT",
        "ALTER TABLE accounts ADD COLUMN email TEXT",
        f"""
        CREATE TABLE credit_ledger (
            id {d.serial_key},
            account_id TEXT NOT NULL REFERENCES accounts(id),
            at {d.time_type} NOT NULL,
            kind TEXT NOT NULL
                CHECK (kind IN ('add', 'remove', 'hold', 'charge', 'release')),
            amount {d.bigint_type} NOT NULL CHECK (amount > 0),
            balance_after {d.bigint_type} NOT NULL,
            held_after {d.bigint_type} NOT NULL CHECK (held_after >= 0),
            job_id TEXT,
            reason TEXT
        )
        """,
        "CREATE INDEX credit_ledger_account ON credit_ledger (account_id, id)",
    )


def _job_request_ids(d: Dialect) -> tuple[str, ...]:
    """Jobs remember the `X-Request-Id` of the request that submitted them, so a worker's
    log lines about a job can be found from the access log (NULL for older jobs)."""
    return ("ALTER TABLE jobs ADD COLUMN request_id TEXT",)


def _fair_queue_index(d: Dialect) -> tuple[str, ...]:
    """When each account's last job ended, in one index probe: the fair queue's tie-break
    (`jobs.next_queued`)."""
    return ("CREATE INDEX jobs_account_finished ON jobs (account_id, finished_at)",)


def _website(d: Dialect) -> tuple[str, ...]:
    """The website: accounts' plans, the people who sign in (by unique lower-cased email),
    their sessions and invites (by the SHA-256 of their tokens), the downloads counted
    against the daily quota (once per job), failed sign-ins, which door each job came in
    by, and the API keys' labels, last characters and last use.

    Existing accounts are on the free plan, existing jobs are API jobs, existing keys have
    no label and no recorded use.
    """
    t = d.time_type
    return (
        "ALTER TABLE accounts ADD COLUMN plan TEXT NOT NULL DEFAULT 'free' "
        "CHECK (plan IN ('free', 'monthly'))",
        "ALTER TABLE jobs ADD COLUMN channel TEXT NOT NULL DEFAULT 'api' "
        "CHECK (channel IN ('api', 'website'))",
        "CREATE INDEX jobs_account_recent ON jobs (account_id, created_at)",
        "ALTER TABLE api_keys ADD COLUMN label TEXT NOT NULL DEFAULT ''",
        f"ALTER TABLE api_keys ADD COLUMN last_used_at {t}",
        "ALTER TABLE api_keys ADD COLUMN last_chars TEXT NOT NULL DEFAULT ''",
        f"""
        CREATE TABLE people (
            id TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id),
            email TEXT NOT NULL,
            password_hash TEXT NOT NULL,
            created_at {t} NOT NULL,
            password_changed_at {t} NOT NULL
        )
        """,
        "CREATE UNIQUE INDEX people_email ON people (lower(email))",
        "CREATE INDEX people_account ON people (account_id, created_at)",
        f"""
        CREATE TABLE web_sessions (
            token_hash TEXT PRIMARY KEY,
            person_id TEXT NOT NULL REFERENCES people(id),
            account_id TEXT NOT NULL REFERENCES accounts(id),
            created_at {t} NOT NULL,
            last_seen_at {t} NOT NULL,
            expires_at {t} NOT NULL
        ){d.keyed_table_suffix}
        """,
        "CREATE INDEX web_sessions_person ON web_sessions (person_id)",
        "CREATE INDEX web_sessions_account ON web_sessions (account_id)",
        f"""
        CREATE TABLE invites (
            token_hash TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts(id),
            email TEXT NOT NULL,
            created_at {t} NOT NULL,
            expires_at {t} NOT NULL,
            used_at {t}
        ){d.keyed_table_suffix}
        """,
        f"""
        CREATE TABLE website_downloads (
            account_id TEXT NOT NULL REFERENCES accounts(id),
            job_id TEXT NOT NULL,
            day TEXT NOT NULL,
            at {t} NOT NULL,
            PRIMARY KEY (account_id, job_id)
        ){d.keyed_table_suffix}
        """,
        "CREATE INDEX website_downloads_day ON website_downloads (account_id, day)",
        f"""
        CREATE TABLE sign_in_failures (
            bucket TEXT NOT NULL,
            at {t} NOT NULL
        )
        """,
        "CREATE INDEX sign_in_failures_bucket ON sign_in_failures (bucket, at)",
        "CREATE INDEX sign_in_failures_at ON sign_in_failures (at)",
    )


#: Migration N (counting from 1) is `MIGRATIONS[N - 1]`.
MIGRATIONS: tuple[Callable[[Dialect], tuple[str, ...]], ...] = (
    _version_1,
    _database_blobs,
    _credit_ledger,
    _job_request_ids,
    _fair_queue_index,
    _website,
)
#: The schema version this code writes.
SCHEMA_VERSION = len(MIGRATIONS)


def check_version(version: int, where: str) -> None:
    """Refuse a database made by a newer printjob (`where` names it in the message)."""
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{where} has schema version {version}, but this printjob knows only up to "
            f"{SCHEMA_VERSION}; upgrade printjob"
        )


def upgrade_statements(
    dialect: Dialect, version: int, where: str
) -> list[tuple[int, tuple[str, ...]]]:
    """Each migration from `version` up, as (the version it brings, its statements)."""
    check_version(version, where)
    return [(number + 1, MIGRATIONS[number](dialect)) for number in range(version, SCHEMA_VERSION)]


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SchemaError", "check_version", "upgrade_statements"]
