"""Contract section 5: authentication, disabled accounts, the wrong-key limit."""

from __future__ import annotations

from tests.contract.support import Client, ServerProcess, assert_problem, cli, fresh_window

WRONG_KEY = "pjk1_" + "x" * 38


def test_missing_key_is_401_with_plain_challenge(server: ServerProcess) -> None:
    """Contract 5.3: no key -> 401 unauthenticated, WWW-Authenticate: Bearer realm="..."."""
    for method, path in [
        ("GET", "/v1/account"),
        ("POST", "/v1/jobs"),
        ("GET", "/v1/jobs/job_" + "0" * 32),
        ("POST", "/v1/jobs/job_" + "0" * 32 + "/cancel"),
        ("GET", "/v1/jobs/job_" + "0" * 32 + "/result"),
    ]:
        response = server.http.request(method, path)
        assert_problem(response, 401, "unauthenticated")
        assert response.headers["www-authenticate"] == 'Bearer realm="printjob"'


def test_wrong_key_is_401_with_invalid_token(server: ServerProcess) -> None:
    """Contract 5.3: a wrong key -> 401 with `error="invalid_token"` in the challenge."""
    for authorization in (f"Bearer {WRONG_KEY}", "Bearer nonsense", "Basic dXNlcjpwYXNz"):
        response = server.http.get(
            "/v1/account",
            headers={"Authorization": authorization, "X-Forwarded-For": "192.0.2.10"},
        )
        assert_problem(response, 401, "unauthenticated")
        assert (
            response.headers["www-authenticate"] == 'Bearer realm="printjob", error="invalid_token"'
        )


def test_auth_comes_before_everything(server: ServerProcess) -> None:
    """Contract 5.1 / design 6: an unauthenticated bad request is 401, not 400."""
    response = server.http.post("/v1/jobs", json={"format": "svg"})
    assert_problem(response, 401, "unauthenticated")


def test_revoked_key_stops_working_at_once(server: ServerProcess, client: Client) -> None:
    """Contract 5.2/5.3: a key revoked with the operator CLI gets 401 at once."""
    assert client.get("/v1/account").status_code == 200
    keys = cli(server.data_dir, "keys", "list", client.account_id, "--json", **server.settings)
    key_id = keys[0]["key_id"] if isinstance(keys, list) else keys["keys"][0]["key_id"]
    cli(server.data_dir, "keys", "revoke", key_id, **server.settings)
    response = client.get("/v1/account", headers={"X-Forwarded-For": "192.0.2.11"})
    assert_problem(response, 401, "unauthenticated")
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_disabled_account_is_403_and_its_jobs_are_canceled(idle_server: ServerProcess) -> None:
    """Contract 5.4 and section 3: disabled -> 403 account_disabled; unfinished jobs canceled."""
    with idle_server.account(credits=5) as client:
        job = client.submit().json()
        assert job["status"] == "queued"
        cli(idle_server.data_dir, "accounts", "disable", client.account_id, **idle_server.settings)
        assert_problem(client.get("/v1/account"), 403, "account_disabled")
        assert_problem(client.get(f"/v1/jobs/{job['id']}"), 403, "account_disabled")
        assert_problem(client.submit(), 403, "account_disabled")
        cli(idle_server.data_dir, "accounts", "enable", client.account_id, **idle_server.settings)
        after = client.get(f"/v1/jobs/{job['id']}").json()
        assert after["status"] == "canceled"
        assert after["credits_charged"] == 0
        account = client.account_view()
        assert account["credits_held"] == 0
        assert account["credits_balance"] == 5


def test_wrong_keys_from_one_network_are_limited(server: ServerProcess, client: Client) -> None:
    """Contract 5.5: after 30 wrong keys in a minute, the network gets 429; valid keys work."""
    network = {"X-Forwarded-For": "198.51.100.23"}
    bad = {"Authorization": f"Bearer {WRONG_KEY}", **network}
    fresh_window()
    statuses = [server.http.get("/v1/account", headers=bad).status_code for _ in range(30)]
    assert statuses == [401] * 30
    response = server.http.get("/v1/account", headers=bad)
    assert_problem(response, 429, "rate_limited")
    assert client.get("/v1/account", headers=network).status_code == 200
    # Another network is not affected.
    other = server.http.get(
        "/v1/account",
        headers={"Authorization": f"Bearer {WRONG_KEY}", "X-Forwarded-For": "198.51.100.99"},
    )
    assert_problem(other, 401, "unauthenticated")


def test_forwarded_for_is_ignored_from_untrusted_peers(idle_server: ServerProcess) -> None:
    """Design 7: X-Forwarded-For counts only from a trusted proxy; else the peer is limited."""
    fresh_window()
    for index in range(30):
        response = idle_server.http.get(
            "/v1/account",
            headers={
                "Authorization": f"Bearer {WRONG_KEY}",
                "X-Forwarded-For": f"203.0.113.{index}",
            },
        )
        assert response.status_code == 401
    response = idle_server.http.get(
        "/v1/account",
        headers={"Authorization": f"Bearer {WRONG_KEY}", "X-Forwarded-For": "203.0.113.200"},
    )
    assert_problem(response, 429, "rate_limited")


def test_openapi_needs_no_key(server: ServerProcess) -> None:
    """Contract 4.6 and 5.1: GET /v1/openapi.json needs no authentication."""
    response = server.http.get("/v1/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["openapi"].startswith("3.1")
