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
from typing import Any
from urllib.parse import urlsplit

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
        "plan": "free",
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
    message = cli.fails("serve", PRINTJOB_BLOBS="database")
    assert "PRINTJOB_BLOBS" in message and "PRINTJOB_DATABASE_URL" in message
    message = cli.fails("worker", PRINTJOB_BLOBS="s3")
    assert "PRINTJOB_BLOBS" in message and "files or database" in message


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


# -- which database: operator commands never create one --

#: Every operator command, with the arguments it needs (ids need not exist: the database
#: is missing before any is looked up).
OPERATOR_COMMANDS = (
    ["accounts", "create", "--credits", "3"],
    ["accounts", "show", "acct_" + "0" * 24],
    ["accounts", "list"],
    ["accounts", "disable", "acct_" + "0" * 24],
    ["accounts", "enable", "acct_" + "0" * 24],
    ["accounts", "limits", "acct_" + "0" * 24, "--active-jobs-max", "5"],
    ["accounts", "plan", "acct_" + "0" * 24, "monthly"],
    ["accounts", "invite", "acct_" + "0" * 24, "--email", "bob@example.com"],
    ["credits", "add", "acct_" + "0" * 24, "5"],
    ["credits", "remove", "acct_" + "0" * 24, "5", "--reason", "refund"],
    ["credits", "history", "acct_" + "0" * 24],
    ["keys", "create", "acct_" + "0" * 24],
    ["keys", "list", "acct_" + "0" * 24],
    ["keys", "revoke", "key_nope"],
)


def _no_database_message(where: str, variable: str = "PRINTJOB_DATA_DIR") -> str:
    return (
        f'printjob: error: no printjob database in {where} ({variable}); run "printjob db upgrade"'
    )


def test_operator_commands_on_a_missing_data_dir_fail_and_create_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run from the wrong directory, no command quietly makes an empty database there."""
    data_dir = tmp_path / "elsewhere" / "var"
    inproc = InProcess(data_dir, monkeypatch)
    for command in OPERATOR_COMMANDS:
        message = inproc.fails(capsys, *command)
        assert message.startswith(_no_database_message(str(data_dir))), message
        assert "point PRINTJOB_DATA_DIR at the server's data dir" in message
        assert list(tmp_path.iterdir()) == [], command


def test_an_existing_dir_without_a_database_stays_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty, holed = tmp_path / "empty", tmp_path / "holed"
    empty.mkdir()
    holed.mkdir()
    (holed / "printjob.sqlite3").write_bytes(b"")  # a file, but no printjob schema in it
    for data_dir in (empty, holed):
        before = sorted(p.name for p in data_dir.iterdir())
        inproc = InProcess(data_dir, monkeypatch)
        for command in OPERATOR_COMMANDS:
            message = inproc.fails(capsys, *command)
            assert message.startswith(_no_database_message(str(data_dir))), message
        assert sorted(p.name for p in data_dir.iterdir()) == before
        assert all(p.stat().st_size == 0 for p in data_dir.iterdir())


def test_the_real_program_refuses_then_db_upgrade_creates(bare_cli: Cli) -> None:
    message = bare_cli.fails("accounts", "create", "--json")
    assert message.startswith(_no_database_message(str(bare_cli.data_dir))), message
    assert not bare_cli.data_dir.parent.exists()
    bare_cli.ok("db", "upgrade")
    account_id = bare_cli.new_account("--credits", "2")
    assert json.loads(bare_cli.ok("accounts", "list", "--json"))[0]["account_id"] == account_id


def test_a_postgresql_database_without_the_schema_is_refused_and_left_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    from tests.postgres_support import create_database, drop_database

    url = create_database()
    try:
        inproc = InProcess(tmp_path / "var", monkeypatch)
        monkeypatch.setenv("PRINTJOB_DATABASE_URL", url)
        for command in OPERATOR_COMMANDS:
            message = inproc.fails(capsys, *command)
            assert "no printjob database in postgresql://" in message, message
            assert "(PRINTJOB_DATABASE_URL)" in message
            assert "point PRINTJOB_DATABASE_URL at the server's database" in message
            password = urlsplit(url).password
            assert password is None or password not in message
        with psycopg.connect(url) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            ).fetchone()
        assert tables == (0,)
        assert not (tmp_path / "var").exists()
        assert main(["db", "upgrade"]) == 0
        capsys.readouterr()
        assert main(["accounts", "create", "--credits", "4", "--json"]) == 0
        account_id = json.loads(capsys.readouterr().out)["account_id"]
        assert main(["credits", "history", account_id, "--json"]) == 0
        assert [e["kind"] for e in json.loads(capsys.readouterr().out)] == ["add"]
        assert not (tmp_path / "var").exists(), "blobs are not needed to manage accounts"
    finally:
        drop_database(url)


def test_a_database_url_is_shown_without_its_password() -> None:
    from printjob_adapters.bootstrap import hide_password

    assert hide_password("postgresql://pj:s3cret@db:5432/printjob") == (
        "postgresql://pj:***@db:5432/printjob"
    )
    assert hide_password("postgresql://db/printjob?user=pj&password=s3cret&sslmode=require") == (
        "postgresql://db/printjob?user=pj&password=***&sslmode=require"
    )
    assert hide_password("postgresql://pj@db/printjob") == "postgresql://pj@db/printjob"


def test_failures_after_opening_name_the_database(
    inproc: InProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = "acct_" + "0" * 24
    message = inproc.fails(capsys, "accounts", "show", missing)
    assert message == (
        f"printjob: error: no account {missing!r} "
        f"(database: {tmp_path / 'data'} (PRINTJOB_DATA_DIR))"
    )


# -- names, e-mail addresses, listing, limits --


def _created(capsys: pytest.CaptureFixture[str], *options: str) -> str:
    assert main(["accounts", "create", *options, "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert list(created) == ["account_id"]
    return str(created["account_id"])


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_accounts_have_a_name_and_an_email_and_are_listed(
    inproc: InProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ada = _created(
        capsys, "--name", "  Ada Lovelace ", "--email", "Ada@Example.COM", "--credits", "7"
    )
    plain = _created(capsys)
    shown = _json(capsys, "accounts", "show", ada)
    assert (shown["name"], shown["email"]) == ("Ada Lovelace", "ada@example.com")
    assert "name" not in _json(capsys, "accounts", "show", plain)

    listed = _json(capsys, "accounts", "list")
    assert [row["account_id"] for row in listed] == [ada, plain]
    assert set(listed[0]) == {
        "account_id",
        "name",
        "email",
        "credits_balance",
        "credits_held",
        "active_jobs_max",
        "plan",
        "disabled",
        "created_at",
    }
    assert listed[0]["name"] == "Ada Lovelace" and listed[0]["credits_balance"] == 7
    assert (listed[1]["name"], listed[1]["email"], listed[1]["disabled"]) == (None, None, False)
    assert _json(capsys, "accounts", "list", "--disabled") == []

    assert main(["accounts", "disable", plain]) == 0
    capsys.readouterr()
    disabled = _json(capsys, "accounts", "list", "--disabled")
    assert [(row["account_id"], row["disabled"]) for row in disabled] == [(plain, True)]
    assert len(_json(capsys, "accounts", "list")) == 2, "the plain list includes disabled ones"

    assert main(["accounts", "list"]) == 0
    human = capsys.readouterr().out.splitlines()
    assert human[0] == f"2 accounts in {tmp_path / 'data'} (PRINTJOB_DATA_DIR)"
    assert human[1].split()[:3] == ["ACCOUNT_ID", "NAME", "EMAIL"]
    assert ada in human[2] and "Ada Lovelace" in human[2] and "ada@example.com" in human[2]
    assert human[3].split()[:3] == [plain, "-", "-"] and " yes " in human[3]


def test_bad_names_and_emails_are_refused(
    inproc: InProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    for options, mentions in (
        (["--email", "ada"], "--email"),
        (["--email", "ada@example"], "--email"),
        (["--email", "a b@example.com"], "--email"),
        (["--email", "ada@@example.com"], "--email"),
        (["--email", "a" * 250 + "@example.com"], "--email"),
        (["--name", ""], "--name"),
        (["--name", "   "], "--name"),
        (["--name", "two\nlines"], "--name"),
        (["--name", "x" * 201], "--name"),
    ):
        assert mentions in inproc.fails(capsys, "accounts", "create", *options), options
    assert _json(capsys, "accounts", "list") == []


def test_limits_change_active_jobs_max(
    inproc: InProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    account_id = _created(capsys)
    assert main(["accounts", "limits", account_id, "--active-jobs-max", "10"]) == 0
    assert "10 unfinished jobs" in capsys.readouterr().out
    assert _json(capsys, "accounts", "show", account_id)["active_jobs_max"] == 10
    for bad in ("4", "0", "many"):
        message = inproc.fails(capsys, "accounts", "limits", account_id, "--active-jobs-max", bad)
        assert "--active-jobs-max" in message
    inproc.fails(capsys, "accounts", "limits", account_id, code=2)
    assert _json(capsys, "accounts", "show", account_id)["active_jobs_max"] == 10


# -- credits: remove and history --


def test_credits_remove_never_below_held_and_history_shows_every_move(
    inproc: InProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    account_id = _created(capsys, "--credits", "5")
    container = bootstrap(Settings(data_dir=tmp_path / "data"))
    account = container.operator.show_account(account_id).account
    job = container.api.submit(account, [("format", "svg")], png(1)).job
    container.close()

    message = inproc.fails(capsys, "credits", "remove", account_id, "5", "--reason", "refund")
    assert "4 available" in message and "1 held" in message
    assert "--reason" in inproc.fails(capsys, "credits", "remove", account_id, "1")
    assert "--reason" in inproc.fails(capsys, "credits", "remove", account_id, "1", "--reason", " ")
    assert "amount" in inproc.fails(capsys, "credits", "remove", account_id, "0", "--reason", "x")
    assert main(["credits", "remove", account_id, "4", "--reason", "refund #12"]) == 0
    assert "balance 1 (0 available, 1 held)" in capsys.readouterr().out
    assert main(["credits", "add", account_id, "2", "--reason", "goodwill"]) == 0
    capsys.readouterr()
    assert main(["accounts", "disable", account_id]) == 0
    capsys.readouterr()

    history = _json(capsys, "credits", "history", account_id)
    moves = [(e["kind"], e["amount"], e["job_id"], e["reason"]) for e in history]
    assert moves == [
        ("add", 5, None, "opening credits"),
        ("hold", 1, job.id, None),
        ("remove", 4, None, "refund #12"),
        ("add", 2, None, "goodwill"),
        ("release", 1, job.id, None),
    ]
    after = [(e["balance_after"], e["held_after"]) for e in history]
    assert after == [(5, 0), (5, 1), (1, 1), (3, 1), (3, 0)]
    assert [e["id"] for e in history] == sorted({e["id"] for e in history})
    for entry in history:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["at"])
    shown = _json(capsys, "accounts", "show", account_id)
    assert (shown["credits_balance"], shown["credits_held"]) == after[-1]

    assert main(["credits", "history", account_id]) == 0
    human = capsys.readouterr().out.splitlines()
    assert human[0].split() == ["AT", "KIND", "AMOUNT", "BALANCE", "HELD", "JOB_ID", "REASON"]
    assert human[3].split()[1:] == ["remove", "4", "1", "1", "-", "refund", "#12"]
    assert len(human) == 6


def test_an_account_without_credits_has_an_empty_history(
    inproc: InProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    account_id = _created(capsys)
    assert _json(capsys, "credits", "history", account_id) == []
    assert main(["credits", "history", account_id]) == 0
    assert "no credit movements" in capsys.readouterr().out
    missing = "acct_" + "0" * 24
    for command in (
        ["credits", "history", missing],
        ["credits", "remove", missing, "1", "--reason", "x"],
        ["accounts", "limits", missing, "--active-jobs-max", "5"],
    ):
        assert missing in inproc.fails(capsys, *command), command


@pytest.mark.slow  # the pool gives an unreachable server 10 s before it gives up
def test_an_unreachable_database_is_named_without_its_password(
    inproc: InProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    monkeypatch.setenv("PRINTJOB_DATABASE_URL", "postgresql://pj:s3cret@127.0.0.1:9/printjob")
    monkeypatch.setenv("PRINTJOB_BUSY_TIMEOUT_SECONDS", "0.5")
    message = inproc.fails(capsys, "accounts", "list")
    assert message.endswith(
        "(database: postgresql://pj:***@127.0.0.1:9/printjob (PRINTJOB_DATABASE_URL))"
    )
    assert "s3cret" not in message


def test_accounts_plan_is_shown_by_show_and_list(cli: Cli) -> None:
    account_id = cli.new_account()
    assert "now on the monthly plan: no daily cap" in cli.ok(
        "accounts", "plan", account_id, "monthly"
    )
    shown = cli.json("accounts", "show", account_id)
    assert isinstance(shown, dict) and shown["plan"] == "monthly"
    assert "plan               monthly" in cli.ok("accounts", "show", account_id)
    listed = cli.json("accounts", "list")
    assert isinstance(listed, list) and listed[0]["plan"] == "monthly"
    header, row = cli.ok("accounts", "list").splitlines()[1:3]
    assert header.split()[6] == "PLAN" and row.split()[6] == "monthly"
    out = cli.ok("accounts", "plan", account_id, "free")
    assert "free plan: 5 website downloads per UTC day" in out
    assert "free or monthly, not 'gold'" in cli.fails("accounts", "plan", account_id, "gold")
    assert "no account" in cli.fails("accounts", "plan", "acct_" + "0" * 24, "free")


def test_accounts_invite_prints_a_one_time_link(cli: Cli) -> None:
    account_id = cli.new_account()
    done = cli.run(
        "accounts",
        "invite",
        account_id,
        "--email",
        "Bob@Example.com",
        "--json",
        PRINTJOB_BASE_URL="https://print.example.com/",
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"invite_url", "expires_at"}
    url = urlsplit(answer["invite_url"])
    assert (url.scheme, url.netloc) == ("https", "print.example.com")
    assert re.fullmatch(r"/invite/[A-Za-z0-9_-]{43}", url.path)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", answer["expires_at"])
    assert "bob@example.com" in done.stderr and "works once" in done.stderr
    token = url.path.rsplit("/", 1)[1]
    container = bootstrap(Settings.from_env({"PRINTJOB_DATA_DIR": str(cli.data_dir)}), lazy=True)
    try:
        assert container.website.invite(token).email == "bob@example.com"
        with container.storage.reader() as uow:
            assert uow.invites.get(token) is None, "only the token's hash is stored"
    finally:
        container.close()
    text = cli.run("accounts", "invite", account_id, "--email", "carol@example.com")
    assert text.returncode == 0, text.stderr
    link = text.stdout.splitlines()[0]
    assert link.startswith("http://127.0.0.1:8000/invite/")
    assert "PRINTJOB_BASE_URL is not set" in text.stderr
    assert "--email must look like" in cli.fails("accounts", "invite", account_id, "--email", "x")
    assert "no account" in cli.fails(
        "accounts", "invite", "acct_" + "0" * 24, "--email", "bob@example.com"
    )
