"""`Client`: the blocking client of the printjob API."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypeVar

import httpx

from printjob_client import _transport as t
from printjob_client._retry import RetryPolicy
from printjob_client.errors import PrintjobError, WaitTimeout
from printjob_client.models import Account, Job

__all__ = ["Client"]

log = logging.getLogger("printjob_client")
T = TypeVar("T")


class Client:
    """A client of the printjob API (`/v1`) over one connection pool.

    >>> client = Client("pjk1_...", "https://printjob.example.com")
    >>> job = client.convert("logo.png", "logo.svg", format="svg", colors=4)

    `api_key` defaults to `PRINTJOB_API_KEY`, `base_url` to `PRINTJOB_API_URL`, else
    ``http://127.0.0.1:8000``. Requests are retried on their own (see `max_retries`);
    errors raise a `PrintjobError` subclass named after the Problem's code.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx.Timeout = t.DEFAULT_TIMEOUT,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._settings = t.resolve_settings(api_key, base_url)
        self.retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = t.request_headers(self._settings)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    # -- lifetime --

    def close(self) -> None:
        """Close the connection pool (unless it was passed in as `http_client`)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the API --

    def submit(
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
        """Submit one image (a path, bytes or a binary file); returns the queued job.

        Options left as None take the API's defaults. The request carries an
        Idempotency-Key (a new UUID unless `idempotency_key` is given) and every resend
        (after a lost connection, a 503, a 429 `rate_limited`, a 500) carries the same key,
        so one call never makes two jobs nor holds two credits. `Job.replayed` tells
        whether the key returned an earlier job.
        """
        name, data = t.read_image(image)
        fields = t.form_fields(
            format=format, size=size, dpi=dpi, colors=colors, background=background
        )
        key = idempotency_key if idempotency_key is not None else t.new_idempotency_key()

        def attempt() -> Job:
            response = self._send(
                "POST",
                "/v1/jobs",
                headers={"Idempotency-Key": key},
                data=fields,
                files=t.multipart(name, data),
            )
            return t.parse_job(response)

        return self._with_retries(attempt, "POST /v1/jobs")

    def get_job(self, job: t.JobRef) -> Job:
        """The job as it is now."""
        return self._with_retries(
            lambda: t.parse_job(self._send("GET", t.job_path(job))), "GET job"
        )

    def wait(
        self,
        job: t.JobRef,
        on_progress: Callable[[Job], object] | None = None,
        *,
        timeout: float | None = None,
    ) -> Job:
        """Poll the job at the pace the server asks (`Retry-After`) until it is final.

        Returns the final job whatever its status (check `job.succeeded`). `on_progress`
        is called with the job first and then whenever its status, phase or progress
        changed. `timeout` (seconds; none by default, jobs may take minutes) raises
        `WaitTimeout` with the last job seen.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        current = self.get_job(job) if isinstance(job, str) else job
        seen: tuple[str, str | None, int | None] | None = None
        while True:
            if on_progress is not None and t.progress_key(current) != seen:
                seen = t.progress_key(current)
                on_progress(current)
            if current.finished:
                return current
            pause = t.poll_delay(current)
            if deadline is not None and time.monotonic() + pause > deadline:
                raise WaitTimeout(
                    f"job {current.id} is still {current.status} after {timeout} s", job=current
                )
            time.sleep(pause)
            current = self.get_job(current.id)

    def download(self, job: t.JobRef, to: str | os.PathLike[str] | IO[bytes]) -> None:
        """Write a succeeded job's file to a path (replaced whole, never left half-written)
        or into a binary file object."""
        if not isinstance(to, str | os.PathLike):
            to.write(self.download_bytes(job))
            return
        target = Path(to)

        def attempt() -> None:
            part = t.temp_path(target)
            try:
                with (
                    self._stream("GET", t.job_path(job, "/result")) as response,
                    open(part, "wb") as out,
                ):
                    for chunk in response.iter_bytes():
                        out.write(chunk)
                os.replace(part, target)
            except httpx.HTTPError as exc:
                raise t.connection_error(exc, self._settings) from exc
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(part)

        self._with_retries(attempt, "GET result")

    def download_bytes(self, job: t.JobRef) -> bytes:
        """A succeeded job's file, in memory."""
        return self._with_retries(
            lambda: self._send("GET", t.job_path(job, "/result")).content, "GET result"
        )

    def convert(
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
        on_progress: Callable[[Job], object] | None = None,
        timeout: float | None = None,
    ) -> Job:
        """Submit, wait and download in one call; returns the succeeded job.

        Raises `JobFailed` (or `JobCanceled`) when the job ends without a file; nothing is
        charged then.
        """
        job = self.submit(
            image,
            format=format,
            size=size,
            dpi=dpi,
            colors=colors,
            background=background,
            idempotency_key=idempotency_key,
        )
        job = self.wait(job, on_progress, timeout=timeout)
        error = t.final_error(job)
        if error is not None:
            raise error
        self.download(job, to)
        return job

    def cancel(self, job: t.JobRef) -> Job:
        """Cancel an unfinished job (nothing is charged); canceling again changes nothing.

        A job that already succeeded or failed raises `JobNotCancelable`.
        """
        return self._with_retries(
            lambda: t.parse_job(self._send("POST", t.job_path(job, "/cancel"))), "cancel"
        )

    def account(self) -> Account:
        """Credits and limits of the key's account."""
        return self._with_retries(
            lambda: t.parse_account(self._send("GET", "/v1/account")), "GET /v1/account"
        )

    # -- plumbing --

    def _url(self, path: str) -> str:
        return self._settings.base_url + path

    def _send(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str] | None = None,
        data: Mapping[str, str] | None = None,
        files: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        """One request; an error answer raises its `PrintjobError`."""
        try:
            response = self._http.request(
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

    @contextlib.contextmanager
    def _stream(self, method: str, path: str) -> Iterator[httpx.Response]:
        with self._http.stream(method, self._url(path), headers=self._headers) as response:
            if not response.is_success:
                response.read()
                raise t.error_from_response(response)
            yield response

    def _with_retries(self, attempt: Callable[[], T], what: str) -> T:
        retries = 0
        while True:
            try:
                return attempt()
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
                time.sleep(pause)
