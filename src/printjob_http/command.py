"""The `printjob` executable: `trace` goes straight to the engine, the rest to `cli`.

`printjob trace` runs once per file in a print shop's loops, so its start-up is paid per
file; `printjob_http.cli` imports the core's services, quotas and the operator's helpers
at module level (about 90 ms), none of which tracing uses. This dispatcher looks at the
first argument before importing either.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `printjob` command; returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["trace"]:
        try:
            from printjob_http.trace_command import main as trace
        except ImportError:
            pass  # the engine is not installed: `cli` says so in its usual words
        else:
            return trace(arguments[1:])
    from printjob_http.cli import main as command

    return command(arguments)


if __name__ == "__main__":
    sys.exit(main())
