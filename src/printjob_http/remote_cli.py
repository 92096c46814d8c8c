"""`printjob remote`: convert images through a printjob API, from the command line.

    printjob remote convert IMAGE... -o DIR --format svg|pdf|eps|png
                            [--size WxH] [--dpi N] [--colors N] [--background keep|remove]
    printjob remote account [--json]

The key comes from `PRINTJOB_API_KEY`, the address from `PRINTJOB_API_URL` (default
``http://127.0.0.1:8000``). It uses the official client (`printjob_client`) and nothing of
the server.

`convert` writes `DIR/<name>.<format>` for each IMAGE (`DIR` is created when missing; a
file there is replaced whole, never left half-written). Up to the account's
`active_jobs_max` images are converted at once. Progress goes to stderr: on a terminal a
bar per file in progress (phase and percent) and an overall bar, redrawn; otherwise one
line per phase change and one per finished file. Each written file is one line on stdout
(``wrote DIR/logo.svg (...)``).

Running it again is safe: each submission's Idempotency-Key is derived from the image's
bytes and the options, so within 24 hours the same file with the same options gets the same
job back (nothing is charged twice) and an interrupted run picks up the jobs it had started.
An earlier job that was canceled or interrupted by a server restart is asked for again
under a new key.

Exit status:
    0   every image was converted and written;
    1   some image was not (each one line on stderr, ``printjob: error: <file>: <detail>``),
        or the run could not start at all (the API unreachable, the key refused, DIR
        not creatable: one line);
    2   the command line or the environment is wrong: argparse's usage message, a bad
        option value or one the API refused (``invalid_parameter``), PRINTJOB_API_KEY not
        set, a bad PRINTJOB_API_URL, two images that would write the same file;
    130 interrupted (Ctrl-C); run the same command again to carry on.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from printjob_client import Account, AsyncClient, Job

PROG = "printjob"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
API_KEY_ENV, API_URL_ENV = "PRINTJOB_API_KEY", "PRINTJOB_API_URL"
DEFAULT_API_URL = "http://127.0.0.1:8000"
FORMATS = ("svg", "pdf", "eps", "png")
BACKGROUNDS = ("keep", "remove")
#: How long one image may wait for a free job slot (`too_many_active_jobs`) in all.
SLOT_PATIENCE_SECONDS = 30 * 60.0
#: Keys tried per image: the derived key, then new ones when an earlier run's job was
#: canceled, interrupted, or its file expired.
KEY_ATTEMPTS = 3

_SIZE = re.compile(r"original|[0-9]{1,6}[xX][0-9]{1,6}")
_DIGITS = re.compile(r"[0-9]{1,9}")


class UsageError(Exception):
    """The command line or environment is wrong (exit 2, one line)."""


# -- the parser --


def add_remote_commands(subparsers: Any) -> None:
    """Declare `printjob remote convert` and `printjob remote account` on `subparsers`."""
    remote = subparsers.add_parser(
        "remote",
        help="convert images through a printjob API (PRINTJOB_API_KEY, PRINTJOB_API_URL)",
        description="The API's client: convert images through a printjob service, show the "
        f"account. The key comes from {API_KEY_ENV}, the address from {API_URL_ENV} "
        f"(default {DEFAULT_API_URL}).",
    )
    actions = remote.add_subparsers(dest="action", metavar="ACTION", required=True)

    convert = actions.add_parser(
        "convert",
        help="convert images to DIR/<name>.<format> (one credit per new file)",
        description="Convert each IMAGE through the API and write DIR/<name>.<format>. "
        "Safe to run again: the same image with the same options reuses its job, so "
        "nothing is charged twice within 24 hours. Exit status: 0 all written; 1 some "
        "image failed; 2 bad command line, options or environment; 130 interrupted.",
    )
    convert.add_argument("images", nargs="+", metavar="IMAGE", help="PNG, JPEG, GIF, BMP, WebP")
    convert.add_argument(
        "-o", "--output-dir", dest="output_dir", required=True, metavar="DIR", help="where to write"
    )
    convert.add_argument("--format", required=True, metavar="svg|pdf|eps|png", help="file format")
    convert.add_argument(
        "--size", metavar="WxH", help="exact canvas in pixels, design fitted inside; original"
    )
    convert.add_argument("--dpi", metavar="N", help="resolution the file states (needs --size)")
    convert.add_argument("--colors", metavar="N", help="flat colours, 1..1000; automatic")
    convert.add_argument(
        "--background", metavar="keep|remove", help="keep the background or leave it out; keep"
    )
    convert.set_defaults(run=cmd_remote_convert)

    account = actions.add_parser("account", help="credits and limits of the key's account")
    account.add_argument("--json", action="store_true", help="print the API's JSON")
    account.set_defaults(run=cmd_remote_account)


# -- shared --


def _line(text: str) -> str:
    return " ".join(str(text).split())


def _error(message: str, status: int = EXIT_FAILED) -> int:
    print(f"{PROG}: error: {_line(message)}", file=sys.stderr)
    return status


def _environment() -> tuple[str, str]:
    key = os.environ.get(API_KEY_ENV, "").strip()
    if not key:
        raise UsageError(f"{API_KEY_ENV} is not set: export it with your API key")
    url = os.environ.get(API_URL_ENV, "").strip() or DEFAULT_API_URL
    if not re.match(r"https?://[^/\s]+", url):
        raise UsageError(f"{API_URL_ENV} must be an http:// or https:// address, not {url!r}")
    return key, url


def _client(key: str, url: str) -> AsyncClient:
    from printjob_client import AsyncClient

    return AsyncClient(key, url)


# -- printjob remote account --


def cmd_remote_account(args: argparse.Namespace) -> int:
    try:
        key, url = _environment()
    except UsageError as exc:
        return _error(str(exc), EXIT_USAGE)
    from printjob_client import PrintjobError

    async def fetch() -> Account:
        async with _client(key, url) as client:
            return await client.account()

    try:
        account = asyncio.run(fetch())
    except PrintjobError as exc:
        return _error(exc.detail)
    if args.json:
        print(json.dumps(dict(account.raw), indent=2))
        return EXIT_OK
    rows: list[tuple[str, object]] = [
        ("credits_balance", account.credits_balance),
        ("credits_held", account.credits_held),
        ("credits_available", account.credits_available),
        ("active_jobs", account.active_jobs),
        ("active_jobs_max", account.active_jobs_max),
    ]
    rows += [(f"limits.{name}", value) for name, value in sorted(account.limits.raw.items())]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    return EXIT_OK


# -- printjob remote convert --


@dataclass(frozen=True)
class Item:
    """One image to convert and where its file goes."""

    source: Path
    target: Path
    label: str


def options_from_args(args: argparse.Namespace) -> dict[str, str]:
    """The submission's form fields, checked for shape (the API checks ranges)."""
    fmt = args.format
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    fields = {"format": fmt}
    if args.size is not None:
        if not _SIZE.fullmatch(args.size):
            raise UsageError(f"--size must be original or WxH in pixels, not {args.size!r}")
        fields["size"] = args.size.lower()
    for name in ("dpi", "colors"):
        value = getattr(args, name)
        if value is not None:
            if not _DIGITS.fullmatch(value) or int(value) < 1:
                raise UsageError(f"--{name} must be a positive whole number, not {value!r}")
            fields[name] = str(int(value))
    if args.background is not None:
        if args.background not in BACKGROUNDS:
            raise UsageError(f"--background must be keep or remove, not {args.background!r}")
        fields["background"] = args.background
    return fields


def plan_items(images: Sequence[str], output_dir: Path, fmt: str) -> list[Item]:
    """One item per distinct image; two images writing one file is a usage error."""
    items: list[Item] = []
    by_target: dict[Path, Path] = {}
    for image in images:
        source = Path(image)
        target = output_dir / f"{source.stem or source.name}.{fmt}"
        seen = by_target.get(target)
        if seen is not None:
            if os.path.abspath(seen) == os.path.abspath(source):
                continue  # the same image named twice
            raise UsageError(f"{seen} and {source} would both be written to {target}")
        by_target[target] = source
        items.append(Item(source=source, target=target, label=image))
    return items


def idempotency_key(image: bytes, fields: Mapping[str, str], attempt: int = 0) -> str:
    """The key of one image with these options: the same on every run, so nothing is paid
    twice. Options are normalised (defaults filled in) as the API compares them."""
    normalised = {
        "format": fields["format"],
        "size": fields.get("size", "original").lower(),
        "dpi": fields.get("dpi"),
        "colors": fields.get("colors"),
        "background": fields.get("background", "keep"),
    }
    digest = hashlib.sha256(b"printjob remote convert 1\n")
    digest.update(hashlib.sha256(image).digest())
    digest.update(json.dumps(normalised, sort_keys=True).encode())
    key = f"pj-{digest.hexdigest()}"
    return key if attempt == 0 else f"{key}.{attempt + 1}"


def cmd_remote_convert(args: argparse.Namespace) -> int:
    try:
        key, url = _environment()
        fields = options_from_args(args)
        output_dir = Path(args.output_dir)
        items = plan_items(args.images, output_dir, fields["format"])
    except UsageError as exc:
        return _error(str(exc), EXIT_USAGE)
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _error(f"cannot create {output_dir}: {exc.strerror or exc}")
    progress = Progress([item.label for item in items], sys.stderr, sys.stdout)
    try:
        return asyncio.run(_convert_all(key, url, items, fields, progress))
    except KeyboardInterrupt:
        progress.close()
        return _error(
            "interrupted; run the same command again to carry on (nothing is charged twice)",
            EXIT_INTERRUPTED,
        )
    finally:
        progress.close()


async def _convert_all(
    key: str, url: str, items: list[Item], fields: dict[str, str], progress: Progress
) -> int:
    from printjob_client import InvalidParameter, PrintjobError

    async with _client(key, url) as client:
        try:
            account = await client.account()
        except PrintjobError as exc:
            progress.close()
            return _error(exc.detail)
        slots = asyncio.Semaphore(max(1, account.active_jobs_max))
        refused: list[BaseException] = []
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(_convert_one(client, i, item, fields, slots, progress))
                    for i, item in enumerate(items)
                ]
        except* InvalidParameter as group_error:
            refused.extend(group_error.exceptions)
    if refused:
        progress.close()
        first = refused[0]
        assert isinstance(first, InvalidParameter)
        option = f"--{first.param}" if first.param else "options"
        return _error(f"invalid {option}: {first.detail}", EXIT_USAGE)
    outcomes = [task.result() for task in tasks]
    progress.close()
    converted = sum(1 for outcome in outcomes if outcome is not None)
    reused = sum(1 for outcome in outcomes if outcome is not None and outcome.replayed)
    summary = f"{converted} of {len(items)} files converted"
    if reused:
        summary += f" ({reused} from an earlier run's jobs, not charged again)"
    print(f"{PROG}: {summary}", file=sys.stderr)
    return EXIT_OK if converted == len(items) else EXIT_FAILED


async def _convert_one(
    client: AsyncClient,
    index: int,
    item: Item,
    fields: dict[str, str],
    slots: asyncio.Semaphore,
    progress: Progress,
) -> Job | None:
    """Convert one image; its failure is reported here (one line) and gives None.

    `InvalidParameter` is raised: the options are wrong for every image alike."""
    from printjob_client import InvalidParameter, PrintjobError, ResultExpired

    try:
        data = await asyncio.to_thread(item.source.read_bytes)
    except OSError as exc:
        progress.fail(index, f"cannot read it: {exc.strerror or exc}")
        return None
    try:
        for attempt in range(KEY_ATTEMPTS):
            async with slots:
                progress.note(index, "submitting")
                job = await _submit(client, index, data, fields, attempt, progress)
                if job.replayed and _ended_by_chance(job) and attempt + 1 < KEY_ATTEMPTS:
                    continue
                replayed = job.replayed
                job = await client.wait(job, lambda j: progress.update(index, j))
                # Whether the submission found an earlier run's job is the submit answer's
                # fact; the polls that follow do not repeat it.
                job = dataclasses.replace(job, replayed=replayed)
            if not job.succeeded:
                progress.fail(index, _why(job))
                return None
            progress.note(index, "downloading", 100)
            try:
                await client.download(job, item.target)
            except ResultExpired:
                if job.replayed and attempt + 1 < KEY_ATTEMPTS:
                    continue
                raise
            progress.done(index, item.target, job)
            return job
    except InvalidParameter:
        raise
    except PrintjobError as exc:
        progress.fail(index, exc.detail)
        return None
    except OSError as exc:
        progress.fail(index, f"cannot write {item.target}: {exc.strerror or exc}")
        return None
    return None


async def _submit(
    client: AsyncClient,
    index: int,
    data: bytes,
    fields: dict[str, str],
    attempt: int,
    progress: Progress,
) -> Job:
    """Submit, waiting for a free job slot while the account has too many unfinished jobs."""
    from printjob_client import TooManyActiveJobs

    deadline = time.monotonic() + SLOT_PATIENCE_SECONDS
    while True:
        try:
            return await client.submit(
                data,
                format=fields["format"],
                size=fields.get("size"),
                dpi=int(fields["dpi"]) if "dpi" in fields else None,
                colors=int(fields["colors"]) if "colors" in fields else None,
                background=fields.get("background"),
                idempotency_key=idempotency_key(data, fields, attempt),
            )
        except TooManyActiveJobs as exc:
            if time.monotonic() > deadline:
                raise
            progress.note(index, "waiting for a free job slot")
            await asyncio.sleep(max(1.0, exc.retry_after or 5.0))


def _ended_by_chance(job: Job) -> bool:
    """An earlier run's job that ended without a file through no fault of the image."""
    if job.status == "canceled":
        return True
    return job.status == "failed" and job.error is not None and job.error.code == "interrupted"


def _why(job: Job) -> str:
    if job.status == "canceled":
        return f"job {job.id} was canceled; nothing was charged"
    if job.error is not None:
        return f"{job.error.detail or job.error.code} (job {job.id}, nothing charged)"
    return f"job {job.id} ended {job.status}"


# -- progress on stderr --


@dataclass
class _State:
    label: str
    text: str = "waiting"
    percent: int = 0
    active: bool = False
    finished: bool = False
    last_text: str | None = field(default=None)


BAR_WIDTH = 24


def _fit(text: str, width: int) -> str:
    """`text` in `width` columns: padded, or its end kept (the file name) when too long."""
    return text.ljust(width) if len(text) <= width else "..." + text[-(width - 3) :]


def _bar(percent: int) -> str:
    filled = BAR_WIDTH * max(0, min(100, percent)) // 100
    return "[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]"


class Progress:
    """A bar per file in progress and an overall bar, on stderr.

    On a terminal the bars are redrawn in place under the lines already printed; otherwise
    each file's phase change is one line, and each finished file adds an overall line.
    """

    def __init__(self, labels: Sequence[str], stream: TextIO, out: TextIO) -> None:
        self.stream = stream
        self.out = out
        self.states = [_State(label) for label in labels]
        self.tty = stream.isatty() and os.environ.get("TERM") != "dumb"
        self.width = min(32, max([len("overall"), *(len(_line(label)) for label in labels)]))
        self._drawn = 0
        self._closed = False

    # -- events --

    def note(self, index: int, text: str, percent: int | None = None) -> None:
        state = self.states[index]
        state.active = True
        state.text = text
        if percent is not None:
            state.percent = percent
        self._changed(index)

    def update(self, index: int, job: Job) -> None:
        state = self.states[index]
        state.active = True
        state.text = job.phase or job.status
        if job.progress is not None:
            state.percent = max(state.percent, job.progress)
        self._changed(index)

    def done(self, index: int, target: Path, job: Job) -> None:
        self._finish(index)
        facts = ""
        if job.result is not None:
            r = job.result
            plural = "" if r.colors == 1 else "s"
            facts = f" ({r.format} {r.width}x{r.height} px, {r.colors} colour{plural}"
            facts += ", background removed)" if r.background_removed else ")"
        reused = ", from an earlier run" if job.replayed else ""
        self._print(f"wrote {target}{facts}{reused}", self.out)
        if not self.tty:
            self._overall_line()

    def fail(self, index: int, message: str) -> None:
        state = self._finish(index)
        self._print(f"{PROG}: error: {_line(state.label)}: {_line(message)}", self.stream)
        if not self.tty:
            self._overall_line()

    def close(self) -> None:
        if self.tty and not self._closed:
            self._clear()
        self._closed = True

    # -- drawing --

    def _finish(self, index: int) -> _State:
        state = self.states[index]
        state.active, state.finished, state.percent = False, True, 100
        return state

    def _overall(self) -> tuple[int, int]:
        total = len(self.states) or 1
        percent = sum(s.percent if not s.finished else 100 for s in self.states) // total
        return percent, sum(1 for s in self.states if s.finished)

    def _changed(self, index: int) -> None:
        if self._closed:
            return
        if self.tty:
            self._redraw()
            return
        state = self.states[index]
        if state.text != state.last_text:  # one line per phase change
            state.last_text = state.text
            self.stream.write(f"{PROG}: {_line(state.label)}: {state.text} {state.percent}%\n")
            self.stream.flush()

    def _overall_line(self) -> None:
        percent, finished = self._overall()
        self.stream.write(f"{PROG}: overall: {finished}/{len(self.states)} files, {percent}%\n")
        self.stream.flush()

    def _lines(self) -> list[str]:
        columns = shutil.get_terminal_size((80, 24)).columns
        lines = []
        for state in self.states:
            if state.active and not state.finished:
                name = _fit(_line(state.label), self.width)
                lines.append(f"{name} {_bar(state.percent)} {state.percent:3d}% {state.text}")
        percent, finished = self._overall()
        name = _fit("overall", self.width)
        lines.append(f"{name} {_bar(percent)} {percent:3d}% {finished}/{len(self.states)} files")
        return [line[: columns - 1] for line in lines]

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0
        self.stream.flush()

    def _redraw(self) -> None:
        self._clear()
        lines = self._lines()
        self.stream.write("".join(line + "\n" for line in lines))
        self.stream.flush()
        self._drawn = len(lines)

    def _print(self, line: str, stream: TextIO) -> None:
        if self._closed:
            print(line, file=stream, flush=True)
            return
        if self.tty:
            self._clear()
        print(line, file=stream, flush=True)
        if self.tty:
            self._redraw()
