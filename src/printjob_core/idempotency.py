"""Idempotent submission (contract 4.1 rule 3, design decisions 3-5).

A key is remembered per account for `ttl` after the job it made. The fingerprint binds it
to the account, the normalised options and the SHA-256 of the image bytes, so "the same
request" means exactly that and nothing looser.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from printjob_core.errors import IdempotencyKeyReused
from printjob_core.model import IdempotencyRecord, JobOptions
from printjob_core.options import options_fingerprint_text


def fingerprint(account_id: str, options: JobOptions, image_sha256: str) -> str:
    """SHA-256 over account, normalised options and image digest."""
    text = "\n".join((account_id, options_fingerprint_text(options), image_sha256))
    return hashlib.sha256(text.encode()).hexdigest()


def replayed_job_id(
    record: IdempotencyRecord | None, key_fingerprint: str, now: datetime
) -> str | None:
    """The job a live record points at when the request is the same; None when new.

    Raises `IdempotencyKeyReused` when the key is live but came with another request.
    """
    if record is None or record.expires_at <= now:
        return None
    if record.fingerprint != key_fingerprint:
        raise IdempotencyKeyReused(
            f"Idempotency-Key {record.key!r} was used within the last 24 hours for another "
            "image or other options (job "
            f"{record.job_id}). Use a new key for a different request."
        )
    return record.job_id


def remember(
    account_id: str, key: str, key_fingerprint: str, job_id: str, now: datetime, ttl: timedelta
) -> IdempotencyRecord:
    return IdempotencyRecord(
        account_id=account_id,
        key=key,
        fingerprint=key_fingerprint,
        job_id=job_id,
        created_at=now,
        expires_at=now + ttl,
    )
