"""Typed views of the API's answers: `Job` (with its options, result and error) and `Account`.

They are frozen dataclasses built from the JSON the API sends. Fields this version of the
client does not know are ignored (the API only adds fields within `/v1`, contract section 9);
the whole answer stays available as `raw`. Times are timezone-aware `datetime`s in UTC.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "FINAL_STATUSES",
    "Account",
    "Job",
    "JobError",
    "JobOptions",
    "JobResult",
    "Limits",
]

#: Statuses that never change again.
FINAL_STATUSES = frozenset({"succeeded", "failed", "canceled"})


class ParseError(ValueError):
    """An answer is missing a field the client needs, or has it in the wrong type."""


def _get(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(name)
    # bool is an int in Python; no integer field of the API is a boolean.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ParseError(f"field {name!r} is missing or not a {_kind_name(kind)}: {value!r}")
    return value


def _optional(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    if data.get(name) is None:
        return None
    return _get(data, name, kind)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _time(data: Mapping[str, Any], name: str) -> datetime:
    text = _get(data, name, str)
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ParseError(f"field {name!r} is not an ISO 8601 time: {text!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _optional_time(data: Mapping[str, Any], name: str) -> datetime | None:
    return None if data.get(name) is None else _time(data, name)


def _object(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = _get(data, name, dict)
    assert isinstance(value, dict)
    return value


@dataclass(frozen=True, slots=True)
class JobOptions:
    """The options a job was submitted with, as the API normalised them."""

    format: str
    size: str = "original"
    colors: int | None = None
    background: str = "keep"
    #: Echoed only when it was sent; None means the default, 300.
    dpi: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobOptions:
        return cls(
            format=_get(data, "format", str),
            size=_optional(data, "size", str) or "original",
            colors=_optional(data, "colors", int),
            background=_optional(data, "background", str) or "keep",
            dpi=_optional(data, "dpi", int),
        )


@dataclass(frozen=True, slots=True)
class JobResult:
    """The file of a succeeded job."""

    format: str
    width: int
    height: int
    #: File size in bytes.
    bytes: int
    #: Number of colours the file actually has.
    colors: int
    #: Whether the background was actually removed.
    background_removed: bool
    #: Absolute address of the download (`GET /v1/jobs/{id}/result`).
    url: str
    #: When the file is deleted (24 hours after the job ended).
    expires_at: datetime

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobResult:
        return cls(
            format=_get(data, "format", str),
            width=_get(data, "width", int),
            height=_get(data, "height", int),
            bytes=_get(data, "bytes", int),
            colors=_get(data, "colors", int),
            background_removed=_get(data, "background_removed", bool),
            url=_get(data, "url", str),
            expires_at=_time(data, "expires_at"),
        )


@dataclass(frozen=True, slots=True)
class JobError:
    """Why a job failed: `processing_failed` or `interrupted`, and a sentence."""

    code: str
    detail: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobError:
        return cls(code=_get(data, "code", str), detail=_optional(data, "detail", str) or "")


@dataclass(frozen=True, slots=True)
class Job:
    """One job as the API last reported it.

    `retry_after` and `replayed` are not part of the job itself but of the answer it came
    in: the seconds the server asked to wait before polling again (None once final), and
    whether a submission returned an earlier job for the same Idempotency-Key.
    """

    id: str
    status: str
    phase: str | None
    progress: int | None
    created_at: datetime
    finished_at: datetime | None
    options: JobOptions
    credits_charged: int
    result: JobResult | None
    error: JobError | None
    retry_after: float | None = field(default=None, compare=False)
    replayed: bool = field(default=False, compare=False)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def finished(self) -> bool:
        """True once the status is final (`succeeded`, `failed` or `canceled`)."""
        return self.status in FINAL_STATUSES

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        retry_after: float | None = None,
        replayed: bool = False,
    ) -> Job:
        result = data.get("result")
        error = data.get("error")
        return cls(
            id=_get(data, "id", str),
            status=_get(data, "status", str),
            phase=_optional(data, "phase", str),
            progress=_optional(data, "progress", int),
            created_at=_time(data, "created_at"),
            finished_at=_optional_time(data, "finished_at"),
            options=JobOptions.from_dict(_object(data, "options")),
            credits_charged=_optional(data, "credits_charged", int) or 0,
            result=JobResult.from_dict(result) if isinstance(result, dict) else None,
            error=JobError.from_dict(error) if isinstance(error, dict) else None,
            retry_after=retry_after,
            replayed=replayed,
            raw=dict(data),
        )


@dataclass(frozen=True, slots=True)
class Limits:
    """The account's limits (`GET /v1/account`, `limits`)."""

    active_jobs: int
    idempotency_ttl_seconds: int
    job_cost: int
    max_upload_bytes: int
    max_upload_pixels: int
    reads_per_minute: int
    result_ttl_seconds: int
    submissions_per_minute: int
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Limits:
        names = [f.name for f in dataclasses.fields(cls) if f.name != "raw"]
        values = {name: _get(data, name, int) for name in names}
        return cls(**values, raw=dict(data))


@dataclass(frozen=True, slots=True)
class Account:
    """Credits and limits of the account the key belongs to."""

    credits_balance: int
    credits_held: int
    credits_available: int
    active_jobs: int
    active_jobs_max: int
    limits: Limits
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Account:
        return cls(
            credits_balance=_get(data, "credits_balance", int),
            credits_held=_get(data, "credits_held", int),
            credits_available=_get(data, "credits_available", int),
            active_jobs=_get(data, "active_jobs", int),
            active_jobs_max=_get(data, "active_jobs_max", int),
            limits=Limits.from_dict(_object(data, "limits")),
            raw=dict(data),
        )
