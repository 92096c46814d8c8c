"""The `printjob` command: the server, the worker and the operator's commands.

    printjob --version
    printjob serve [--host 127.0.0.1] [--port 8000] [--workers N]
    printjob worker
    printjob db upgrade [--json]
    printjob accounts create [--credits N] [--active-jobs-max 3|5|10] [--name NAME]
                             [--email EMAIL] [--json]
    printjob accounts show ACCOUNT_ID [--json]
    printjob accounts list [--json] [--disabled]
    printjob accounts disable ACCOUNT_ID
    printjob accounts enable ACCOUNT_ID
    printjob accounts limits ACCOUNT_ID --active-jobs-max 3|5|10
    printjob accounts plan ACCOUNT_ID free|monthly
    printjob accounts invite ACCOUNT_ID --email EMAIL [--json]
    printjob credits add ACCOUNT_ID N [--reason TEXT]
    printjob credits remove ACCOUNT_ID N --reason TEXT
    printjob credits history ACCOUNT_ID [--json]
    printjob keys create ACCOUNT_ID [--json]
    printjob keys list ACCOUNT_ID [--json]
    printjob keys revoke KEY_ID
    printjob openapi
    printjob trace IMAGE -o OUT [--format F] [--size WxH] [--dpi N] [--colors N] [--background B]

Settings come from the environment (`PRINTJOB_DATA_DIR`, ...; see `printjob_adapters.settings`).
Exit status: 0 done; 1 the command could not be carried out (one line on stderr,
`printjob: error: ...`); 2 the command line itself is wrong (argparse's usage message).
An API key is printed once, by `keys create`, and never again; so is an invite link.

The operator's commands (accounts, credits, keys) only open a printjob database that
exists: pointed at a data dir or PostgreSQL database without one, they fail with one line
naming it and create nothing (`serve`, `worker` and `db upgrade` create it). Their failures
name the database they used; stdout carries only the answer (scripts parse it).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from printjob_core.errors import OperatorError, PrintjobError, ProblemError, ServerBusy
from printjob_core.quota import DAILY_DOWNLOADS
from printjob_core.services import ACTIVE_JOBS_CHOICES
from printjob_core.shapes import format_time

if TYPE_CHECKING:
    from printjob_adapters.bootstrap import Container
    from printjob_adapters.settings import Settings
    from printjob_core.model import Account

PROG = "printjob"
EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class CommandError(Exception):
    """A command cannot be carried out; the message is the one line the operator sees."""


# -- helpers --


def _settings() -> Settings:
    from printjob_adapters.settings import Settings

    return Settings.from_env()


#: Which database the running operator command opened, named in its error messages.
_in_use: list[str] = []


def _container() -> Container:
    """The operator's wiring: an existing printjob database, never a new one."""
    from printjob_adapters.bootstrap import bootstrap, storage_description

    settings = _settings()
    # Named before opening: a database that cannot be reached is named in its error too.
    _in_use.append(storage_description(settings))
    return bootstrap(settings, lazy=True, create=False)


#: The most credits one command may add or start with (keeps totals far from overflow).
MAX_AMOUNT = 1_000_000_000
_DIGITS = re.compile(r"[+-]?[0-9]+")


def _whole_number(text: str, what: str, *, minimum: int) -> int:
    if not _DIGITS.fullmatch(text.strip()):
        raise CommandError(f"{what} must be a whole number, not {text!r}")
    value = int(text.strip(), 10)
    if value < minimum:
        qualifier = "positive" if minimum == 1 else f"at least {minimum}"
        raise CommandError(f"{what} must be {qualifier}, not {value}")
    if value > MAX_AMOUNT:
        raise CommandError(f"{what} may be at most {MAX_AMOUNT:,}, not {value:,}")
    return value


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2))


def _print_table(pairs: Sequence[tuple[str, object]]) -> None:
    width = max(len(name) for name, _ in pairs)
    for name, value in pairs:
        print(f"{name.ljust(width)}  {value}")


def _print_columns(header: Sequence[str], table: Sequence[Sequence[str]]) -> None:
    """A table with a header line, each column as wide as its widest cell."""
    widths = [max(len(line[i]) for line in [header, *table]) for i in range(len(header))]
    for line in [header, *table]:
        cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        print("  ".join(cells).rstrip())


def _time(value: Any) -> str | None:
    return None if value is None else format_time(value)


# -- serve, worker, openapi, trace: implemented by the HTTP shell and the engine --


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings()
    workers = settings.workers if args.workers is None else args.workers
    try:
        from printjob_http.server import serve
    except ImportError as exc:
        raise CommandError(f"serve is not available: {exc}") from None
    serve(settings, host=args.host, port=args.port, workers=workers)
    return EXIT_OK


def cmd_worker(args: argparse.Namespace) -> int:
    settings = _settings()
    try:
        from printjob_http.server import run_worker
    except ImportError as exc:
        raise CommandError(f"worker is not available: {exc}") from None
    run_worker(settings)
    return EXIT_OK


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Create or upgrade the schema of the configured database (SQLite or PostgreSQL)."""
    from printjob_adapters.blobs import make_private_dirs
    from printjob_adapters.bootstrap import open_storage

    settings = _settings()
    if settings.database_url is None:
        make_private_dirs(settings.data_dir)
    storage = open_storage(settings, migrate=False)
    try:
        before = storage.schema_version()
        after = storage.migrate()
    finally:
        storage.close()
    kind = "sqlite" if settings.database_url is None else "postgresql"
    if args.json:
        _print_json({"database": kind, "schema_version": after, "previous_version": before})
    elif before == after:
        print(f"{kind} schema is up to date (version {after})")
    else:
        print(f"{kind} schema upgraded from version {before} to {after}")
    return EXIT_OK


def cmd_openapi(args: argparse.Namespace) -> int:
    settings = _settings()
    try:
        from printjob_http.openapi import openapi_document
    except ImportError as exc:
        raise CommandError(f"openapi is not available: {exc}") from None
    _print_json(openapi_document(settings))
    return EXIT_OK


def cmd_trace(args: argparse.Namespace) -> int:
    try:
        from printjob_http.trace_command import run_trace
    except ImportError as exc:
        raise CommandError(f"trace is not available: {exc}") from None
    return run_trace(args)


# -- accounts --


def cmd_accounts_create(args: argparse.Namespace) -> int:
    credits_balance = _whole_number(args.credits, "--credits", minimum=0)
    active_jobs_max = _whole_number(args.active_jobs_max, "--active-jobs-max", minimum=1)
    if active_jobs_max not in ACTIVE_JOBS_CHOICES:
        raise CommandError(f"--active-jobs-max must be 3, 5 or 10, not {active_jobs_max}")
    account = _container().operator.create_account(
        credits_balance, active_jobs_max, name=args.name, email=args.email
    )
    if args.json:
        _print_json({"account_id": account.id})
    else:
        _print_table(
            [
                ("account_id", account.id),
                ("credits_balance", account.credits_balance),
                ("active_jobs_max", account.active_jobs_max),
                *_contact(account),
            ]
        )
    return EXIT_OK


def _contact(account: Account) -> list[tuple[str, object]]:
    """The name and e-mail address, where the operator gave them."""
    given = (("name", account.name), ("email", account.email))
    return [(field, value) for field, value in given if value is not None]


def cmd_accounts_show(args: argparse.Namespace) -> int:
    summary = _container().operator.show_account(args.account_id)
    account, view = summary.account, summary.view
    shown: dict[str, Any] = {
        "account_id": account.id,
        "disabled": account.disabled,
        "credits_balance": view.credits_balance,
        "credits_held": view.credits_held,
        "credits_available": view.credits_available,
        "active_jobs": view.active_jobs,
        "active_jobs_max": view.active_jobs_max,
        "live_keys": summary.live_keys,
        "plan": account.plan.value,
        "created_at": _time(account.created_at),
        **dict(_contact(account)),
    }
    if args.json:
        _print_json(shown)
    else:
        _print_table(
            [
                (name, ("yes" if value else "no") if name == "disabled" else value)
                for name, value in shown.items()
            ]
        )
    return EXIT_OK


def cmd_accounts_list(args: argparse.Namespace) -> int:
    container = _container()
    accounts = container.operator.list_accounts(disabled_only=args.disabled)
    rows = [
        {
            "account_id": account.id,
            "name": account.name,
            "email": account.email,
            "credits_balance": account.credits_balance,
            "credits_held": account.credits_held,
            "active_jobs_max": account.active_jobs_max,
            "plan": account.plan.value,
            "disabled": account.disabled,
            "created_at": _time(account.created_at),
        }
        for account in accounts
    ]
    if args.json:
        _print_json(rows)
        return EXIT_OK
    which = "disabled accounts" if args.disabled else "accounts"
    print(f"{len(rows)} {which} in {_in_use[-1]}")
    if rows:
        header = (
            "ACCOUNT_ID",
            "NAME",
            "EMAIL",
            "CREDITS",
            "HELD",
            "ACTIVE_MAX",
            "PLAN",
            "DISABLED",
        )
        _print_columns(
            (*header, "CREATED_AT"),
            [
                (
                    str(row["account_id"]),
                    str(row["name"] or "-"),
                    str(row["email"] or "-"),
                    str(row["credits_balance"]),
                    str(row["credits_held"]),
                    str(row["active_jobs_max"]),
                    str(row["plan"]),
                    "yes" if row["disabled"] else "no",
                    str(row["created_at"]),
                )
                for row in rows
            ],
        )
    return EXIT_OK


def cmd_accounts_limits(args: argparse.Namespace) -> int:
    active_jobs_max = _whole_number(args.active_jobs_max, "--active-jobs-max", minimum=1)
    account = _container().operator.set_active_jobs_max(args.account_id, active_jobs_max)
    print(
        f"account {account.id} may now have {account.active_jobs_max} unfinished jobs at "
        "once; jobs already accepted are not affected"
    )
    return EXIT_OK


def cmd_accounts_plan(args: argparse.Namespace) -> int:
    account = _container().operator.set_plan(args.account_id, args.plan)
    quota = DAILY_DOWNLOADS[account.plan]
    downloads = "no daily cap" if quota is None else f"{quota} website downloads per UTC day"
    print(f"account {account.id} is now on the {account.plan.value} plan: {downloads}")
    return EXIT_OK


#: Where the invite link points when `PRINTJOB_BASE_URL` is not set: `serve`'s default.
DEFAULT_SERVER = ("127.0.0.1", 8000)


def cmd_accounts_invite(args: argparse.Namespace) -> int:
    container = _container()
    invite, token = container.operator.invite(args.account_id, args.email)
    settings = container.settings
    invite_url = f"{settings.base_url_for(*DEFAULT_SERVER)}/invite/{token}"
    if settings.base_url is None:
        print(
            f"note: PRINTJOB_BASE_URL is not set, so the link assumes the server at "
            f"{settings.base_url_for(*DEFAULT_SERVER)}",
            file=sys.stderr,
        )
    note = (
        f"Send this link to {invite.email}; it works once, until {_time(invite.expires_at)}. "
        "printjob keeps only its hash."
    )
    if args.json:
        _print_json({"invite_url": invite_url, "expires_at": _time(invite.expires_at)})
        print(note, file=sys.stderr)
    else:
        print(invite_url)
        print(note)
    return EXIT_OK


def cmd_accounts_disable(args: argparse.Namespace) -> int:
    canceled = _container().operator.disable_account(args.account_id)
    jobs = "job" if len(canceled) == 1 else "jobs"
    print(
        f"disabled account {args.account_id}: {len(canceled)} unfinished {jobs} canceled, "
        "nothing charged"
    )
    return EXIT_OK


def cmd_accounts_enable(args: argparse.Namespace) -> int:
    account = _container().operator.enable_account(args.account_id)
    print(f"enabled account {account.id}")
    return EXIT_OK


# -- credits --


def _balance(account: Account) -> str:
    return (
        f"balance {account.credits_balance} "
        f"({account.credits_available} available, {account.credits_held} held)"
    )


def cmd_credits_add(args: argparse.Namespace) -> int:
    amount = _whole_number(args.amount, "the amount", minimum=1)
    account = _container().operator.add_credits(args.account_id, amount, args.reason)
    print(f"added {amount} credits to {account.id}: {_balance(account)}")
    return EXIT_OK


def cmd_credits_remove(args: argparse.Namespace) -> int:
    amount = _whole_number(args.amount, "the amount", minimum=1)
    account = _container().operator.remove_credits(args.account_id, amount, args.reason)
    print(f"removed {amount} credits from {account.id}: {_balance(account)}")
    return EXIT_OK


def cmd_credits_history(args: argparse.Namespace) -> int:
    entries = _container().operator.credit_history(args.account_id)
    rows = [
        {
            "id": entry.id,
            "at": _time(entry.at),
            "kind": entry.kind.value,
            "amount": entry.amount,
            "balance_after": entry.balance_after,
            "held_after": entry.held_after,
            "job_id": entry.job_id,
            "reason": entry.reason,
        }
        for entry in entries
    ]
    if args.json:
        _print_json(rows)
        return EXIT_OK
    if not rows:
        print(f"account {args.account_id} has no credit movements")
        return EXIT_OK
    _print_columns(
        ("AT", "KIND", "AMOUNT", "BALANCE", "HELD", "JOB_ID", "REASON"),
        [
            (
                str(row["at"]),
                str(row["kind"]),
                str(row["amount"]),
                str(row["balance_after"]),
                str(row["held_after"]),
                str(row["job_id"] or "-"),
                str(row["reason"] or "-"),
            )
            for row in rows
        ],
    )
    return EXIT_OK


# -- keys --


def cmd_keys_create(args: argparse.Namespace) -> int:
    key, secret = _container().operator.create_key(args.account_id)
    note = "This key is shown only once: store it now. printjob keeps only its hash."
    if args.json:
        _print_json({"key_id": key.id, "api_key": secret})
        print(note, file=sys.stderr)
    else:
        _print_table([("key_id", key.id), ("api_key", secret)])
        print(note)
    return EXIT_OK


def cmd_keys_list(args: argparse.Namespace) -> int:
    keys = _container().operator.list_keys(args.account_id)
    rows = [
        {
            "key_id": key.id,
            "hint": key.hint,
            "created_at": _time(key.created_at),
            "revoked_at": _time(key.revoked_at),
            "live": key.is_live,
        }
        for key in keys
    ]
    if args.json:
        _print_json(rows)
        return EXIT_OK
    if not rows:
        print(f"account {args.account_id} has no keys")
        return EXIT_OK
    _print_columns(
        ("KEY_ID", "HINT", "CREATED_AT", "STATUS"),
        [
            (
                str(row["key_id"]),
                str(row["hint"]),
                str(row["created_at"]),
                "live" if row["live"] else f"revoked {row['revoked_at']}",
            )
            for row in rows
        ],
    )
    return EXIT_OK


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    operator = _container().operator
    key = operator.revoke_key(args.key_id)
    print(f"revoked key {key.id} ({key.hint}) of {key.account_id}; it no longer works")
    return EXIT_OK


# -- the parser --


def _version() -> str:
    """The installed package's version (the one in pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("printjob")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Turn raster images into print files: the server, the worker and the "
        "operator's commands.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = commands.add_parser("serve", help="run the API server (with job workers)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="port to listen on (8000)")
    serve.add_argument(
        "--workers",
        type=_non_negative,
        default=None,
        metavar="N",
        help="background job workers; 0 serves the API only (default PRINTJOB_WORKERS, "
        "else the number of cores)",
    )
    serve.set_defaults(run=cmd_serve)

    worker = commands.add_parser("worker", help="process jobs only, no API")
    worker.set_defaults(run=cmd_worker)

    accounts = commands.add_parser(
        "accounts", help="create, show, list, limit, disable, enable accounts"
    )
    account_commands = accounts.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = account_commands.add_parser("create", help="create an account")
    create.add_argument("--credits", default="0", metavar="N", help="starting credits (0)")
    create.add_argument(
        "--active-jobs-max",
        default="3",
        metavar="3|5|10",
        help="unfinished jobs allowed at once (3)",
    )
    create.add_argument("--name", default=None, help="who the account is (operator only)")
    create.add_argument("--email", default=None, help="contact address (operator only)")
    create.add_argument("--json", action="store_true", help='print {"account_id": ...}')
    create.set_defaults(run=cmd_accounts_create)
    show = account_commands.add_parser("show", help="credits, jobs and keys of an account")
    show.add_argument("account_id", metavar="ACCOUNT_ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(run=cmd_accounts_show)
    listing = account_commands.add_parser("list", help="every account, oldest first")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument("--disabled", action="store_true", help="only the disabled accounts")
    listing.set_defaults(run=cmd_accounts_list)
    limits = account_commands.add_parser("limits", help="change an account's limits")
    limits.add_argument("account_id", metavar="ACCOUNT_ID")
    limits.add_argument(
        "--active-jobs-max",
        required=True,
        metavar="3|5|10",
        help="unfinished jobs allowed at once",
    )
    limits.set_defaults(run=cmd_accounts_limits)
    plan = account_commands.add_parser(
        "plan", help="set an account's website plan: free (5 downloads a day) or monthly"
    )
    plan.add_argument("account_id", metavar="ACCOUNT_ID")
    plan.add_argument("plan", metavar="free|monthly", help="the plan")
    plan.set_defaults(run=cmd_accounts_plan)
    invite = account_commands.add_parser(
        "invite", help="print a one-time link for someone to set a website password"
    )
    invite.add_argument("account_id", metavar="ACCOUNT_ID")
    invite.add_argument("--email", required=True, help="who will sign in with it")
    invite.add_argument("--json", action="store_true", help='print {"invite_url": ...}')
    invite.set_defaults(run=cmd_accounts_invite)
    disable = account_commands.add_parser(
        "disable", help="disable an account; its unfinished jobs are canceled, nothing charged"
    )
    disable.add_argument("account_id", metavar="ACCOUNT_ID")
    disable.set_defaults(run=cmd_accounts_disable)
    enable = account_commands.add_parser("enable", help="enable a disabled account")
    enable.add_argument("account_id", metavar="ACCOUNT_ID")
    enable.set_defaults(run=cmd_accounts_enable)

    credits_parser = commands.add_parser(
        "credits", help="add or remove an account's credits; its credit history"
    )
    credit_commands = credits_parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = credit_commands.add_parser("add", help="add N credits to an account")
    add.add_argument("account_id", metavar="ACCOUNT_ID")
    add.add_argument("amount", metavar="N", help="a positive whole number")
    add.add_argument("--reason", default=None, metavar="TEXT", help="kept in the ledger")
    add.set_defaults(run=cmd_credits_add)
    remove = credit_commands.add_parser(
        "remove", help="take N credits back (never below what unfinished jobs hold)"
    )
    remove.add_argument("account_id", metavar="ACCOUNT_ID")
    remove.add_argument("amount", metavar="N", help="a positive whole number")
    remove.add_argument(
        "--reason", default=None, metavar="TEXT", help="why (required; kept in the ledger)"
    )
    remove.set_defaults(run=cmd_credits_remove)
    history = credit_commands.add_parser(
        "history", help="the credit ledger: add, remove, hold, charge, release"
    )
    history.add_argument("account_id", metavar="ACCOUNT_ID")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(run=cmd_credits_history)

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    key_commands = keys.add_subparsers(dest="action", metavar="ACTION", required=True)
    key_create = key_commands.add_parser(
        "create", help="create an API key (at most 5 live keys per account)"
    )
    key_create.add_argument("account_id", metavar="ACCOUNT_ID")
    key_create.add_argument(
        "--json", action="store_true", help='print {"key_id": ..., "api_key": ...}'
    )
    key_create.set_defaults(run=cmd_keys_create)
    key_list = key_commands.add_parser("list", help="list an account's keys (never the secrets)")
    key_list.add_argument("account_id", metavar="ACCOUNT_ID")
    key_list.add_argument("--json", action="store_true", help="print JSON")
    key_list.set_defaults(run=cmd_keys_list)
    key_revoke = key_commands.add_parser("revoke", help="revoke a key; it stops working at once")
    key_revoke.add_argument("key_id", metavar="KEY_ID")
    key_revoke.set_defaults(run=cmd_keys_revoke)

    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="action", metavar="ACTION", required=True)
    upgrade = db_commands.add_parser(
        "upgrade", help="create or upgrade the database schema (also done on start)"
    )
    upgrade.add_argument("--json", action="store_true", help="print JSON")
    upgrade.set_defaults(run=cmd_db_upgrade)

    openapi = commands.add_parser("openapi", help="print the OpenAPI document")
    openapi.set_defaults(run=cmd_openapi)

    trace = commands.add_parser(
        "trace", help="convert one image with the engine alone: no server, no credits"
    )
    try:
        from printjob_http.trace_command import add_trace_arguments
    except ImportError:
        trace.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    else:
        add_trace_arguments(trace)
    trace.set_defaults(run=cmd_trace)

    from printjob_http.remote_cli import add_remote_commands

    add_remote_commands(commands)
    return parser


def _trace_parser() -> argparse.ArgumentParser | None:
    """`printjob trace`'s parser alone, as `build_parser` declares it.

    A print shop runs `trace` once per file, so its start-up is paid per file: building
    every command's parser would load the remote commands (asyncio) and read the installed
    package's metadata for `--version`, none of which `trace` uses. None when the engine is
    not installed: `build_parser` then says so.
    """
    try:
        from printjob_http.trace_command import add_trace_arguments
    except ImportError:
        return None
    parser = argparse.ArgumentParser(prog=f"{PROG} trace")
    add_trace_arguments(parser)
    parser.set_defaults(run=cmd_trace)
    return parser


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1..65535, not {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _error(message: str) -> int:
    # One line, always: a message with line breaks is folded.
    line = " ".join(str(message).split())
    print(f"{PROG}: error: {line}", file=sys.stderr)
    return EXIT_ERROR


def _command_errors() -> tuple[type[Exception], ...]:
    """The errors reported as one line as they are. An `except` clause is evaluated only
    when an exception reaches it, so `printjob trace` never loads the storage modules."""
    from printjob_adapters.bootstrap import NoDatabase
    from printjob_adapters.settings import SettingsError
    from printjob_adapters.sqlite import SchemaError

    return (CommandError, SettingsError, SchemaError, NoDatabase)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `printjob` command; returns the exit status."""
    _in_use.clear()
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    arguments = sys.argv[1:] if argv is None else list(argv)
    trace_parser = _trace_parser() if arguments[:1] == ["trace"] else None
    if trace_parser is not None:
        args = trace_parser.parse_args(arguments[1:])
    else:
        args = build_parser().parse_args(arguments)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`printjob openapi | head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except _command_errors() as exc:
        return _error(str(exc))
    except OperatorError as exc:
        return _error(_naming_the_database(str(exc)))
    except ServerBusy as exc:
        return _error(_naming_the_database(_why_busy(exc)))
    except ProblemError as exc:
        return _error(_naming_the_database(exc.detail))
    except PrintjobError as exc:
        return _error(_naming_the_database(str(exc) or type(exc).__name__))
    except sqlite3.Error as exc:
        return _error(_naming_the_database(f"database error: {exc}"))
    except OSError as exc:
        # Before the catch-all below, which re-raises: a data dir that cannot be made or
        # a file that cannot be written is the operator's one-line error, not a traceback.
        where = f" ({exc.filename})" if exc.filename else ""
        return _error(f"{exc.strerror or exc}{where}")
    except Exception as exc:
        if type(exc).__module__.startswith(("psycopg", "psycopg_pool")):
            return _error(_naming_the_database(f"database error: {type(exc).__name__}: {exc}"))
        raise


def _why_busy(exc: ServerBusy) -> str:
    """An operator's reason for a busy database: locked by another process, or not
    reachable at all (a PostgreSQL server down or a wrong address)."""
    from printjob_adapters.storage import StorageBusy

    what = exc.what if isinstance(exc, StorageBusy) else "the database stayed locked"
    if "could not be reached" in what or "no database connection" in what:
        cause = exc.__cause__
        reason = f": {str(cause).strip().splitlines()[0]}" if cause and str(cause).strip() else ""
        return f"{what}{reason}; check that the database server is running and its address"
    return f"{what} by another process; try again"


def _naming_the_database(message: str) -> str:
    """The message, with the database an operator command used: "no account" in the
    wrong data dir reads differently from "no account" in the server's."""
    if not _in_use:
        return message
    return f"{message} (database: {_in_use[-1]})"


if __name__ == "__main__":
    sys.exit(main())
