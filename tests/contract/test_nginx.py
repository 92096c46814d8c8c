"""The shipped nginx site in front of the real server (docs/deploy.md).

Real nginx from the Debian package (`apt-get install nginx`; `make system-deps` installs
it) runs as a foreground master with its own prefix under the test's temporary directory,
listening on loopback. Its site is `deploy/nginx/printjob.conf` itself, with the
placeholders replaced as docs/deploy.md says (loopback ports, the API's address, a test
certificate), so the file operators install is the file tested; clients talk TLS to it and
check its certificate. Behind it runs `printjob serve` with the `PRINTJOB_TRUSTED_PROXIES`
of `deploy/systemd/printjob.env`.

Clients bind their own loopback source addresses (127.0.0.2, 127.0.0.3, ...: all of
127.0.0.0/8 is the loopback interface), so nginx sees different client addresses exactly
as it would on a public interface, while every request reaches the API from nginx's
127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import attrs
import httpx
import pytest

from printjob_adapters.settings import TRUSTED_PROXIES, read_settings_file
from tests.contract.support import (
    PROBLEM_JSON,
    ROOT,
    Client,
    ServerProcess,
    assert_problem,
    busy_png,
    free_port,
    fresh_window,
    png,
)

SITE = ROOT / "deploy" / "nginx" / "printjob.conf"
ENV_FILE = ROOT / "deploy" / "systemd" / "printjob.env"
MAX_REQUEST = 31_457_280  # contract section 8: 30 MB
MB = 1024 * 1024


def make_test_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made for this run only by the
    openssl command (so that the TLS server block of the site is what is tested)."""
    certificate, key = directory / "tls.crt", directory / "tls.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-days", "2", "-nodes", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(certificate),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )  # fmt: skip
    key.chmod(0o600)
    return certificate, key


def nginx_binary() -> str:
    """The Debian package's nginx (in /usr/sbin, which a non-root PATH may lack)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    assert found, "nginx is not installed: `make system-deps` (or `apt-get install -y nginx`)"
    return found


@attrs.define
class Nginx:
    """One nginx master (foreground) running the shipped site on loopback ports."""

    prefix: Path
    upstream: str
    https_port: int = attrs.field(factory=free_port)
    http_port: int = attrs.field(factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    def trust(self) -> ssl.SSLContext:
        """A client TLS context that trusts this run's test certificate (after start)."""
        return ssl.create_default_context(cafile=str(self.prefix / "tls.crt"))

    @property
    def plain_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def site(self) -> str:
        """deploy/nginx/printjob.conf with its placeholders replaced (docs/deploy.md)."""
        certificate, key = make_test_certificate(self.prefix)
        text = SITE.read_text()
        for placeholder, value in {
            "__SERVER_NAME__": "127.0.0.1",
            "__LISTEN_HTTPS__": f"127.0.0.1:{self.https_port}",
            "__LISTEN_HTTP__": f"127.0.0.1:{self.http_port}",
            "__UPSTREAM__": self.upstream,
            "__TLS_CERTIFICATE_KEY__": str(key),
            "__TLS_CERTIFICATE__": str(certificate),
        }.items():
            assert placeholder in text, placeholder
            text = text.replace(placeholder, value)
        left = re.findall(r"__[A-Z_]+__", text)
        assert not left, f"placeholders not replaced: {left}"
        return text

    def main_config(self) -> str:
        """What /etc/nginx/nginx.conf provides on a server, with every path in the prefix."""
        temp = self.prefix / "temp"
        paths = {name: temp / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
        for path in paths.values():
            path.mkdir(parents=True, exist_ok=True)
        # As root, nginx's worker processes would switch to `nobody`, who may not enter
        # the test's temporary directory: keep them as the current user.
        user = "user root;\n" if os.geteuid() == 0 else ""
        return (
            f"{user}worker_processes 1;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "    default_type application/octet-stream;\n"
            f"    access_log {self.prefix / 'access.log'};\n"
            f"    client_body_temp_path {paths['body']};\n"
            f"    proxy_temp_path {paths['proxy']};\n"
            f"    fastcgi_temp_path {paths['fastcgi']};\n"
            f"    uwsgi_temp_path {paths['uwsgi']};\n"
            f"    scgi_temp_path {paths['scgi']};\n"
            f"    include {self.prefix / 'printjob.conf'};\n"
            "}\n"
        )

    def start(self, timeout: float = 15.0) -> Nginx:
        self.prefix.mkdir(parents=True, exist_ok=True)
        (self.prefix / "printjob.conf").write_text(self.site())
        conf = self.prefix / "nginx.conf"
        conf.write_text(self.main_config())
        error_log = self.prefix / "error.log"
        self.process = subprocess.Popen(
            [
                nginx_binary(),
                "-p",
                f"{self.prefix}/",
                "-c",
                str(conf),
                "-e",
                str(error_log),
                "-g",
                f"daemon off; pid {self.prefix / 'nginx.pid'};",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.log()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.https_port), timeout=1).close()
                socket.create_connection(("127.0.0.1", self.http_port), timeout=1).close()
                return self
            time.sleep(0.05)
        raise RuntimeError(f"nginx did not listen in {timeout} s: {self.log()}")

    def log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(no error log)"

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # SIGTERM: fast shutdown of the master and its worker
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


@attrs.frozen
class Front:
    """nginx in front of a printjob server."""

    nginx: Nginx
    server: ServerProcess
    tls: ssl.SSLContext

    def client(self, source: str, key: str | None = None) -> httpx.Client:
        """A client connecting to nginx from the loopback address `source`."""
        transport = httpx.HTTPTransport(verify=self.tls, local_address=source)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(
            base_url=self.nginx.url, transport=transport, headers=headers, timeout=60
        )


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    root = tmp_path_factory.mktemp("nginx")
    trusted = read_settings_file(ENV_FILE)[TRUSTED_PROXIES]
    assert trusted == "127.0.0.1"
    server = ServerProcess(root / "data", workers=1, PRINTJOB_TRUSTED_PROXIES=trusted)
    nginx = Nginx(root / "nginx", upstream=f"127.0.0.1:{server.port}")
    # Location and result.url name the public address: nginx's.
    server.settings["PRINTJOB_BASE_URL"] = nginx.url
    server.start()
    try:
        nginx.start()
        try:
            yield Front(nginx, server, nginx.trust())
        finally:
            nginx.stop()
    finally:
        server.stop()


@pytest.fixture
def account(front: Front) -> Iterator[Client]:
    with front.server.account(credits=10) as client:
        yield client


# -- request bodies of an exact size --

BOUNDARY = "printjob-nginx-test"


def multipart(image: bytes, **fields: str) -> bytes:
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\n'
        "Content-Type: image/png\r\n\r\n".encode()
        + image
        + b"\r\n"
    )
    parts.append(f"--{BOUNDARY}--\r\n".encode())
    return b"".join(parts)


def padded_png(image: bytes, size: int) -> bytes:
    """The PNG `image` grown to `size` bytes by a private ancillary chunk before IEND.

    Decoders skip ancillary chunks they do not know, so the picture stays what it was
    (and quick to convert) while the upload has the size wanted.
    """
    iend = image[-12:]
    assert iend[4:8] == b"IEND"
    data = bytes(size - len(image) - 12)
    kind = b"prVt"  # ancillary, private, safe to copy
    chunk = struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    padded = image[:-12] + chunk + iend
    assert len(padded) == size
    return padded


def upload_of(total: int, picture: bytes | None = None, **fields: str) -> bytes:
    """A `POST /v1/jobs` body of exactly `total` bytes: a real picture, padded."""
    picture = png(200, 160) if picture is None else picture
    overhead = len(multipart(b"", **fields))
    body = multipart(padded_png(picture, total - overhead), **fields)
    assert len(body) == total
    return body


def post_upload(client: httpx.Client, body: bytes) -> httpx.Response:
    return client.post(
        "/v1/jobs",
        content=body,
        headers={"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
    )


def wrong_key(key: str) -> str:
    """A key of the right shape that is not the account's."""
    return key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")


# -- the tests --


def test_a_25_mb_upload_is_accepted_through_nginx(front: Front, account: Client) -> None:
    """nginx buffers a 25 MB upload and hands it to the API, which accepts it (202)."""
    body = upload_of(25 * MB, format="svg")
    with front.client("127.0.0.2", account.key) as client:
        started = time.perf_counter()
        response = post_upload(client, body)
        seconds = time.perf_counter() - started
        assert response.status_code == 202, response.text
        job = response.json()
        assert job["status"] == "queued"
        # The public address in Location is nginx's (PRINTJOB_BASE_URL).
        assert response.headers["location"] == f"{front.nginx.url}/v1/jobs/{job['id']}"
        assert response.headers["cache-control"] == "no-store"
        assert response.headers["strict-transport-security"] == "max-age=31536000"
        print(f"\n25 MB upload ({len(body):,} bytes) through nginx: 202 in {seconds:.2f} s")
    finished = account.wait(job["id"])
    assert finished["status"] == "succeeded", finished


def test_a_request_over_30_mb_is_refused_by_nginx_with_the_api_problem(
    front: Front, account: Client
) -> None:
    """Exactly 30 MB passes; one byte more, or 31 MB, gets the API's 413 Problem from nginx."""
    with front.client("127.0.0.4", account.key) as client:
        response = post_upload(client, upload_of(MAX_REQUEST, format="svg"))
        assert response.status_code == 202, response.text
        over = post_upload(client, upload_of(MAX_REQUEST + 1, format="svg"))
        body = assert_problem(over, 413, "image_too_large", param="image")
        assert body["detail"].startswith("The request is over 31,457,280 bytes")
    # nginx answered, not the API: the API checks the key first and would say 401 to a
    # wrong one. The answer is still a Problem a client can act on, with the API's type.
    with front.client("127.0.0.4", wrong_key(account.key)) as stranger:
        too_big = post_upload(stranger, upload_of(31 * MB, format="svg"))
        problem = assert_problem(too_big, 413, "image_too_large", param="image")
        unauthenticated = stranger.get("/v1/account")
        api_problem = assert_problem(unauthenticated, 401, "unauthenticated")
    assert problem["type"].split("#")[0] == api_problem["type"].split("#")[0]
    assert too_big.headers["content-type"].startswith(PROBLEM_JSON)


def test_the_wrong_key_limit_counts_per_real_client_address(front: Front, account: Client) -> None:
    """Contract 5.5 behind nginx: the limit follows the client's own address, unspoofable."""
    bad = wrong_key(account.key)
    # Wrong keys are counted per clock minute: the 32 requests below take well under a
    # second, so 5 s left in the minute is plenty (and waiting is at most 5 s).
    fresh_window(margin=5)
    with (
        front.client("127.0.0.2", bad) as limited,
        front.client("127.0.0.3", bad) as neighbour,
        front.client("127.0.0.2", account.key) as owner,
    ):
        for _ in range(30):
            assert_problem(limited.get("/v1/account"), 401, "unauthenticated")
        assert_problem(limited.get("/v1/account"), 429, "rate_limited")
        # Naming another address does not help: nginx replaces X-Forwarded-For.
        spoofed = limited.get("/v1/account", headers={"X-Forwarded-For": "203.0.113.9"})
        assert_problem(spoofed, 429, "rate_limited")
        # Another client address is counted on its own, although every request reaches
        # the API from nginx's 127.0.0.1 ...
        assert_problem(neighbour.get("/v1/account"), 401, "unauthenticated")
        # ... and cannot be made to share the limited address's count either.
        framed = neighbour.get("/v1/account", headers={"X-Forwarded-For": "127.0.0.2"})
        assert_problem(framed, 401, "unauthenticated")
        # A valid key from the limited address keeps working.
        assert owner.get("/v1/account").status_code == 200


def test_a_result_download_passes_through_nginx_intact(front: Front, account: Client) -> None:
    """The print PNG downloaded through nginx is byte for byte the one the API serves.

    A busy picture makes a file of over 1 MB, more than nginx's memory buffers for one
    answer (`proxy_buffers 16 64k`): it passes through them in several rounds.
    """
    response = account.submit(image=busy_png(800, 200), format="png")
    assert response.status_code == 202, response.text
    job = account.wait(response.json()["id"])
    assert job["status"] == "succeeded", job
    url = job["result"]["url"]
    assert url.startswith(f"{front.nginx.url}/v1/jobs/")
    direct = account.get(f"/v1/jobs/{job['id']}/result")
    assert direct.status_code == 200
    with front.client("127.0.0.2", account.key) as client:
        started = time.perf_counter()
        proxied = client.get(url)
        seconds = time.perf_counter() - started
    assert proxied.status_code == 200, proxied.text
    assert proxied.content == direct.content
    assert len(proxied.content) == job["result"]["bytes"]
    for header in ("content-type", "content-disposition", "x-content-type-options"):
        assert proxied.headers[header] == direct.headers[header]
    assert proxied.headers["content-disposition"] == f'attachment; filename="{job["id"]}.png"'
    print(f"\nresult download through nginx: {len(proxied.content):,} bytes in {seconds:.3f} s")


def test_plain_http_refuses_api_calls_instead_of_redirecting(front: Front) -> None:
    """A client set up with http:// learns at once; a browser is sent to https://."""
    with httpx.Client(base_url=front.nginx.plain_url, timeout=10) as plain:
        refused = plain.get("/v1/account", headers={"Authorization": "Bearer x"})
        assert refused.status_code == 403
        assert "HTTPS only" in refused.text
        home = plain.get("/")
        assert home.status_code == 301
        assert home.headers["location"] == "https://127.0.0.1/"


def test_nginx_answers_server_busy_while_the_api_is_down(tmp_path: Path) -> None:
    """During a restart (nothing on the API's port) clients get 503 server_busy, a Problem."""
    nobody = f"127.0.0.1:{free_port()}"
    nginx = Nginx(tmp_path / "nginx", upstream=nobody).start()
    try:
        tls = nginx.trust()
        with httpx.Client(base_url=nginx.url, verify=tls, timeout=10) as client:
            for method, path in (("GET", "/v1/account"), ("POST", "/v1/jobs")):
                response = client.request(method, path, headers={"Authorization": "Bearer x"})
                body = assert_problem(response, 503, "server_busy")
                assert response.headers["retry-after"] == "5"
                assert response.headers["cache-control"] == "no-store"
                assert "Idempotency-Key" in body["detail"]
    finally:
        nginx.stop()
