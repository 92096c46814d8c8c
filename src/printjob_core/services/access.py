"""Who is asking, and whether they may: API keys (contract section 5) and the per-minute
limits (section 8). Every client-facing service asks this one first."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from printjob_core.errors import AccountDisabled, RateLimited, ServerBusy, Unauthenticated
from printjob_core.keys import (
    bearer_token,
    hash_key,
    looks_like_key,
    same_hash,
    use_worth_noting,
)
from printjob_core.limits import reads_bucket, submissions_bucket, wrong_keys_bucket
from printjob_core.model import Account, ApiKey
from printjob_core.ports import AccountByKey, JobByKey, UnitOfWork
from printjob_core.services.common import Ports

#: What a keyed read found: the key and its account, with the data asked for.
Found = TypeVar("Found", JobByKey, AccountByKey)


class Access:
    """Authentication and the per-minute counts of a client's requests."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.policy = ports.policy

    def authenticate(self, authorization: str | None, client_address: str) -> Account:
        """The account behind a Bearer key; 401, 403, or 429 for a network sending wrong keys."""
        token = _token(authorization)
        with self.ports.reader() as uow:
            key, owner = _owner(uow, token)
        account = self._admit(owner, client_address)
        if key is not None:
            self.note_use(key)
        return account

    def keyed_read(
        self, authorization: str | None, client_address: str, read: Callable[[str], Found | None]
    ) -> Found:
        """`read(key_hash)` for the request's key, then what `authenticate` would raise
        for its owner (401, 403, 429), then the read counted against the account.

        The polling reads are most of the API's traffic: the key, its account and the
        answer come from one read of storage instead of one per repository.
        """
        token = _token(authorization)
        token_hash = hash_key(token)
        found = read(token_hash) if looks_like_key(token) else None
        owner = None if found is None else _live_owner(found.key, found.account, token_hash)
        account = self._admit(owner, client_address)
        assert found is not None  # `_admit` refuses a request without an owner
        # Before the count: a read tried on the event loop and handed to a thread because
        # this write would have waited must not have been counted already.
        self.note_use(found.key)
        self.count_read(account)
        return found

    def note_use(self, key: ApiKey) -> None:
        """Write when the key was last used, at most once a minute (the account page shows
        it); the reads that found the key carry the time already, so most requests write
        nothing."""
        now = self.ports.clock.now()
        if not use_worth_noting(key, now):
            return
        try:
            with self.ports.uow() as uow:
                uow.keys.touch(key.id, now)
                uow.commit()
        except ServerBusy:
            # The time is for the account page: a database too busy to write it now must
            # not fail the request (the next request a minute on writes it).
            return

    def count_submission(self, account: Account) -> None:
        """Count a submission against the per-minute limit; raise `RateLimited` when over."""
        self._count(
            submissions_bucket(account.id), self.policy.submissions_per_minute, "submissions"
        )

    def count_read(self, account: Account) -> None:
        """Count any other authenticated request against the per-minute limit."""
        self._count(reads_bucket(account.id), self.policy.reads_per_minute, "requests")

    def _admit(self, owner: Account | None, client_address: str) -> Account:
        """Raise what a request with this key's owner gets (401, 403, 429); else the owner.

        A wrong key is counted against its network's limit (contract 5.5), so a network
        guessing keys gets 429 while requests with a valid key go on.
        """
        if owner is None:
            decision = self.ports.limiter.hit(
                wrong_keys_bucket(client_address),
                self.policy.wrong_keys_per_minute,
                self.ports.clock.now(),
            )
            if not decision.allowed:
                raise RateLimited(
                    f"More than {self.policy.wrong_keys_per_minute} wrong API keys came from "
                    f"your network this minute; wait {decision.retry_after} s. Requests with "
                    "a valid key are not affected.",
                    retry_after=decision.retry_after,
                )
            raise Unauthenticated(
                "The API key is not valid: it is mistyped, revoked, or not a printjob key.",
                key_sent=True,
            )
        if owner.disabled:
            raise AccountDisabled(
                "This account is disabled; its keys cannot be used. Contact the operator."
            )
        return owner

    def count(self, bucket: str, limit: int, what: str) -> None:
        """Count one request in `bucket`; raise `RateLimited` when over `limit` a minute."""
        self._count(bucket, limit, what)

    def _count(self, bucket: str, limit: int, what: str) -> None:
        decision = self.ports.limiter.hit(bucket, limit, self.ports.clock.now())
        if not decision.allowed:
            raise RateLimited(
                f"At most {limit} {what} per minute are allowed for an account; wait "
                f"{decision.retry_after} s and send it again.",
                retry_after=decision.retry_after,
            )


def _token(authorization: str | None) -> str:
    """The Bearer token of an Authorization header; 401 when there is none."""
    token = bearer_token(authorization)
    if token is None:
        raise Unauthenticated(
            "Send your API key as 'Authorization: Bearer <API_KEY>'.", key_sent=False
        )
    return token


def _owner(uow: UnitOfWork, token: str) -> tuple[ApiKey | None, Account | None]:
    """The key and account of a live key, or (None, None) for a token that is no live key
    of ours."""
    if not looks_like_key(token):
        return None, None
    token_hash = hash_key(token)
    key = uow.keys.find_by_hash(token_hash)
    if key is None:
        return None, None
    owner = _live_owner(key, uow.accounts.get(key.account_id), token_hash)
    return (None, None) if owner is None else (key, owner)


def _live_owner(key: ApiKey, account: Account | None, token_hash: str) -> Account | None:
    """The key's account if the key is live and its stored hash is the token's.

    Storage found the key by its hash; comparing again in constant time keeps a timing
    difference of the lookup from ever deciding who gets in.
    """
    if not key.is_live or not same_hash(key.key_hash, token_hash):
        return None
    return account


__all__ = ["Access", "Found"]
