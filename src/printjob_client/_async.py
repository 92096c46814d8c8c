"""`AsyncClient`: the asyncio client of the printjob API (the same calls as `Client`)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

import httpx

from printjob_client import _transport as t
from printjob_client._retry import RetryPolicy
from printjob_client.errors import PrintjobError, WaitTimeout
from printjob_client.models import Account, Job

__all__ = ["AsyncClient"]

log = logging.getLogger("printjob_client")
T = TypeVar("T")

#: `on_progress` of the async client: a plain function or a coroutine function.
ProgressCallback = Callable[[Job], object] | Callable[[Job], Awaitable[object]]


class AsyncClient:
    """The asyncio client of the printjob API; the same calls as `Client`, awaited.

    >>> async with AsyncClient("pjk1_...", "https://printjob.example.com") as client:
    ...     job = await client.convert("logo.png", "logo.svg", format="svg")
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = t.DEFAULT_TIMEOUT,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._settings = t.resolve_settings(api_key, base_url)
        self.retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._headers = t.request_headers(self._settings)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    async def aclose(self) -> None:
        """Close the connection pool (unless it was passed in as `http_client`)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the API --

    async def submit(
        self,
        image: t.ImageInput,
        *,
        format: str,
        size: t.SizeInput | None = None,
        dpi: int | None = None,
        colors: int | None = None,
        background: str | None = None,
        idempotency_key: str | None = None,
    ) -> Job:
        """Submit one image; see `Client.submit` (same key on every resend)."""
        name, data = t.read_image(image)
        fields = t.form_fields(
            format=format, size=size, dpi=dpi, colors=colors, background=background
        )
        key = idempotency_key if idempotency_key is not None else t.new_idempotency_key()

        async def attempt() -> Job:
            response = await self._send(
                "POST",
                "/v1/jobs",
                headers={"Idempotency-Key": key},
                data=fields,
                files=t.multipart(name, data),
            )
            return t.parse_job(response)

        return await self._with_retries(attempt, "POST /v1/jobs")

    async def get_job(self, job: t.JobRef) -> Job:
        """The job as it is now."""

        async def attempt() -> Job:
            return t.parse_job(await self._send("GET", t.job_path(job)))

        return await self._with_retries(attempt, "GET job")

    async def wait(
        self,
        job: t.JobRef,
        on_progress: ProgressCallback | None = None,
        *,
        timeout: float | None = None,
    ) -> Job:
        """Poll until the job is final; see `Client.wait`. `on_progress` may be async."""
        deadline = None if timeout is None else time.monotonic() + timeout
        current = await self.get_job(job) if isinstance(job, str) else job
        seen: tuple[str, str | None, int | None] | None = None
        while True:
            if on_progress is not None and t.progress_key(current) != seen:
                seen = t.progress_key(current)
                outcome = on_progress(current)
                if inspect.isawaitable(outcome):
                    await outcome
            if current.finished:
                return current
            pause = t.poll_delay(current)
            if deadline is not None and time.monotonic() + pause > deadline:
                raise WaitTimeout(
                    f"job {current.id} is still {current.status} after {timeout} s", job=current
                )
            await asyncio.sleep(pause)
            current = await self.get_job(current.id)

    async def download(self, job: t.JobRef, to: str | os.PathLike[str] | IO[bytes]) -> None:
        """Write a succeeded job's file to a path (replaced whole) or a binary file object."""
        if not isinstance(to, str | os.PathLike):
            to.write(await self.download_bytes(job))
            return
        target = Path(to)

        async def attempt() -> None:
            part = t.temp_path(target)
            try:
                async with self._stream("GET", t.job_path(job, "/result")) as response:
                    with open(part, "wb") as out:
                        async for chunk in response.aiter_bytes():
                            out.write(chunk)
                os.replace(part, target)
            except httpx.HTTPError as exc:
                raise t.connection_error(exc, self._settings) from exc
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(part)

        await self._with_retries(attempt, "GET result")

    async def download_bytes(self, job: t.JobRef) -> bytes:
        """A succeeded job's file, in memory."""

        async def attempt() -> bytes:
            return (await self._send("GET", t.job_path(job, "/result"))).content

        return await self._with_retries(attempt, "GET result")

    async def convert(
        self,
        image: t.ImageInput,
        to: str | os.PathLike[str] | IO[bytes],
        *,
        format: str,
        size: t.SizeInput | None = None,
        dpi: int | None = None,
        colors: int | None = None,
        background: str | None = None,
        idempotency_key: str | None = None,
        on_progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Job:
        """Submit, wait and download; returns the succeeded job (else `JobFailed`)."""
        job = await self.submit(
            image,
            format=format,
            size=size,
            dpi=dpi,
            colors=colors,
            background=background,
            idempotency_key=idempotency_key,
        )
        job = await self.wait(job, on_progress, timeout=timeout)
        error = t.final_error(job)
        if error is not None:
            raise error
        await self.download(job, to)
        return job

    async def cancel(self, job: t.JobRef) -> Job:
        """Cancel an unfinished job; see `Client.cancel`."""

        async def attempt() -> Job:
            return t.parse_job(await self._send("POST", t.job_path(job, "/cancel")))

        return await self._with_retries(attempt, "cancel")

    async def account(self) -> Account:
        """Credits and limits of the key's account."""

        async def attempt() -> Account:
            return t.parse_account(await self._send("GET", "/v1/account"))

        return await self._with_retries(attempt, "GET /v1/account")

    # -- plumbing --

    def _url(self, path: str) -> str:
        return self._settings.base_url + path

    async def _send(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str] | None = None,
        data: Mapping[str, str] | None = None,
        files: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        try:
            response = await self._http.request(
                method,
                self._url(path),
                headers={**self._headers, **(headers or {})},
                data=data,
                files=files,
            )
        except httpx.HTTPError as exc:
            raise t.connection_error(exc, self._settings) from exc
        if response.is_success:
            return response
        raise t.error_from_response(response)

    @contextlib.asynccontextmanager
    async def _stream(self, method: str, path: str) -> AsyncIterator[httpx.Response]:
        async with self._http.stream(method, self._url(path), headers=self._headers) as response:
            if not response.is_success:
                await response.aread()
                raise t.error_from_response(response)
            yield response

    async def _with_retries(self, attempt: Callable[[], Awaitable[T]], what: str) -> T:
        retries = 0
        while True:
            try:
                return await attempt()
            except PrintjobError as error:
                pause = self.retry.delay(error, retries)
                if pause is None:
                    raise
                retries += 1
                log.info(
                    "printjob %s: %s (%s); retry %d of %d in %.1f s",
                    what,
                    error.code,
                    error.detail,
                    retries,
                    self.retry.max_retries,
                    pause,
                )
                await asyncio.sleep(pause)
