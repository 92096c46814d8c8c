"""How long `printjob trace` of a 512-px image takes as a whole process.

Run from the repository root:

    .venv/bin/python bench/trace_startup.py [--runs N] [--image PATH] [--imports]
        [--baseline /work/main]

Starts `printjob trace IMAGE -o OUT.svg` N times (after one warm-up run, so the page cache
holds the interpreter and the libraries, as on a machine that traces all day) and prints
every run's wall time, then the median and the fastest, and the median peak resident
memory. With `--baseline TREE` (another checkout of printjob) it also runs that tree's
`printjob` entry point (its `pyproject.toml` names it, its `src` comes first on the path),
interleaved run by run with this tree's, and prints both.

The processes keep their compiled bytecode, as an installed package does (pip compiles it
at install), under a temporary `PYTHONPYCACHEPREFIX`, so neither tree is written to and
a `PYTHONDONTWRITEBYTECODE` in the environment (a development container's habit, which
would add every module's compilation, about 0.2 s, to every run) does not apply;
`--compile-each-run` measures that case instead. The image is drawn here (a flat
logo-like picture, 512 x 512, a few colours and anti-aliased edges) unless `--image` names
one. It prints CPU time (user + system) beside the wall time: on a machine shared with
other work the CPU time is the steadier figure. `--imports` also prints the 25 slowest
imports of one run (`python -X importtime`, cumulative), to see where the start-up goes.

The figure is noisy on a shared machine: compare before and after in one sitting.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
#: The issue's target for the whole process, in seconds.
TARGET_SECONDS = 0.35


def draw_test_image(path: Path, side: int = 512) -> None:
    """A flat logo at `side` px: a ring, a bar and a disc in four colours, anti-aliased."""
    scale = 4
    big = Image.new("RGB", (side * scale, side * scale), (250, 250, 248))
    draw = ImageDraw.Draw(big)
    s = side * scale
    draw.ellipse((s * 0.1, s * 0.1, s * 0.9, s * 0.9), outline=(30, 60, 150), width=s // 18)
    draw.rectangle((s * 0.25, s * 0.45, s * 0.75, s * 0.55), fill=(220, 60, 40))
    draw.ellipse((s * 0.4, s * 0.2, s * 0.6, s * 0.4), fill=(240, 180, 30))
    big.resize((side, side), Image.Resampling.LANCZOS).save(path)


def trace_command(image: Path, output: Path) -> list[str]:
    """The installed `printjob` script (as a user runs it), run by this interpreter."""
    script = Path(sys.executable).with_name("printjob")
    return [sys.executable, str(script), "trace", str(image), "-o", str(output)]


def tree_command(tree: Path, image: Path, output: Path) -> tuple[list[str], dict[str, str]]:
    """`printjob trace` through `tree`'s own entry point, with `tree/src` first on the path:
    the same interpreter and libraries, that tree's code."""
    text = (tree / "pyproject.toml").read_text()
    found = re.search(r'^printjob\s*=\s*"([\w.]+):(\w+)"', text, re.MULTILINE)
    if found is None:
        raise SystemExit(f"{tree}/pyproject.toml names no printjob entry point")
    module, function = found.groups()
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    return [sys.executable, "-c", code, "trace", str(image), "-o", str(output)], env


@attrs.frozen
class Run:
    """One whole process: wall and CPU (user + system) seconds, peak resident MB."""

    wall: float
    cpu: float
    peak_mb: float


def run_once(command: list[str], env: dict[str, str] | None = None) -> Run:
    """The CPU time is the steadier figure on a shared machine: waiting for a core does not
    count in it, while the wall time is what the user waits."""
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode()}")  # type: ignore[union-attr]
    child.stderr.close()  # type: ignore[union-attr]
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def with_bytecode(env: dict[str, str] | None, cache: Path) -> dict[str, str]:
    """`env` (default: this process's) with bytecode kept under `cache`."""
    out = dict(os.environ if env is None else env)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    out["PYTHONPYCACHEPREFIX"] = str(cache)
    return out


def time_runs(
    commands: list[tuple[list[str], dict[str, str] | None]], runs: int
) -> list[list[Run]]:
    """Each command `runs` times after a warm-up, interleaved (one of each in turn, the
    order alternating) so that a busier minute of the machine hits all alike."""
    for command, env in commands:
        run_once(command, env)  # warm-up (and the bytecode written, when kept)
    out: list[list[Run]] = [[] for _ in commands]
    for i in range(runs):
        turn = list(range(len(commands)))
        for k in turn if i % 2 == 0 else turn[::-1]:
            out[k].append(run_once(*commands[k]))
    return out


def summary(name: str, runs: list[Run]) -> str:
    wall = statistics.median(r.wall for r in runs)
    verdict = "meets" if wall < TARGET_SECONDS else "misses"
    return (
        f"{name}: median {wall:.3f} s wall, {statistics.median(r.cpu for r in runs):.3f} s CPU, "
        f"peak {statistics.median(r.peak_mb for r in runs):.0f} MB; fastest "
        f"{min(r.wall for r in runs):.3f} s over {len(runs)} runs "
        f"({verdict} the {TARGET_SECONDS} s target)"
    )


def slowest_imports(
    command: list[str], env: dict[str, str] | None, count: int = 25
) -> list[tuple[int, str]]:
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line.split("|"))
        rows.append((int(cumulative), name))
    return sorted(rows, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs (default 15)")
    parser.add_argument("--image", type=Path, help="image to trace (default: drawn, 512 px)")
    parser.add_argument("--imports", action="store_true", help="show the slowest imports")
    parser.add_argument("--baseline", type=Path, help="another printjob checkout to compare")
    parser.add_argument(
        "--compile-each-run",
        action="store_true",
        help="keep no bytecode: every run compiles printjob's modules afresh",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="printjob-startup-") as tmp:
        image = args.image or Path(tmp) / "logo-512.png"
        if args.image is None:
            draw_test_image(image)
        command = trace_command(image, Path(tmp) / "out.svg")
        commands: list[tuple[list[str], dict[str, str] | None]] = [(command, None)]
        if args.baseline is not None:
            commands.append(tree_command(args.baseline, image, Path(tmp) / "baseline.svg"))
        if not args.compile_each_run:
            cache = Path(tmp) / "pycache"
            commands = [(command, with_bytecode(env, cache)) for command, env in commands]
        results = time_runs(commands, args.runs)
        if args.imports:
            for cumulative, name in slowest_imports(*commands[0]):
                print(f"{cumulative / 1e6:8.3f} s  {name}")
    names = ["printjob trace, whole process", f"baseline {args.baseline}"]
    for name, runs in zip(names, results, strict=False):
        print(f"{name}")
        print("  wall:", " ".join(f"{r.wall:.3f}" for r in runs))
        print("  cpu: ", " ".join(f"{r.cpu:.3f}" for r in runs))
    for name, runs in zip(names, results, strict=False):
        print(summary(name, runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
