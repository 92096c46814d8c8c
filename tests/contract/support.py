"""Helpers of the contract suite: the real server as a subprocess, accounts, images, polling."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, ImageDraw

from tests.postgres_support import database_for, use_postgres_servers

ROOT = Path(__file__).resolve().parents[2]
FINAL = ("succeeded", "failed", "canceled")
PROBLEM_JSON = "application/problem+json"
JOB_ID_RE = r"job_[0-9a-f]{32}"


def fresh_window(margin: float = 15.0) -> None:
    """Per-minute limits count in fixed clock minutes: start a burst early in one."""
    into = time.time() % 60
    if into > 60 - margin:
        time.sleep(60 - into + 0.2)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def base_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRINTJOB_")}
    env["PRINTJOB_DATA_DIR"] = str(data_dir)
    if use_postgres_servers():
        # PRINTJOB_TEST_STORAGE=postgresql: one database per data directory.
        env["PRINTJOB_DATABASE_URL"] = database_for(data_dir)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    if env.get("PRINTJOB_BLOBS") == "database" and not env.get("PRINTJOB_DATABASE_URL"):
        # Blobs in the database need PostgreSQL, whatever PRINTJOB_TEST_STORAGE says.
        env["PRINTJOB_DATABASE_URL"] = database_for(data_dir)
    return env


def cli(data_dir: Path, *args: str, **extra: str) -> Any:
    """Run the real `printjob` command line; JSON output is parsed."""
    done = subprocess.run(
        [sys.executable, "-m", "printjob_http.cli", *args],
        env=base_env(data_dir, **extra),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"printjob {' '.join(args)} failed: {done.stderr}"
    out = done.stdout.strip()
    if "--json" in args:
        return json.loads(out)
    return out


class ServerProcess:
    """`printjob serve` on a free port, in its own process group."""

    def __init__(self, data_dir: Path, workers: int = 1, **settings: str) -> None:
        self.data_dir = data_dir
        self.workers = workers
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.settings = {"PRINTJOB_BASE_URL": self.base_url, **settings}
        self.log_path = data_dir.parent / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._http: httpx.Client | None = None

    @property
    def http(self) -> httpx.Client:
        """An unauthenticated client of this server (one connection pool for the suite)."""
        if self._http is None:
            self._http = httpx.Client(base_url=self.base_url, timeout=30)
        return self._http

    def start(self, timeout: float = 30.0) -> ServerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the process's life
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "printjob_http.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
            ],
            env=base_env(self.data_dir, **self.settings),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log()}")
            try:
                if httpx.get(f"{self.base_url}/v1/openapi.json", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"server did not answer in {timeout} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def stop(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL the whole process group: the server and its workers at once."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=20)

    def operator(self) -> Any:
        """The operator's services on this server's data directory (same database)."""
        from printjob_adapters.bootstrap import bootstrap
        from printjob_adapters.settings import Settings

        env = base_env(self.data_dir, **self.settings)
        settings = Settings.from_env({k: v for k, v in env.items() if k.startswith("PRINTJOB_")})
        return bootstrap(settings, lazy=True).operator

    def account(self, credits: int = 10, active_jobs_max: int = 3) -> Client:
        operator = self.operator()
        account = operator.create_account(credits, active_jobs_max)
        _key, secret = operator.create_key(account.id)
        return Client(self, account.id, secret)


class Client(httpx.Client):
    """An httpx client authenticated as one account."""

    def __init__(self, server: ServerProcess, account_id: str, key: str) -> None:
        super().__init__(
            base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        self.server = server
        self.account_id = account_id
        self.key = key

    def submit(
        self,
        image: bytes | None = None,
        idempotency_key: str | None = None,
        **fields: str,
    ) -> httpx.Response:
        fields.setdefault("format", "svg")
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        files = {"image": ("picture.png", png() if image is None else image, "image/png")}
        return self.post("/v1/jobs", files=files, data=fields, headers=headers)

    def wait(
        self, job_id: str, timeout: float = 90.0, until: tuple[str, ...] = FINAL
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            response = self.get(f"/v1/jobs/{job_id}")
            if response.status_code == 429:  # the reads-per-minute limit: wait as told
                time.sleep(int(response.headers["retry-after"]))
                continue
            assert response.status_code == 200, response.text
            job: dict[str, Any] = response.json()
            if job["status"] in until:
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} still {job['status']} after {timeout} s")
            time.sleep(0.25)

    def account_view(self) -> dict[str, Any]:
        response = self.get("/v1/account")
        assert response.status_code == 200, response.text
        view: dict[str, Any] = response.json()
        return view


_salt = iter(range(1, 10**9))


def png(
    width: int = 64,
    height: int = 64,
    colors: tuple[tuple[int, int, int], ...] = ((255, 255, 255), (200, 20, 20)),
    fmt: str = "PNG",
) -> bytes:
    """A small two-colour picture; each call differs by one pixel (no accidental replays)."""
    image = Image.new("RGB", (width, height), colors[0])
    draw = ImageDraw.Draw(image)
    draw.rectangle((width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill=colors[1])
    salt = next(_salt)
    image.putpixel((0, 0), (salt % 256, (salt // 256) % 256, 255))
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return buffer.getvalue()


def busy_png(size: int = 1600, shapes: int = 400) -> bytes:
    """A picture with many coloured shapes: takes the engine a few seconds."""
    import random

    rng = random.Random(size * 7919 + shapes + next(_salt))
    image = Image.new("RGB", (size, size), (250, 250, 245))
    draw = ImageDraw.Draw(image)
    palette = [tuple(rng.randrange(256) for _ in range(3)) for _ in range(24)]
    for _ in range(shapes):
        x, y = rng.randrange(size), rng.randrange(size)
        r = rng.randrange(8, size // 8)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=palette[rng.randrange(len(palette))])
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def shaded_png(size: int = 1500, shapes: int = 500) -> bytes:
    """`busy_png`'s shapes, blurred into soft shading: the engine traces it as shaded art
    (tens of colours), which takes it seconds however fast its flat-art path gets (about
    3.7 s of CPU at 1500 px, against 0.6 s for the same shapes unblurred)."""
    from PIL import ImageFilter

    flat = Image.open(io.BytesIO(busy_png(size, shapes)))
    buffer = io.BytesIO()
    flat.filter(ImageFilter.GaussianBlur(6)).save(buffer, "PNG")
    return buffer.getvalue()


def assert_problem(
    response: httpx.Response, status: int, code: str, param: str | None = None
) -> dict[str, Any]:
    """The answer is a contract Problem (2.6) with this status and code."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith(PROBLEM_JSON), response.headers
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["code"] == code, body
    assert body["type"].endswith(f"#error-{code}")
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    if param is not None:
        assert body.get("param") == param, body
    if status in (429, 503):
        assert int(response.headers["retry-after"]) >= 1
    return body


def raw_request(port: int, request: bytes, read_timeout: float = 10.0) -> bytes:
    """Send raw bytes and read what comes back until the server closes or goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as sock:
        sock.sendall(request)
        chunks: list[bytes] = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                if b"\r\n\r\n" in b"".join(chunks) and _complete(b"".join(chunks)):
                    break
        except (TimeoutError, ConnectionResetError):
            pass
    return b"".join(chunks)


def _complete(data: bytes) -> bool:
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return False


def iter_chunks(total: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        size = min(chunk, total - sent)
        sent += size
        yield b"\0" * size
