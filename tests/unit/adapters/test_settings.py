"""Settings from the environment and a settings file; the composition root."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from printjob_adapters.bootstrap import bootstrap
from printjob_adapters.passwords import Argon2PasswordHasher
from printjob_adapters.settings import Settings, SettingsError
from printjob_adapters.system import RandomIds, SystemClock
from printjob_core.keys import looks_like_key
from printjob_core.limits import Policy


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env({})
    assert settings.data_dir == tmp_path / "var"
    assert settings.base_url is None
    # The service's own errors page, at the address each request came to.
    assert settings.docs_url is None
    assert settings.service_name == "printjob"
    assert settings.workers == (os.cpu_count() or 1)
    assert settings.trusted_proxies == ()
    assert settings.wrong_keys_per_minute == 30
    assert settings.database_url is None
    assert settings.blobs == "files"
    assert settings.policy() == Policy()
    assert settings.database_path == tmp_path / "var" / "printjob.sqlite3"
    assert settings.base_url_for("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert settings.base_url_for("::1", 8080) == "http://[::1]:8080"


def test_every_variable(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "PRINTJOB_DATA_DIR": str(tmp_path / "d"),
            "PRINTJOB_BASE_URL": "https://api.example.com/",
            "PRINTJOB_DOCS_URL": "https://docs.example.com/errors",
            "PRINTJOB_SERVICE_NAME": "example",
            "PRINTJOB_RESULT_TTL_SECONDS": "60",
            "PRINTJOB_IDEMPOTENCY_TTL_SECONDS": "120",
            "PRINTJOB_SUBMISSIONS_PER_MINUTE": "5",
            "PRINTJOB_READS_PER_MINUTE": "50",
            "PRINTJOB_WRONG_KEYS_PER_MINUTE": "7",
            "PRINTJOB_WORKERS": "0",
            "PRINTJOB_TRUSTED_PROXIES": " 10.0.0.1, 192.168.0.0/16 ,,::1",
            "PRINTJOB_MAX_QUEUE_DEPTH": "9",
            "PRINTJOB_LEASE_SECONDS": "15",
            "PRINTJOB_JOB_TIME_BUDGET_SECONDS": "45",
            "PRINTJOB_BUSY_TIMEOUT_SECONDS": "0.5",
            "PRINTJOB_DATABASE_URL": "",
        }
    )
    assert settings.data_dir == tmp_path / "d"
    assert settings.base_url == "https://api.example.com"
    assert settings.base_url_for("0.0.0.0", 1) == "https://api.example.com"
    assert settings.docs_url == "https://docs.example.com/errors"
    assert settings.workers == 0
    assert settings.trusted_proxies == ("10.0.0.1/32", "192.168.0.0/16", "::1/128")
    assert settings.busy_timeout_seconds == 0.5
    assert settings.policy() == Policy(
        submissions_per_minute=5,
        reads_per_minute=50,
        wrong_keys_per_minute=7,
        idempotency_ttl_seconds=120,
        result_ttl_seconds=60,
        lease_seconds=15,
        job_time_budget_seconds=45,
        max_queue_depth=9,
    )


def test_docs_url_defaults_to_the_services_own_errors_page() -> None:
    """Unset, every Problem `type` leads to `/docs/errors` on the service's own address."""
    settings = Settings.from_env({"PRINTJOB_BASE_URL": "https://api.example.com/"})
    assert settings.docs_url == "https://api.example.com/docs/errors"
    proxied = Settings.from_env({"PRINTJOB_BASE_URL": "https://example.com/printjob"})
    assert proxied.docs_url == "https://example.com/printjob/docs/errors"
    own = Settings.from_env(
        {"PRINTJOB_BASE_URL": "https://api.example.com", "PRINTJOB_DOCS_URL": "https://d.example/e"}
    )
    assert own.docs_url == "https://d.example/e"
    assert Settings.from_env({"PRINTJOB_DOCS_URL": " "}).docs_url is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("PRINTJOB_WORKERS", "-1"),
        ("PRINTJOB_WORKERS", "two"),
        ("PRINTJOB_SUBMISSIONS_PER_MINUTE", "0"),
        ("PRINTJOB_RESULT_TTL_SECONDS", "1.5"),
        ("PRINTJOB_RESULT_TTL_SECONDS", "99999999999999999999"),
        ("PRINTJOB_READS_PER_MINUTE", "lots"),
        ("PRINTJOB_BUSY_TIMEOUT_SECONDS", "nan"),
        ("PRINTJOB_BUSY_TIMEOUT_SECONDS", "-1"),
        ("PRINTJOB_TRUSTED_PROXIES", "10.0.0.1,proxy.local"),
        ("PRINTJOB_BASE_URL", "api.example.com"),
        ("PRINTJOB_DOCS_URL", "ftp://x"),
        ("PRINTJOB_SERVICE_NAME", 'a"b'),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_database_url_selects_postgresql() -> None:
    url = "postgresql://printjob:secret@db.internal:5432/printjob"
    settings = Settings.from_env({"PRINTJOB_DATABASE_URL": url, "PRINTJOB_DATABASE_POOL_SIZE": "4"})
    assert settings.database_url == url
    assert settings.database_pool_size == 4


def test_database_url_must_be_postgresql_and_is_never_echoed() -> None:
    with pytest.raises(SettingsError, match="PRINTJOB_DATABASE_URL") as caught:
        Settings.from_env({"PRINTJOB_DATABASE_URL": "mysql://u:hunter2@db/printjob"})
    assert "hunter2" not in str(caught.value)


def test_blobs_in_the_database_need_postgresql() -> None:
    url = "postgresql://printjob:secret@db.internal:5432/printjob"
    settings = Settings.from_env({"PRINTJOB_DATABASE_URL": url, "PRINTJOB_BLOBS": "database"})
    assert settings.blobs == "database"
    assert Settings.from_env({"PRINTJOB_BLOBS": " files "}).blobs == "files"
    assert Settings.from_env({"PRINTJOB_BLOBS": ""}).blobs == "files"
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"PRINTJOB_BLOBS": "database"})
    message = str(caught.value)
    assert "PRINTJOB_BLOBS" in message and "PRINTJOB_DATABASE_URL" in message
    assert "\n" not in message


@pytest.mark.parametrize("value", ["s3", "Database", "file", "database,files"])
def test_blobs_is_files_or_database(value: str) -> None:
    url = "postgresql://printjob:secret@db.internal:5432/printjob"
    with pytest.raises(SettingsError, match="PRINTJOB_BLOBS must be files or database") as caught:
        Settings.from_env({"PRINTJOB_BLOBS": value, "PRINTJOB_DATABASE_URL": url})
    assert "secret" not in str(caught.value)


def test_settings_file_and_the_environment_wins(tmp_path: Path) -> None:
    file = tmp_path / "printjob.env"
    file.write_text(
        "# comment\n\nPRINTJOB_WORKERS=3\nexport PRINTJOB_SERVICE_NAME='from file'\n"
        'PRINTJOB_READS_PER_MINUTE = "77"\n'
    )
    settings = Settings.from_env({"PRINTJOB_SETTINGS_FILE": str(file), "PRINTJOB_WORKERS": "5"})
    assert settings.workers == 5
    assert settings.service_name == "from file"
    assert settings.reads_per_minute == 77


def test_settings_file_errors(tmp_path: Path) -> None:
    file = tmp_path / "printjob.env"
    file.write_text("PRINTJOB_WORKRES=3\n")
    with pytest.raises(SettingsError, match="line 1: unknown setting PRINTJOB_WORKRES"):
        Settings.from_env({"PRINTJOB_SETTINGS_FILE": str(file)})
    file.write_text("just words\n")
    with pytest.raises(SettingsError, match="KEY=VALUE"):
        Settings.from_env({"PRINTJOB_SETTINGS_FILE": str(file)})
    with pytest.raises(SettingsError, match="PRINTJOB_SETTINGS_FILE"):
        Settings.from_env({"PRINTJOB_SETTINGS_FILE": str(tmp_path / "missing")})


def test_ids_and_clock() -> None:
    ids = RandomIds()
    assert re.fullmatch(r"job_[0-9a-f]{32}", ids.job_id())
    assert re.fullmatch(r"acct_[0-9a-f]{24}", ids.account_id())
    assert re.fullmatch(r"key_[0-9a-f]{16}", ids.key_id())
    keys = {ids.api_key() for _ in range(100)}
    assert len(keys) == 100
    assert all(len(key) == 43 and looks_like_key(key) for key in keys)
    now = SystemClock().now()
    assert now.utcoffset() == timedelta(0)


def test_bootstrap_wires_everything(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", submissions_per_minute=4)
    container = bootstrap(settings)
    try:
        assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700
        assert (tmp_path / "data" / "files").is_dir()
        assert container.ports.policy.submissions_per_minute == 4
        assert container.ports.probe is container.probe
        account = container.operator.create_account(3)
        key, secret = container.operator.create_key(account.id)
        found = container.api.authenticate(f"Bearer {secret}", "127.0.0.1")
        assert found.id == account.id
        view = container.api.account_for_key(f"Bearer {secret}", "127.0.0.1")
        assert view.credits_available == 3
        assert secret.startswith(key.hint.rstrip("…"))
    finally:
        container.close()
    # A second process (here: a second bootstrap) finds the same data.
    again = bootstrap(settings, lazy=True)
    assert again.engine is None
    assert again.operator.show_account(account.id).account.credits_balance == 3
    again.close()


def test_log_format_and_metrics_token() -> None:
    defaults = Settings.from_env({})
    assert (defaults.log_format, defaults.metrics_token) == ("text", None)
    token = "m3tr1cs-t0ken-0123456789"
    settings = Settings.from_env(
        {"PRINTJOB_LOG_FORMAT": "JSON", "PRINTJOB_METRICS_TOKEN": f" {token} "}
    )
    assert (settings.log_format, settings.metrics_token) == ("json", token)
    assert token not in repr(settings)
    with pytest.raises(SettingsError, match="PRINTJOB_LOG_FORMAT"):
        Settings.from_env({"PRINTJOB_LOG_FORMAT": "xml"})
    with pytest.raises(SettingsError, match="PRINTJOB_METRICS_TOKEN") as refused:
        Settings.from_env({"PRINTJOB_METRICS_TOKEN": "short-secret"})
    assert "short-secret" not in str(refused.value)


def test_worker_memory_cap_defaults_to_2_gib_and_may_be_off() -> None:
    assert Settings.from_env({}).worker_memory_mb == 2048
    assert Settings.from_env({"PRINTJOB_WORKER_MEMORY_MB": "0"}).worker_memory_mb == 0
    assert Settings.from_env({"PRINTJOB_WORKER_MEMORY_MB": "512"}).worker_memory_mb == 512
    with pytest.raises(SettingsError, match="PRINTJOB_WORKER_MEMORY_MB"):
        Settings.from_env({"PRINTJOB_WORKER_MEMORY_MB": "-1"})


def test_signup_is_open_by_default_closed_on_request_and_nothing_else() -> None:
    assert Settings.from_env({}).signup_open
    assert Settings.from_env({"PRINTJOB_SIGNUP": "open"}).signup_open
    closed = Settings.from_env({"PRINTJOB_SIGNUP": " Closed "})
    assert (closed.signup, closed.signup_open) == ("closed", False)
    with pytest.raises(SettingsError, match="PRINTJOB_SIGNUP must be open or closed, not 'maybe'"):
        Settings.from_env({"PRINTJOB_SIGNUP": "maybe"})


def test_bootstrap_wires_the_website_with_the_signup_setting(tmp_path: Path) -> None:
    settings = Settings.from_env({"PRINTJOB_DATA_DIR": str(tmp_path), "PRINTJOB_SIGNUP": "closed"})
    container = bootstrap(settings, lazy=True)
    try:
        assert container.website.signup_open is False
        assert isinstance(container.website.hasher, Argon2PasswordHasher)
    finally:
        container.close()


def test_argon2_hashes_are_argon2id_salted_and_verified() -> None:
    hasher = Argon2PasswordHasher()
    first, second = hasher.hash("a long passphrase"), hasher.hash("a long passphrase")
    assert first.startswith("$argon2id$") and first != second
    assert hasher.verify(first, "a long passphrase")
    assert not hasher.verify(first, "a long passphrasE")
    assert not hasher.verify("not a hash", "a long passphrase")


def test_connection_bounds_default_and_reach_the_protocol() -> None:
    from printjob_http.protocol import ConnectionLimits
    from printjob_http.server import connection_limits

    assert connection_limits(Settings.from_env({})) == ConnectionLimits()
    settings = Settings.from_env(
        {
            "PRINTJOB_HEADER_TIMEOUT_SECONDS": "2.5",
            "PRINTJOB_BODY_WINDOW_SECONDS": "3",
            "PRINTJOB_BODY_MIN_BYTES": "1000",
            "PRINTJOB_KEEPALIVE_TIMEOUT_SECONDS": "4",
            "PRINTJOB_KEEPALIVE_MAX": "7",
            "PRINTJOB_WRITE_TIMEOUT_SECONDS": "6",
        }
    )
    assert connection_limits(settings) == ConnectionLimits(
        head_seconds=2.5,
        body_window_seconds=3.0,
        body_min_bytes=1000,
        keepalive_seconds=4.0,
        keepalive_max=7,
        write_seconds=6.0,
    )
    for name in ("PRINTJOB_HEADER_TIMEOUT_SECONDS", "PRINTJOB_KEEPALIVE_MAX"):
        with pytest.raises(SettingsError, match=name):
            Settings.from_env({name: "0"})
