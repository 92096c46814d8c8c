"""`printjob trace`: the engine alone, from the command line; no server, no credits.

    printjob trace IMAGE -o OUT [--format svg|pdf|eps|png] [--size WxH] [--dpi N]
                               [--colors N] [--background keep|remove]

Options are validated by the API's own parser (`printjob_core.options.parse_options`) and
the image by the API's own rules, both through `printjob_adapters.tracing`, so a command
that succeeds here makes the same file a job with the same options makes. Exit status: 0
done, 2 bad options, 1 the image could not be read or converted (or the output not
written). Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from printjob_core.errors import (
    ConversionCancelled,
    ConversionFailed,
    InvalidParameter,
    ProblemError,
)

#: Exit statuses of `run_trace`.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_trace_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare `trace`'s arguments on `parser` (the `trace` sub-command's parser)."""
    parser.add_argument("image", metavar="IMAGE", help="PNG, JPEG, GIF, BMP or WebP image")
    parser.add_argument(
        "-o", "--output", metavar="OUT", required=True, help="file to write (replaced whole)"
    )
    parser.add_argument(
        "--format",
        metavar="svg|pdf|eps|png",
        help="output format; by default from OUT's suffix",
    )
    parser.add_argument(
        "--size",
        metavar="WxH",
        help="exact canvas in pixels, design fitted inside; default original "
        "(a png is then the 4500x5400 print canvas)",
    )
    parser.add_argument("--dpi", metavar="N", help="resolution the file states (needs --size); 300")
    parser.add_argument(
        "--colors", metavar="N", help="number of flat colours, 1..1000; default automatic"
    )
    parser.add_argument(
        "--background",
        metavar="keep|remove",
        default="keep",
        help="keep the background colour, or leave it out (transparent in a png)",
    )


def run_trace(args: argparse.Namespace) -> int:
    """Carry out `printjob trace`; returns the exit status."""
    # Imported here, not above: every `printjob` command builds this command's parser
    # (`add_trace_arguments`), and only `trace` needs NumPy and Pillow.
    from printjob_adapters.tracing import (
        check_upload,
        convert,
        guess_format,
        options_from_fields,
        write_atomically,
    )

    try:
        fields = {"background": args.background}
        fields["format"] = args.format if args.format is not None else guess_format(args.output)
        for name in ("size", "dpi", "colors"):
            value = getattr(args, name)
            if value is not None:
                fields[name] = value
        options = options_from_fields(fields)
    except InvalidParameter as exc:
        option = f"--{exc.param}" if exc.param else "options"
        return _fail(EXIT_USAGE, f"invalid {option}: {exc.detail}")

    try:
        data = Path(args.image).read_bytes()
    except OSError as exc:
        return _fail(EXIT_FAILED, f"cannot read {args.image}: {exc.strerror or exc}")
    try:
        check_upload(data)
        output = convert(data, options)
    except ProblemError as exc:
        return _fail(EXIT_FAILED, f"{args.image}: {exc.detail}")
    except (ConversionFailed, ConversionCancelled) as exc:
        return _fail(EXIT_FAILED, f"{args.image}: {exc}")
    try:
        write_atomically(Path(args.output), output.data)
    except OSError as exc:
        return _fail(EXIT_FAILED, f"cannot write {args.output}: {exc.strerror or exc}")
    removed = ", background removed" if output.background_removed else ""
    colours = f"{output.colors} colour" + ("" if output.colors == 1 else "s")
    print(
        f"wrote {os.fspath(args.output)}: {options.format.value} {output.width}x{output.height} "
        f"px at {options.effective_dpi} dpi, {colours}{removed}"
    )
    return EXIT_OK


def main(argv: Sequence[str]) -> int:
    """`printjob trace ARGS...` as a command of its own; returns the exit status.

    What `printjob_http.cli.main` does for `trace`, without loading the rest of the
    command line: the operator's commands import the core's services and the storage
    layer, which a print shop would pay for on every file it converts.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(prog="printjob trace")
    add_trace_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_trace(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        line = " ".join(f"{exc.strerror or exc}{where}".split())
        print(f"printjob: error: {line}", file=sys.stderr)
        return EXIT_FAILED


def _fail(status: int, message: str) -> int:
    print(f"printjob trace: {message}", file=sys.stderr)
    return status
