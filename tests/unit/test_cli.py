"""The `printjob` operator commands, run as the real program on a real data directory."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from printjob_adapters.bootstrap import bootstrap
from printjob_adapters.settings import Settings
from printjob_http.cli import main

CONSOLE_SCRIPT = Path(sys.executable).parent / "printjob"


class Cli:
    """Runs `python -m printjob_http.cli` with `PRINTJOB_DATA_DIR` set to a temporary dir."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.env = {
            key: value for key, value in os.environ.items() if not key.startswith("PRINTJOB_")
        }
        self.env["PRINTJOB_DATA_DIR"] = str(data_dir)

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "printjob_http.cli", *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def json(self, *args: str) -> object:
        return json.loads(self.ok(*args, "--json"))

    def fails(self, *args: str, code: int = 1, **env: str) -> str:
        """Run a command that must fail; returns its one-line message."""
        done = self.run(*args, **env)
        assert done.returncode == code, (done.stdout, done.stderr)
        if code == 1:
            assert done.stdout == ""
            lines = done.stderr.splitlines()
            assert len(lines) == 1, done.stderr
            assert lines[0].startswith("printjob: error: ")
            return lines[0]
        return done.stderr

    def new_account(self, *options: str) -> str:
        created = self.json("accounts", "create", *options)
        assert isinstance(created, dict)
        assert list(created) == ["account_id"]
        account_id = created["account_id"]
        assert re.fullmatch(r"acct_[0-9a-f]{24}", account_id)
        return str(account_id)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """A data dir holding a printjob database, as a server's does (operator commands do
    not create one)."""
    made = Cli(tmp_path / "data")
    made.ok("db", "upgrade")
    return made


@pytest.fixture
def bare_cli(tmp_path: Path) -> Cli:
    """A data dir that holds no printjob database (nor even exists)."""
    return Cli(tmp_path / "elsewhere" / "var")


def test_accounts_credits_and_show(cli: Cli) -> None:
    account_id = cli.new_account("--credits", "5", "--active-jobs-max", "5")
    assert (cli.data_dir.stat().st_mode & 0o777) == 0o700
    out = cli.ok("credits", "add", account_id, "10")
    assert "balance 15" in out
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict)
    created_at = shown.pop("created_at")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", created_at)
    assert shown == {
        "account_id": account_id,
        "disabled": False,
        "credits_balance": 15,
        "credits_held": 0,
        "credits_available": 15,
        "active_jobs": 0,
        "active_jobs_max": 5,
        "live_keys": 0,
    }
    human = cli.ok("accounts", "show", account_id).splitlines()
    assert human[0].split() == ["account_id", account_id]
    assert "credits_available  15" in human[4]
    assert len({line.index(line.split()[1]) for line in human}) == 1, "values are aligned"


def test_account_defaults(cli: Cli) -> None:
    account_id = cli.new_account()
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict)
    assert shown["credits_balance"] == 0
    assert shown["active_jobs_max"] == 3
    assert "account_id" in cli.ok("accounts", "create")


def test_keys_create_list_revoke_and_at_most_five(cli: Cli) -> None:
    account_id = cli.new_account("--credits", "1")
    secrets: list[str] = []
    key_ids: list[str] = []
    for _ in range(5):
        done = cli.run("keys", "create", account_id, "--json")
        assert done.returncode == 0, done.stderr
        created = json.loads(done.stdout)
        assert list(created) == ["key_id", "api_key"]
        assert re.fullmatch(r"key_[0-9a-f]{16}", created["key_id"])
        assert re.fullmatch(r"pjk1_[0-9A-Za-z]{38}", created["api_key"])
        assert "only once" in done.stderr
        secrets.append(created["api_key"])
        key_ids.append(created["key_id"])
    assert len(set(secrets)) == 5

    message = cli.fails("keys", "create", account_id)
    assert "5 live keys" in message
    assert "pjk1_" not in message

    listed = cli.json("keys", "list", account_id)
    assert isinstance(listed, list)
    assert [entry["key_id"] for entry in listed] == key_ids
    for entry, secret in zip(listed, secrets, strict=True):
        assert set(entry) == {"key_id", "hint", "created_at", "revoked_at", "live"}
        assert entry["live"] is True and entry["revoked_at"] is None
        assert secret.startswith(entry["hint"].rstrip("…"))
        assert len(entry["hint"].rstrip("…")) < 15
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict) and shown["live_keys"] == 5

    out = cli.ok("keys", "revoke", key_ids[1])
    assert key_ids[1] in out
    listed = cli.json("keys", "list", account_id)
    assert isinstance(listed, list)
    assert [entry["live"] for entry in listed] == [True, False, True, True, True]
    assert listed[1]["revoked_at"] is not None
    human = cli.ok("keys", "list", account_id)
    assert "revoked" in human.splitlines()[2]
    for secret in secrets:
        assert secret not in human

    # A revoked key frees its place; revoking again changes nothing.
    human_create = cli.ok("keys", "create", account_id)
    assert "only once" in human_create
    secrets.append(human_create.split("api_key")[1].split()[0])
    cli.ok("keys", "revoke", key_ids[1])
    cli.fails("keys", "create", account_id)

    # No file under the data directory holds a key in clear.
    files = [path for path in cli.data_dir.rglob("*") if path.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, path


def test_disable_cancels_unfinished_jobs_and_enable_restores(cli: Cli) -> None:
    account_id = cli.new_account("--credits", "5")
    container = bootstrap(Settings(data_dir=cli.data_dir))
    account = container.operator.show_account(account_id).account
    for n in range(2):
        container.api.submit(account, [("format", "svg")], png(n))
    container.close()
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict)
    assert (shown["credits_held"], shown["active_jobs"]) == (2, 2)

    out = cli.ok("accounts", "disable", account_id)
    assert "2 unfinished jobs canceled" in out
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict)
    assert shown["disabled"] is True
    assert (shown["credits_balance"], shown["credits_held"], shown["active_jobs"]) == (5, 0, 0)
    assert "0 unfinished jobs canceled" in cli.ok("accounts", "disable", account_id)

    cli.ok("accounts", "enable", account_id)
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict) and shown["disabled"] is False


def png(salt: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (20, 20), (salt, 0, 0)).save(buffer, "PNG")
    return buffer.getvalue()


def test_refusals_are_one_line_and_exit_1(cli: Cli) -> None:
    """A sample of refusals through the real program (every case is checked in-process)."""
    account_id = cli.new_account()
    assert "amount" in cli.fails("credits", "add", account_id, "-3")
    assert "amount" in cli.fails("credits", "add", account_id, "1.5")
    assert "--active-jobs-max" in cli.fails("accounts", "create", "--active-jobs-max", "4")
    missing = "acct_" + "0" * 24
    assert missing in cli.fails("accounts", "show", missing)
    assert "key_nope" in cli.fails("keys", "revoke", "key_nope")
    assert "usage:" in cli.fails("accounts", code=2)
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict) and shown["credits_balance"] == 0


class InProcess:
    """`printjob_http.cli.main` called directly: the same code, without a process per call."""

    def __init__(self, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        for key in list(os.environ):
            if key.startswith("PRINTJOB_"):
                monkeypatch.delenv(key)
        monkeypatch.setenv("PRINTJOB_DATA_DIR", str(data_dir))

    def fails(self, capsys: pytest.CaptureFixture[str], *args: str, code: int = 1) -> str:
        with pytest.raises(SystemExit) if code == 2 else _no_exit() as caught:
            status = main(list(args))
        out, err = capsys.readouterr()
        if code == 2:
            assert caught is not None and caught.value.code == 2
            assert "usage:" in err
            return err
        assert status == 1
        assert out == ""
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("printjob: error: "), err
        return lines[0]


@contextlib.contextmanager
def _no_exit() -> Iterator[None]:
    yield None


@pytest.fixture
def inproc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> InProcess:
    made = InProcess(tmp_path / "data", monkeypatch)
    assert main(["db", "upgrade"]) == 0
    capsys.readouterr()
    return made


def test_every_bad_amount_and_option_is_refused(
    inproc: InProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["accounts", "create", "--json"]) == 0
    account_id = json.loads(capsys.readouterr().out)["account_id"]
    for amount in ("-3", "0", "1.5", "ten", "", "1e3", " ", "\u0665", "10000000000"):
        assert "amount" in inproc.fails(capsys, "credits", "add", account_id, amount), amount
    for options, mentions in (
        (["--active-jobs-max", "4"], "--active-jobs-max"),
        (["--active-jobs-max", "0"], "--active-jobs-max"),
        (["--active-jobs-max", "many"], "--active-jobs-max"),
        (["--credits", "-1"], "--credits"),
        (["--credits", "2.5"], "--credits"),
    ):
        assert mentions in inproc.fails(capsys, "accounts", "create", *options), options
    assert main(["accounts", "show", account_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["credits_balance"] == 0


def test_every_unknown_id_is_refused(inproc: InProcess, capsys: pytest.CaptureFixture[str]) -> None:
    missing = "acct_" + "0" * 24
    for command in (
        ["accounts", "show", missing],
        ["accounts", "disable", missing],
        ["accounts", "enable", missing],
        ["credits", "add", missing, "5"],
        ["keys", "create", missing],
        ["keys", "list", missing],
    ):
        assert missing in inproc.fails(capsys, *command), command
    assert "key_nope" in inproc.fails(capsys, "keys", "revoke", "key_nope")


def test_usage_errors_exit_2(inproc: InProcess, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (
        [],
        ["accounts"],
        ["credits", "add", "acct_x"],
        ["keys", "frobnicate"],
        ["serve", "--port", "http"],
        ["serve", "--workers", "-1"],
        ["accounts", "show"],
        ["accounts", "create", "--bogus"],
    ):
        inproc.fails(capsys, *command, code=2)


def test_settings_errors_name_the_variable(cli: Cli) -> None:
    message = cli.fails("accounts", "create", PRINTJOB_WORKERS="lots")
    assert "PRINTJOB_WORKERS" in message
    message = cli.fails("accounts", "create", PRINTJOB_DATABASE_URL="mysql://db/printjob")
    assert "PRINTJOB_DATABASE_URL" in message and "postgresql://" in message


def test_version(cli: Cli) -> None:
    done = cli.run("--version")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"printjob [0-9]+\.[0-9]+\.[0-9]+\n", done.stdout)


def test_an_unusable_data_dir_is_a_one_line_error(cli: Cli, tmp_path: Path) -> None:
    """An OSError (here: the data dir's parent is a file) is reported, not a traceback."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    message = cli.fails("accounts", "create", PRINTJOB_DATA_DIR=str(blocker / "var"))
    assert "Not a directory" in message
    assert str(blocker / "var") in message


def test_help_and_console_script(cli: Cli) -> None:
    out = cli.ok("--help")
    for command in ("serve", "worker", "accounts", "credits", "keys", "openapi", "trace"):
        assert command in out
    if CONSOLE_SCRIPT.exists():
        done = subprocess.run(
            [str(CONSOLE_SCRIPT), "accounts", "create", "--json"],
            env=cli.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["account_id"].startswith("acct_")
