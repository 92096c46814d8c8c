"""What the sync and async clients share: settings, request bodies, reading answers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeAlias
from urllib.parse import quote

import httpx

from printjob_client.errors import (
    APIConnectionError,
    APITimeoutError,
    PrintjobError,
    UnexpectedResponse,
    error_class,
    parse_retry_after,
)
from printjob_client.models import Account, Job, ParseError

#: What `submit` and `convert` take as the image: a path, the bytes, or a binary file.
ImageInput: TypeAlias = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]
#: A job or its id.
JobRef: TypeAlias = Job | str
#: `size`: ``"WxH"``, ``"original"`` or ``(width, height)``.
SizeInput: TypeAlias = str | tuple[int, int]

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
API_KEY_ENV = "PRINTJOB_API_KEY"
BASE_URL_ENV = "PRINTJOB_API_URL"
#: Polling pace when an unfinished job's answer carried no Retry-After.
DEFAULT_POLL_SECONDS = 3.0
MIN_POLL_SECONDS = 0.5
MAX_POLL_SECONDS = 60.0
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("printjob")
    except Exception:  # not installed as a distribution: a checkout on sys.path
        return "0"


USER_AGENT = f"printjob-client/{_version()} httpx/{httpx.__version__}"


@dataclass(frozen=True, slots=True)
class Settings:
    api_key: str
    base_url: str


def resolve_settings(api_key: str | None, base_url: str | None) -> Settings:
    """The key and address given, else `PRINTJOB_API_KEY` and `PRINTJOB_API_URL`."""
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
    key = key.strip()
    if not key:
        raise ValueError(f"no API key: pass api_key=... or set {API_KEY_ENV}")
    url = (base_url if base_url is not None else os.environ.get(BASE_URL_ENV, "")).strip()
    url = (url or DEFAULT_BASE_URL).rstrip("/")
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValueError(f"base_url must be an http:// or https:// address, not {url!r}")
    return Settings(api_key=key, base_url=url)


def request_headers(settings: Settings) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {settings.api_key}",
        "User-Agent": USER_AGENT,
        "Accept": "application/json",
    }


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def job_id(job: JobRef) -> str:
    return job.id if isinstance(job, Job) else str(job)


def job_path(job: JobRef, suffix: str = "") -> str:
    return f"/v1/jobs/{quote(job_id(job), safe='')}{suffix}"


# -- the submission's body --

_IMAGE_TYPES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def _content_type(data: bytes) -> str:
    for magic, kind in _IMAGE_TYPES:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def read_image(image: ImageInput) -> tuple[str, bytes]:
    """The file name to send and the bytes, read once (resends send the same bytes)."""
    if isinstance(image, bytes | bytearray | memoryview):
        return "image", bytes(image)
    if isinstance(image, str | os.PathLike):
        path = Path(image)
        return path.name or "image", path.read_bytes()
    data = image.read()
    if not isinstance(data, bytes):
        raise TypeError("image must be a path, bytes, or a file opened in binary mode")
    name = getattr(image, "name", None)
    return (Path(name).name if isinstance(name, str) and name else "image"), data


def form_fields(
    *,
    format: str,
    size: SizeInput | None,
    dpi: int | None,
    colors: int | None,
    background: str | None,
) -> dict[str, str]:
    """The text fields of a submission; options left as None are not sent (API defaults)."""
    fields = {"format": str(format)}
    if size is not None:
        if isinstance(size, tuple):
            width, height = size
            fields["size"] = f"{int(width)}x{int(height)}"
        else:
            fields["size"] = str(size)
    if dpi is not None:
        fields["dpi"] = str(int(dpi))
    if colors is not None:
        fields["colors"] = str(int(colors))
    if background is not None:
        fields["background"] = str(background)
    return fields


def multipart(name: str, data: bytes) -> dict[str, tuple[str, bytes, str]]:
    return {"image": (name, data, _content_type(data))}


# -- reading answers --


def connection_error(exc: httpx.HTTPError, settings: Settings) -> APIConnectionError:
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"no answer from {settings.base_url} in time ({reason})")
    return APIConnectionError(f"cannot reach {settings.base_url}: {reason}")


def error_from_response(response: httpx.Response) -> PrintjobError:
    """The exception for an error answer (its body must have been read)."""
    headers = dict(response.headers)
    body: Any = None
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        code: str = body["code"]
        detail = body.get("detail") or body.get("title") or f"HTTP {response.status_code}"
        param = body.get("param")
        title = body.get("title")
        return error_class(code)(
            str(detail),
            code=code,
            param=param if isinstance(param, str) else None,
            status=response.status_code,
            headers=headers,
            title=title if isinstance(title, str) else None,
            problem=body,
        )
    reason = response.reason_phrase or "error"
    return UnexpectedResponse(
        f"unexpected answer {response.status_code} {reason} from {response.request.url}",
        status=response.status_code,
        headers=headers,
    )


def _json_object(response: httpx.Response) -> Mapping[str, Any]:
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        body = None
    if not isinstance(body, dict):
        raise UnexpectedResponse(
            f"answer {response.status_code} from {response.request.url} is not a JSON object",
            status=response.status_code,
            headers=dict(response.headers),
        )
    return body


def parse_job(response: httpx.Response) -> Job:
    body = _json_object(response)
    try:
        return Job.from_dict(
            body,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
            replayed=response.headers.get("idempotent-replayed", "").lower() == "true",
        )
    except ParseError as exc:
        raise UnexpectedResponse(
            f"the job in the answer cannot be read: {exc}",
            status=response.status_code,
            headers=dict(response.headers),
        ) from None


def parse_account(response: httpx.Response) -> Account:
    body = _json_object(response)
    try:
        return Account.from_dict(body)
    except ParseError as exc:
        raise UnexpectedResponse(
            f"the account in the answer cannot be read: {exc}",
            status=response.status_code,
            headers=dict(response.headers),
        ) from None


def poll_delay(job: Job) -> float:
    """Seconds to wait before reading an unfinished job again: the server's Retry-After."""
    seconds = job.retry_after if job.retry_after is not None else DEFAULT_POLL_SECONDS
    return min(MAX_POLL_SECONDS, max(MIN_POLL_SECONDS, seconds))


def progress_key(job: Job) -> tuple[str, str | None, int | None]:
    return (job.status, job.phase, job.progress)


def final_error(job: Job) -> PrintjobError | None:
    """The error `convert` raises for a final job without a file (None if it succeeded)."""
    from printjob_client.errors import JobCanceled, JobFailed

    if job.status == "succeeded":
        return None
    if job.status == "canceled":
        return JobCanceled(f"job {job.id} was canceled; nothing was charged", job=job)
    if job.error is not None:
        return JobFailed(job.error.detail or job.error.code, job=job, code=job.error.code)
    return JobFailed(f"job {job.id} ended {job.status}", job=job)


def temp_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.part")
