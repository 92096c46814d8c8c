"""`ReadViews` answered by a read-only unit of work: correct over any storage.

Storages with a faster way (one SQL statement) bring their own; this one serves the
fakes and any storage that has none.
"""

from __future__ import annotations

from printjob_core.ports import AccountByKey, JobByKey, UnitOfWorkFactory


class UnitOfWorkViews:
    """The `ReadViews` port over a `reader` unit-of-work factory: one snapshot per read."""

    def __init__(self, reader: UnitOfWorkFactory) -> None:
        self._reader = reader

    def job_by_key(self, key_hash: str, job_id: str) -> JobByKey | None:
        with self._reader() as uow:
            key = uow.keys.find_by_hash(key_hash)
            account = None if key is None else uow.accounts.get(key.account_id)
            if key is None or account is None:
                return None
            job = uow.jobs.get(job_id)
        if job is not None and job.account_id != account.id:
            job = None
        return JobByKey(key, account, job)

    def account_by_key(self, key_hash: str) -> AccountByKey | None:
        with self._reader() as uow:
            key = uow.keys.find_by_hash(key_hash)
            account = None if key is None else uow.accounts.get(key.account_id)
            if key is None or account is None:
                return None
            return AccountByKey(key, account, uow.jobs.count_unfinished(account.id))


__all__ = ["UnitOfWorkViews"]
