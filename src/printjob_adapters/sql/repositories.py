"""The repository ports and the unit of work's shell, written once for every SQL database.

A repository runs its statements on an `Executor` (an `sqlite3.Connection`, or
PostgreSQL's connection behind a guard that turns lock waits into `ServerBusy`) in the
`Dialect` of its database. The locking rules of a write unit of work are stated here once
and cost nothing where the dialect has no row locks (SQLite's write transaction already
holds the whole database):

- every row read in order to be changed is locked `FOR UPDATE`, always the account
  before its jobs (`jobs.get` locks the job's account first; recovery and `unfinished_for`
  lock the accounts in id order), so two processes can never spend one credit twice nor
  act on one job state twice, and different accounts never wait for each other;
- `idempotency.get` locks the account first, so two submissions with one key queue there
  and the second finds the first's record;
- `jobs.next_queued` skips rows another transaction holds (the queue);
- a job that becomes queued is announced (`Dialect.notify_queued`) inside the
  transaction, so the notice goes out on commit only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Protocol

from printjob_adapters.sql.dialect import Dialect
from printjob_adapters.sql.rows import JOB_COLUMNS, JOB_NAMES, UNFINISHED_SQL, Row
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
    InviteRepository,
    JobRepository,
    KeyRepository,
    LedgerRepository,
    PersonRepository,
    SessionRepository,
    SignInFailureRepository,
)
from printjob_core.readiness import QueueState

Params = Sequence[Any] | Mapping[str, Any]


class Cursor(Protocol):
    """What a statement's result offers (DB-API)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Executor(Protocol):
    """Runs one statement: `sqlite3.Connection`, or PostgreSQL's guarded connection."""

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor: ...


class _Repository:
    def __init__(self, db: Executor, dialect: Dialect, *, writer: bool) -> None:
        self.db = db
        self.d = dialect
        self.rows = dialect.rows
        #: Inside a write unit of work, on a database with row locks: lock what is read
        #: to be changed.
        self.locking = writer and dialect.row_locks
        self._for_update = dialect.for_update if self.locking else ""
        #: Statements are written with `?`; where that is the driver's style they go as
        #: they are (a read costs a few microseconds: a translation call is worth sparing).
        self._native = dialect.mark == "?"

    def _one(self, sql: str, params: Params = ()) -> Row | None:
        cursor = self.db.execute(sql if self._native else self.d.sql(sql), params)
        row: Row | None = cursor.fetchone()
        return row

    def _all(self, sql: str, params: Params = ()) -> list[Row]:
        return self.db.execute(sql if self._native else self.d.sql(sql), params).fetchall()

    def _change(self, sql: str, params: Params) -> int:
        """Run an INSERT, UPDATE or DELETE; the number of rows it touched."""
        return int(self.db.execute(sql if self._native else self.d.sql(sql), params).rowcount)

    def _lock_accounts(self, account_ids: Sequence[str]) -> None:
        """Lock account rows in id order (the one order every transaction uses)."""
        if self.locking and account_ids:
            ids = sorted(set(account_ids))
            marks = ", ".join("?" * len(ids))
            locked = f"ORDER BY id{self._for_update}"
            self._all(f"SELECT id FROM accounts WHERE id IN ({marks}) {locked}", ids)


class SqlAccounts(_Repository):
    def add(self, account: Account) -> None:
        self._change(
            "INSERT INTO accounts (id, created_at, credits_balance, credits_held, "
            "active_jobs_max, disabled, name, email, plan) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                account.id,
                self.d.times.write(account.created_at),
                account.credits_balance,
                account.credits_held,
                account.active_jobs_max,
                account.disabled,
                account.name,
                account.email,
                account.plan.value,
            ),
        )

    def get(self, account_id: str) -> Account | None:
        row = self._one(f"SELECT * FROM accounts WHERE id = ?{self._for_update}", (account_id,))
        return None if row is None else self.rows.account(row)

    def save(self, account: Account) -> None:
        changed = self._change(
            "UPDATE accounts SET credits_balance = ?, credits_held = ?, active_jobs_max = ?, "
            "disabled = ?, name = ?, email = ?, plan = ? WHERE id = ?",
            (
                account.credits_balance,
                account.credits_held,
                account.active_jobs_max,
                account.disabled,
                account.name,
                account.email,
                account.plan.value,
                account.id,
            ),
        )
        if changed != 1:
            raise KeyError(f"no account {account.id}")

    def list_all(self, *, disabled_only: bool = False) -> list[Account]:
        where, params = ("WHERE disabled = ? ", (True,)) if disabled_only else ("", ())
        rows = self._all(f"SELECT * FROM accounts {where}ORDER BY created_at, id", params)
        return [self.rows.account(row) for row in rows]


class SqlLedger(_Repository):
    def add(self, entry: LedgerEntry) -> None:
        self._change(
            "INSERT INTO credit_ledger (account_id, at, kind, amount, balance_after, "
            "held_after, job_id, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.account_id,
                self.d.times.write(entry.at),
                entry.kind.value,
                entry.amount,
                entry.balance_after,
                entry.held_after,
                entry.job_id,
                entry.reason,
            ),
        )

    def history(self, account_id: str) -> list[LedgerEntry]:
        rows = self._all(
            "SELECT * FROM credit_ledger WHERE account_id = ? ORDER BY id", (account_id,)
        )
        return [self.rows.ledger_entry(row) for row in rows]


class SqlKeys(_Repository):
    def add(self, key: ApiKey) -> None:
        self._change(
            "INSERT INTO api_keys (id, account_id, key_hash, hint, created_at, revoked_at, "
            "label, last_used_at, last_chars) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key.id,
                key.account_id,
                key.key_hash,
                key.hint,
                self.d.times.write(key.created_at),
                self.rows.write_or_none(key.revoked_at),
                key.label,
                self.rows.write_or_none(key.last_used_at),
                key.last_chars,
            ),
        )

    def get(self, key_id: str) -> ApiKey | None:
        row = self._one(f"SELECT * FROM api_keys WHERE id = ?{self._for_update}", (key_id,))
        return None if row is None else self.rows.key(row)

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        row = self._one("SELECT * FROM api_keys WHERE key_hash = ?", (key_hash,))
        return None if row is None else self.rows.key(row)

    def list_for(self, account_id: str) -> list[ApiKey]:
        rows = self._all(
            "SELECT * FROM api_keys WHERE account_id = ? "
            f"ORDER BY created_at, {self.d.insertion_order}",
            (account_id,),
        )
        return [self.rows.key(row) for row in rows]

    def save(self, key: ApiKey) -> None:
        changed = self._change(
            "UPDATE api_keys SET hint = ?, revoked_at = ?, label = ? WHERE id = ?",
            (key.hint, self.rows.write_or_none(key.revoked_at), key.label, key.id),
        )
        if changed != 1:
            raise KeyError(f"no key {key.id}")

    def touch(self, key_id: str, at: datetime) -> None:
        moment = self.d.times.write(at)
        self._change(
            "UPDATE api_keys SET last_used_at = ? WHERE id = ? "
            "AND (last_used_at IS NULL OR last_used_at < ?)",
            (moment, key_id, moment),
        )


_JSON_COLUMNS = frozenset({"options", "result", "error"})


#: Per dialect name: the INSERT and UPDATE of a whole job row (`_job_writes`).
_JOB_WRITES: dict[str, tuple[str, str]] = {}


def _job_writes(dialect: Dialect) -> tuple[str, str]:
    """INSERT and UPDATE of a whole job row, with named parameters (`RowMapper.job_row`)."""
    writes = _JOB_WRITES.get(dialect.name)
    if writes is None:
        mark = {name: dialect.param(name, json=name in _JSON_COLUMNS) for name in JOB_NAMES}
        insert = f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({', '.join(mark.values())})"
        assignments = ", ".join(f"{name} = {mark[name]}" for name in JOB_NAMES if name != "id")
        update = f"UPDATE jobs SET {assignments} WHERE id = {mark['id']}"
        writes = _JOB_WRITES[dialect.name] = (insert, update)
    return writes


class SqlJobs(_Repository):
    def _announce(self, job: Job) -> None:
        if job.status is JobStatus.QUEUED and self.d.notify_queued is not None:
            self.db.execute(self.d.notify_queued)

    def add(self, job: Job) -> None:
        self.db.execute(_job_writes(self.d)[0], self.rows.job_row(job))
        self._announce(job)

    def get(self, job_id: str) -> Job | None:
        if self.locking:
            owner = self._one("SELECT account_id FROM jobs WHERE id = ?", (job_id,))
            if owner is None:
                return None
            self._lock_accounts([owner["account_id"]])
        row = self._one(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?{self._for_update}", (job_id,))
        return None if row is None else self.rows.job(row)

    def save(self, job: Job) -> None:
        if self.db.execute(_job_writes(self.d)[1], self.rows.job_row(job)).rowcount != 1:
            raise KeyError(f"no job {job.id}")
        self._announce(job)

    def unfinished_for(self, account_id: str) -> list[Job]:
        self._lock_accounts([account_id])
        rows = self._all(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE account_id = ? AND status IN {UNFINISHED_SQL} "
            f"ORDER BY seq{self._for_update}",
            (account_id,),
        )
        return [self.rows.job(row) for row in rows]

    def count_unfinished(self, account_id: str, channel: JobChannel = JobChannel.API) -> int:
        row = self._one(
            f"SELECT count(*) AS n FROM jobs WHERE account_id = ? AND status IN {UNFINISHED_SQL} "
            "AND channel = ?",
            (account_id, channel.value),
        )
        return 0 if row is None else int(row["n"])

    def recent_for(self, account_id: str, limit: int) -> list[Job]:
        rows = self._all(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE account_id = ? "
            "ORDER BY created_at DESC, seq DESC LIMIT ?",
            (account_id, limit),
        )
        return [self.rows.job(row) for row in rows]

    def next_queued(self) -> Job | None:
        # The fair queue (see the port). Per account with queued jobs: its running jobs and
        # when its last job ended (one probe of `jobs_account_finished` each); then its
        # oldest job. The lock applies to `jobs` alone: PostgreSQL skips rows another
        # claimer holds and takes the next in fair order, re-checking `status = 'queued'`
        # under the lock; SQLite's write transaction holds every row.
        skip = ""
        if self.locking:
            # The dialect's `FOR UPDATE SKIP LOCKED`, narrowed to `jobs`.
            skip = self.d.skip_locked.replace(" FOR UPDATE", " FOR UPDATE OF j")
        columns = ", ".join(f"j.{name.strip()}" for name in JOB_COLUMNS.split(","))
        # PostgreSQL would pull the per-account figures up into the sort, computing them
        # once per queued job; OFFSET 0 keeps them once per account (SQLite already does).
        fence = " OFFSET 0" if self.d.row_locks else ""
        row = self._one(
            f"SELECT {columns} FROM jobs j JOIN ("
            "SELECT q.account_id, "
            "(SELECT count(*) FROM jobs r WHERE r.account_id = q.account_id "
            "AND r.status = 'running') AS running, "
            "(SELECT max(f.finished_at) FROM jobs f WHERE f.account_id = q.account_id) AS served "
            "FROM (SELECT DISTINCT account_id FROM jobs WHERE status = 'queued') q"
            f"{fence}) a ON a.account_id = j.account_id WHERE j.status = 'queued' "
            f"ORDER BY a.running, a.served IS NOT NULL, a.served, j.seq LIMIT 1{skip}"
        )
        return None if row is None else self.rows.job(row)

    def running_with_lease_before(self, moment: datetime) -> list[Job]:
        params = (self.d.times.write(moment),)
        where = "status = 'running' AND lease_expires_at IS NOT NULL AND lease_expires_at < ?"
        if self.locking:
            owners = self._all(f"SELECT DISTINCT account_id FROM jobs WHERE {where}", params)
            if not owners:
                return []
            self._lock_accounts([row["account_id"] for row in owners])
        rows = self._all(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY seq{self._for_update}",
            params,
        )
        return [self.rows.job(row) for row in rows]

    def results_expiring_before(self, moment: datetime) -> list[Job]:
        rows = self._all(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE result_key IS NOT NULL "
            f"AND result_expires_at < ? ORDER BY result_expires_at, seq{self._for_update}",
            (self.d.times.write(moment),),
        )
        return [self.rows.job(row) for row in rows]

    def count_queued(self) -> int:
        row = self._one("SELECT count(*) AS n FROM jobs WHERE status = 'queued'")
        return 0 if row is None else int(row["n"])

    def queue_state(self, stale_before: datetime) -> QueueState:
        # Both statuses have an index that keeps their rows together (`jobs_status_seq`, or
        # the partial indexes), so this reads only the unfinished jobs.
        rows = self._all(
            "SELECT status, count(*) AS n, min(created_at) AS oldest, "
            "sum(CASE WHEN lease_expires_at < ? THEN 1 ELSE 0 END) AS stale "
            f"FROM jobs WHERE status IN {UNFINISHED_SQL} GROUP BY status",
            (self.d.times.write(stale_before),),
        )
        by_status = {row["status"]: row for row in rows}
        queued, running = by_status.get("queued"), by_status.get("running")
        return QueueState(
            queued=0 if queued is None else int(queued["n"]),
            running=0 if running is None else int(running["n"]),
            oldest_queued_at=None if queued is None else self.rows.time_or_none(queued["oldest"]),
            stale_running=0 if running is None else int(running["stale"] or 0),
        )


class SqlIdempotency(_Repository):
    def get(self, account_id: str, key: str) -> IdempotencyRecord | None:
        # In a write unit of work the account lock comes first: a second submission with
        # the same key waits here until the first commits, then finds its record.
        self._lock_accounts([account_id])
        row = self._one(
            "SELECT * FROM idempotency_keys WHERE account_id = ? AND key = ?", (account_id, key)
        )
        return None if row is None else self.rows.record(row)

    def put(self, record: IdempotencyRecord) -> None:
        write = self.d.times.write
        self._change(
            "INSERT INTO idempotency_keys "
            "(account_id, key, fingerprint, job_id, created_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, "
            "job_id = excluded.job_id, created_at = excluded.created_at, "
            "expires_at = excluded.expires_at",
            (
                record.account_id,
                record.key,
                record.fingerprint,
                record.job_id,
                write(record.created_at),
                write(record.expires_at),
            ),
        )

    def purge_expired(self, now: datetime) -> int:
        return self._change(
            "DELETE FROM idempotency_keys WHERE expires_at <= ?", (self.d.times.write(now),)
        )


class SqlPeople(_Repository):
    def add(self, person: Person) -> bool:
        # The unique index on lower(email) decides between two sign-ups of one address.
        write = self.d.times.write
        return (
            self._change(
                "INSERT INTO people (id, account_id, email, password_hash, created_at, "
                "password_changed_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    person.id,
                    person.account_id,
                    person.email,
                    person.password_hash,
                    write(person.created_at),
                    write(person.password_changed_at),
                ),
            )
            == 1
        )

    def get(self, person_id: str) -> Person | None:
        row = self._one(f"SELECT * FROM people WHERE id = ?{self._for_update}", (person_id,))
        return None if row is None else self.rows.person(row)

    def find_by_email(self, email: str) -> Person | None:
        row = self._one("SELECT * FROM people WHERE lower(email) = ?", (email.lower(),))
        return None if row is None else self.rows.person(row)

    def for_account(self, account_id: str) -> list[Person]:
        rows = self._all(
            "SELECT * FROM people WHERE account_id = ? ORDER BY created_at, id", (account_id,)
        )
        return [self.rows.person(row) for row in rows]

    def save(self, person: Person) -> None:
        changed = self._change(
            "UPDATE people SET email = ?, password_hash = ?, password_changed_at = ? WHERE id = ?",
            (
                person.email,
                person.password_hash,
                self.d.times.write(person.password_changed_at),
                person.id,
            ),
        )
        if changed != 1:
            raise KeyError(f"no person {person.id}")


class SqlSessions(_Repository):
    def add(self, session: WebSession) -> None:
        write = self.d.times.write
        self._change(
            "INSERT INTO web_sessions (token_hash, person_id, account_id, created_at, "
            "last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                session.token_hash,
                session.person_id,
                session.account_id,
                write(session.created_at),
                write(session.last_seen_at),
                write(session.expires_at),
            ),
        )

    def get(self, token_hash: str) -> WebSession | None:
        row = self._one("SELECT * FROM web_sessions WHERE token_hash = ?", (token_hash,))
        return None if row is None else self.rows.session(row)

    def touch(self, token_hash: str, last_seen_at: datetime) -> None:
        moment = self.d.times.write(last_seen_at)
        self._change(
            "UPDATE web_sessions SET last_seen_at = ? WHERE token_hash = ? AND last_seen_at < ?",
            (moment, token_hash, moment),
        )

    def delete(self, token_hash: str) -> None:
        self._change("DELETE FROM web_sessions WHERE token_hash = ?", (token_hash,))

    def delete_for_person(self, person_id: str, *, keep: str | None = None) -> int:
        return self._change(
            "DELETE FROM web_sessions WHERE person_id = ? AND token_hash <> ?",
            (person_id, keep or ""),
        )

    def delete_for_account(self, account_id: str) -> int:
        return self._change("DELETE FROM web_sessions WHERE account_id = ?", (account_id,))

    def purge_expired(self, now: datetime, idle_before: datetime) -> int:
        write = self.d.times.write
        return self._change(
            "DELETE FROM web_sessions WHERE expires_at <= ? OR last_seen_at < ?",
            (write(now), write(idle_before)),
        )


class SqlInvites(_Repository):
    def add(self, invite: Invite) -> None:
        write = self.d.times.write
        self._change(
            "INSERT INTO invites (token_hash, account_id, email, created_at, expires_at, "
            "used_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                invite.token_hash,
                invite.account_id,
                invite.email,
                write(invite.created_at),
                write(invite.expires_at),
                self.rows.write_or_none(invite.used_at),
            ),
        )

    def get(self, token_hash: str) -> Invite | None:
        row = self._one("SELECT * FROM invites WHERE token_hash = ?", (token_hash,))
        return None if row is None else self.rows.invite(row)

    def use(self, token_hash: str, now: datetime) -> bool:
        # One statement decides: a second transaction racing for the row waits for the
        # first and then finds `used_at` set.
        moment = self.d.times.write(now)
        return (
            self._change(
                "UPDATE invites SET used_at = ? WHERE token_hash = ? AND used_at IS NULL "
                "AND expires_at > ?",
                (moment, token_hash, moment),
            )
            == 1
        )


class SqlDownloads(_Repository):
    def record(self, account_id: str, job_id: str, day: date, at: datetime) -> bool:
        return (
            self._change(
                "INSERT INTO website_downloads (account_id, job_id, day, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (account_id, job_id) DO NOTHING",
                (account_id, job_id, day.isoformat(), self.d.times.write(at)),
            )
            == 1
        )

    def counted(self, account_id: str, job_id: str) -> bool:
        row = self._one(
            "SELECT 1 AS found FROM website_downloads WHERE account_id = ? AND job_id = ?",
            (account_id, job_id),
        )
        return row is not None

    def count_on(self, account_id: str, day: date) -> int:
        row = self._one(
            "SELECT count(*) AS n FROM website_downloads WHERE account_id = ? AND day = ?",
            (account_id, day.isoformat()),
        )
        return 0 if row is None else int(row["n"])


class SqlSignInFailures(_Repository):
    def add(self, bucket: str, at: datetime) -> None:
        self._change(
            "INSERT INTO sign_in_failures (bucket, at) VALUES (?, ?)",
            (bucket, self.d.times.write(at)),
        )

    def since(self, bucket: str, moment: datetime) -> list[datetime]:
        rows = self._all(
            "SELECT at FROM sign_in_failures WHERE bucket = ? AND at > ? ORDER BY at",
            (bucket, self.d.times.write(moment)),
        )
        return [self.rows.times.read(row["at"]) for row in rows]

    def clear(self, bucket: str) -> None:
        self._change("DELETE FROM sign_in_failures WHERE bucket = ?", (bucket,))

    def purge_before(self, moment: datetime) -> int:
        return self._change(
            "DELETE FROM sign_in_failures WHERE at < ?", (self.d.times.write(moment),)
        )


class SqlUnitOfWork:
    """The `UnitOfWork` port's shell: the four repositories over one transaction.

    A database module subclasses it with how a transaction begins (`__enter__`, which
    calls `_attach`), commits (`_commit`) and ends (`__exit__`). A reader's `commit()`
    does nothing; leaving without `commit()` rolls back.
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

    def __init__(self, dialect: Dialect, *, read_only: bool) -> None:
        self.dialect = dialect
        self.read_only = read_only
        self._open = False

    def _attach(self, db: Executor) -> None:
        """Point the repositories at the transaction's connection."""
        writer = not self.read_only
        self.accounts = SqlAccounts(db, self.dialect, writer=writer)
        self.keys = SqlKeys(db, self.dialect, writer=writer)
        self.jobs = SqlJobs(db, self.dialect, writer=writer)
        self.idempotency = SqlIdempotency(db, self.dialect, writer=writer)
        self.ledger = SqlLedger(db, self.dialect, writer=writer)
        self.people = SqlPeople(db, self.dialect, writer=writer)
        self.sessions = SqlSessions(db, self.dialect, writer=writer)
        self.invites = SqlInvites(db, self.dialect, writer=writer)
        self.downloads = SqlDownloads(db, self.dialect, writer=writer)
        self.sign_in_failures = SqlSignInFailures(db, self.dialect, writer=writer)

    def _commit(self) -> None:
        raise NotImplementedError

    def commit(self) -> None:
        if not self._open:
            raise RuntimeError("commit() outside the unit of work")
        if self.read_only:
            return
        try:
            self._commit()
        finally:
            self._open = False


__all__ = [
    "Cursor",
    "Executor",
    "Params",
    "SqlAccounts",
    "SqlDownloads",
    "SqlIdempotency",
    "SqlInvites",
    "SqlJobs",
    "SqlKeys",
    "SqlLedger",
    "SqlPeople",
    "SqlSessions",
    "SqlSignInFailures",
    "SqlUnitOfWork",
]
