"""Security (issue part 4): keys stored and compared safely, never logged, revocation at once,
accounts isolated, nothing served without a key, private files, the wrong-key limit.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import socket
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from printjob_core import keys as keys_module
from printjob_core import services as services_module
from tests.contract.support import (
    Client,
    ServerProcess,
    assert_problem,
    cli,
    fresh_window,
    png,
)
from tests.postgres_support import database_bytes, use_postgres_servers
from tests.reliability.conftest import new_account
from tests.reliability.http import get_request


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of its own: its data dir and log hold only what this test did."""
    server = ServerProcess(tmp_path / "data", workers=1).start()
    try:
        yield server
    finally:
        server.stop()


def every_file(root: Path) -> list[Path]:
    return [Path(d) / name for d, _dirs, files in os.walk(root) for name in files]


@pytest.mark.slow
def test_keys_are_stored_only_as_hashes_and_never_logged(own_server: ServerProcess) -> None:
    data_dir = own_server.data_dir
    account = cli(data_dir, "accounts", "create", "--credits", "5", "--json")["account_id"]
    created = [cli(data_dir, "keys", "create", account, "--json") for _ in range(3)]
    secrets = [k["api_key"] for k in created]
    wrong = "pjk1_" + "Q" * 38  # a key-shaped secret that is not a key
    basic = "Basic c2VjcmV0LXBhc3N3b3Jk"
    with Client(own_server, account, secrets[0]) as client:
        job = client.submit(png()).json()
        done = client.wait(job["id"], timeout=120)
        assert done["status"] == "succeeded"
        assert client.get(f"/v1/jobs/{job['id']}/result").status_code == 200
    for secret in secrets[1:]:
        with Client(own_server, account, secret) as client:
            assert client.get("/v1/account").status_code == 200
    cli(data_dir, "keys", "revoke", created[2]["key_id"])
    with Client(own_server, account, secrets[2]) as client:
        assert client.get("/v1/account").status_code == 401
    own_server.http.get("/v1/account", headers={"Authorization": f"Bearer {wrong}"})
    own_server.http.get("/v1/account", headers={"Authorization": basic})
    own_server.http.get(f"/v1/jobs/{job['id']}", headers={"Authorization": f"Bearer {wrong}"})
    own_server.stop()  # flush and close everything before reading it

    contents = {path: path.read_bytes() for path in every_file(data_dir)}
    if use_postgres_servers():  # PRINTJOB_TEST_STORAGE=postgresql: the rows are elsewhere
        contents[Path("postgresql-database")] = database_bytes(data_dir)
    else:
        assert any(path.name == "printjob.sqlite3" for path in contents)
    log = own_server.log_path.read_bytes()
    assert b"/v1/account" in log  # the access log was written
    for secret in [*secrets, wrong, basic.split()[1]]:
        body = secret.encode()
        tail = secret[5:].encode()  # the random part alone
        for path, data in [*contents.items(), (own_server.log_path, log)]:
            assert body not in data and tail not in data, f"{secret[:9]}… found in {path}"
    # The stored form is there: the SHA-256 of each key (so the grep above can see the DB).
    stored = b"".join(contents.values())
    for secret in secrets:
        assert hashlib.sha256(secret.encode()).hexdigest().encode() in stored


def test_key_hashes_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored hash is compared with hmac.compare_digest on every authentication."""
    assert "hmac.compare_digest" in inspect.getsource(keys_module.same_hash)
    assert "same_hash(" in inspect.getsource(services_module._live_owner)

    from tests.unit.core.conftest import make_world

    world = make_world()
    account = world.operator.create_account(1)
    _key, secret = world.operator.create_key(account.id)
    calls: list[tuple[bytes, bytes]] = []
    real = keys_module.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(keys_module.hmac, "compare_digest", spy)
    assert world.api.authenticate(f"Bearer {secret}", "192.0.2.1").id == account.id
    assert (
        calls
        and calls[-1][0] == calls[-1][1] == hashlib.sha256(secret.encode()).hexdigest().encode()
    )


def _read_answer(sock: socket.socket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), body[:length]


def test_revoked_key_fails_at_once_on_an_open_connection(secure_server: ServerProcess) -> None:
    data_dir = secure_server.data_dir
    account = cli(data_dir, "accounts", "create", "--credits", "1", "--json")["account_id"]
    first = cli(data_dir, "keys", "create", account, "--json")
    second = cli(data_dir, "keys", "create", account, "--json")

    # httpx, one kept-alive connection.
    with httpx.Client(
        base_url=secure_server.base_url,
        headers={"Authorization": f"Bearer {first['api_key']}"},
        timeout=30,
        limits=httpx.Limits(max_connections=1),
    ) as client:
        assert client.get("/v1/account").status_code == 200
        cli(data_dir, "keys", "revoke", first["key_id"])
        response = client.get("/v1/account")
        assert_problem(response, 401, "unauthenticated")
        assert 'error="invalid_token"' in response.headers["www-authenticate"]

    # A raw socket: provably the very same TCP connection.
    request = get_request(b"/v1/account", second["api_key"]).replace(
        b"Connection: close", b"Connection: keep-alive"
    )
    with socket.create_connection(("127.0.0.1", secure_server.port), timeout=15) as sock:
        sock.sendall(request)
        assert _read_answer(sock)[0] == 200
        cli(data_dir, "keys", "revoke", second["key_id"])
        sock.sendall(request)
        status, body = _read_answer(sock)
        assert status == 401 and b"unauthenticated" in body


@pytest.mark.slow
def test_another_accounts_job_is_404_on_every_operation(secure_server: ServerProcess) -> None:
    with new_account(secure_server) as owner, new_account(secure_server) as other:
        done = owner.submit(png()).json()
        queued_id = owner.submit(png()).json()["id"]
        assert owner.wait(done["id"], timeout=120)["status"] == "succeeded"
        for job_id in (done["id"], queued_id):
            for method, path in (
                ("GET", f"/v1/jobs/{job_id}"),
                ("POST", f"/v1/jobs/{job_id}/cancel"),
                ("GET", f"/v1/jobs/{job_id}/result"),
            ):
                body = assert_problem(other.request(method, path), 404, "not_found")
                assert "another" not in body["detail"]
        # Nothing moved in the owner's account.
        assert owner.get(f"/v1/jobs/{queued_id}").json()["status"] in (
            "queued",
            "running",
            "succeeded",
        )
        assert owner.get(f"/v1/jobs/{done['id']}/result").status_code == 200


PROBES = [
    ("GET", "/schema"),
    ("GET", "/schema/swagger"),
    ("GET", "/schema/redoc"),
    ("GET", "/schema/openapi.json"),
    ("GET", "/schema/openapi.yaml"),
    # `/docs`, `/docs/errors` and the Redoc bundle are public on purpose (no CDN, no key:
    # tests/contract/test_docs.py); nothing else under /docs answers.
    ("GET", "/docs/"),
    ("GET", "/docs/index.html"),
    ("GET", "/docs/static/redoc/LICENSE"),
    ("GET", "/redoc"),
    ("GET", "/openapi.json"),
    ("GET", "/v1"),
    ("GET", "/v1/"),
    # `/` is the website's front page, public on purpose (tests/contract/website/); the
    # website claims its exact paths only, so the others here stay the API's 404.
    ("GET", "/favicon.ico"),
    ("GET", "/health"),
    ("GET", "/v1/jobs"),
    ("GET", "/v1/account"),
    ("POST", "/v1/jobs"),
    ("GET", f"/v1/jobs/job_{'0' * 32}"),
    ("POST", f"/v1/jobs/job_{'0' * 32}/cancel"),
    ("GET", f"/v1/jobs/job_{'0' * 32}/result"),
    ("POST", "/v1/openapi.json"),
]


@pytest.mark.parametrize(("method", "path"), PROBES)
def test_nothing_answers_without_a_key_but_the_openapi_document(
    secure_server: ServerProcess, method: str, path: str
) -> None:
    response = secure_server.http.request(method, path)
    assert response.status_code in (401, 404, 405), response.text[:200]
    assert response.headers["content-type"].startswith("application/problem+json")
    page = response.content.lower()
    assert b"<html" not in page and b"<script" not in page
    body = response.json()
    assert body["status"] == response.status_code
    if response.status_code == 401:
        assert response.headers["www-authenticate"].startswith("Bearer realm=")


def test_only_the_openapi_document_is_public(secure_server: ServerProcess) -> None:
    response = secure_server.http.get("/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.1")
    # The documentation pages beside it hold no account data and run only our own script.
    for path in ("/docs", "/docs/errors"):
        page = secure_server.http.get(path)
        assert page.status_code == 200
        assert "script-src 'self'" in page.headers["content-security-policy"]


@pytest.mark.slow
def test_result_download_is_not_sniffable(secure_server: ServerProcess) -> None:
    with new_account(secure_server) as client:
        for fmt in ("svg", "pdf"):
            job = client.submit(png(), format=fmt).json()
            assert client.wait(job["id"], timeout=120)["status"] == "succeeded"
            response = client.get(f"/v1/jobs/{job['id']}/result")
            assert response.status_code == 200
            assert response.headers["x-content-type-options"] == "nosniff"
            disposition = response.headers["content-disposition"]
            assert disposition == f'attachment; filename="{job["id"]}.{fmt}"'


@pytest.mark.slow
def test_data_files_are_private(own_server: ServerProcess) -> None:
    """Every directory 0700 and every file 0600 (nothing for group or others), live and after."""
    with new_account(own_server) as client:
        done = client.submit(png()).json()
        client.wait(done["id"], timeout=120)
        client.submit(png())  # an upload still stored
        for root in (own_server.data_dir,):
            for directory, _dirs, files in os.walk(root):
                mode = stat.S_IMODE(os.stat(directory).st_mode)
                assert mode == 0o700, (directory, oct(mode))
                for name in files:
                    path = Path(directory) / name
                    mode = stat.S_IMODE(os.stat(path).st_mode)
                    assert mode & 0o077 == 0, (path, oct(mode))
                    assert mode == 0o600, (path, oct(mode))
    assert (own_server.data_dir / "demo" / "sample.png").exists()


@pytest.mark.slow
def test_wrong_key_limit_holds_while_a_valid_key_works(secure_server: ServerProcess) -> None:
    """30 wrong keys a minute per network; the 31st is 429 with Retry-After; a valid key: 200."""
    network = {"X-Forwarded-For": f"198.51.100.{uuid.uuid4().int % 250 + 1}"}
    wrong = {"Authorization": "Bearer pjk1_" + "W" * 38, **network}
    with new_account(secure_server) as client:
        fresh_window(margin=20)
        for _ in range(30):
            assert_problem(
                secure_server.http.get("/v1/account", headers=wrong), 401, "unauthenticated"
            )
        limited = secure_server.http.get("/v1/account", headers=wrong)
        assert_problem(limited, 429, "rate_limited")
        assert 1 <= int(limited.headers["retry-after"]) <= 60
        # A malformed header from the same network is a wrong key too.
        assert (
            secure_server.http.get(
                "/v1/account", headers={"Authorization": "Basic eA==", **network}
            ).status_code
            == 429
        )
        assert client.get("/v1/account", headers=network).status_code == 200
        assert client.submit(png(), **{}).status_code == 202
        # Another network is not affected.
        other = {"Authorization": "Bearer pjk1_" + "W" * 38, "X-Forwarded-For": "192.0.2.77"}
        assert secure_server.http.get("/v1/account", headers=other).status_code == 401
