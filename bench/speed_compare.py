"""Tracing time of two or more trees of the engine beside vtracer's default, interleaved.

    .venv/bin/python bench/speed_compare.py --trees /path/to/tree-a /path/to/tree-b

Issue #12's speed target compares the median corpus tracing time with vtracer's default.
Between two sittings on a shared machine the same code moves by several per cent, so a
change is judged only against its base measured in the same sitting. Each round starts one
fresh process per tree (the tree's `src` first on `sys.path`) and one for vtracer, in an
order that alternates from round to round; each process traces every corpus image
`--repeat` times and keeps the best process-CPU time per image. The report gives, per
method, the median over images of the best over rounds, and each tree's ratio to vtracer.

The conversion is the benchmark's own (`bench/engine_bench.py`): `tracing.convert` with
SVG output and automatic colours, and vtracer's `convert_raw_image_to_svg` on the file.

Each image is converted once untimed before its timed runs. With `--warm-all` every image
is converted once before any is timed: glibc's malloc raises its mmap threshold (and with
it the heap's trim threshold) to the largest block a process has freed, so in a fresh
process the images timed before the corpus photo (the median logos) grow and trim the heap
on every conversion (about 1,500 page faults each), while a worker that has served one
larger image keeps its heap and pays none. `--warm-all` times every image in that warm
state, whatever the manifest's order. With `--worker-heap` every timing process (vtracer's
too) first sets the malloc thresholds the service's workers set at start
(`printjob_adapters.allocator.keep_heap_warm`: glibc's own steady state after one large
image, set from the first job on).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The shared corpus beside the repository, or beside the folder of worktrees it is one of
#: (`/work/wt/NAME` finds `/work/shared/corpus` as `/work/main` does).
CORPUS = Path(
    os.environ.get(
        "PRINTJOB_CORPUS",
        next(
            (
                folder / "shared" / "corpus"
                for folder in (ROOT.parent, ROOT.parent.parent)
                if (folder / "shared" / "corpus").is_dir()
            ),
            ROOT.parent / "shared" / "corpus",
        ),
    )
)

#: One timing process: reads the image list from argv, prints {id: best seconds}.
WORKER = r"""
import json, sys, time
from pathlib import Path
method, repeat, items = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
flags = sys.argv[4].split(",")
warm_all = "all" in flags
if "heap" in flags:
    # The workers' setting (printjob_adapters.allocator), applied alike to every method.
    import ctypes
    mallopt = ctypes.CDLL(None).mallopt
    assert mallopt(-3, 32 << 20) == 1 and mallopt(-1, 64 << 20) == 1
if method == "vtracer":
    import vtracer
    def run(data, fmt):
        vtracer.convert_raw_image_to_svg(data, img_format=fmt)
else:
    from printjob_adapters.tracing import convert
    from printjob_core.model import JobOptions, OutputFormat
    options = JobOptions(format=OutputFormat.SVG)
    def run(data, fmt):
        convert(data, options)
best = {}
if warm_all:
    for item_id, path in items:
        run(Path(path).read_bytes(), path.rsplit(".", 1)[-1].lower().replace("jpeg", "jpg"))
for item_id, path in items:
    data = Path(path).read_bytes()
    fmt = path.rsplit(".", 1)[-1].lower().replace("jpeg", "jpg")
    run(data, fmt)  # warm: imports, caches, the heap
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run(data, fmt)
        times.append(time.process_time() - start)
    best[item_id] = min(times)
print(json.dumps(best))
"""


def corpus_items(corpus: Path, only: set[str]) -> list[tuple[str, str]]:
    manifest = json.loads((corpus / "manifest.json").read_text())
    entries = manifest["items"] if isinstance(manifest, dict) else manifest
    items = [(entry["id"], str(corpus / entry["file"])) for entry in entries]
    return [item for item in items if not only or item[0] in only]


def time_method(
    method: str,
    tree: Path | None,
    repeat: int,
    items: list[tuple[str, str]],
    warm_all: bool = False,
    worker_heap: bool = False,
) -> dict[str, float]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WORKER,
            method,
            str(repeat),
            json.dumps(items),
            ",".join(["all" if warm_all else "each"] + (["heap"] if worker_heap else [])),
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", nargs="+", type=Path, required=True, help="repository roots")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", default="", help="comma-separated corpus ids")
    parser.add_argument("--repeat", type=int, default=5, help="timed traces per image and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write every round's figures here")
    parser.add_argument(
        "--warm-all",
        action="store_true",
        help="convert every image once before timing any (a warm worker's heap)",
    )
    parser.add_argument(
        "--worker-heap",
        action="store_true",
        help="set the workers' malloc thresholds in every timing process, vtracer's too",
    )
    args = parser.parse_args()

    items = corpus_items(args.corpus, {part for part in args.only.split(",") if part})
    methods: list[tuple[str, Path | None]] = [(str(tree), tree) for tree in args.trees]
    methods.append(("vtracer", None))
    best: dict[str, dict[str, float]] = {name: {} for name, _ in methods}
    rounds = []
    for number in range(args.rounds):
        order = methods if number % 2 == 0 else list(reversed(methods))
        figures = {}
        for name, tree in order:
            kind = "vtracer" if tree is None else "printjob"
            figures[name] = time_method(
                kind, tree, args.repeat, items, args.warm_all, args.worker_heap
            )
            for item_id, seconds in figures[name].items():
                best[name][item_id] = min(seconds, best[name].get(item_id, seconds))
        rounds.append(figures)
        medians = {name: statistics.median(times.values()) for name, times in figures.items()}
        print(
            f"round {number + 1}: "
            + ", ".join(f"{n} {1000 * m:.1f} ms" for n, m in medians.items())
        )

    vtracer_median = statistics.median(best["vtracer"].values())
    print(f"\nbest over {args.rounds} rounds, median over {len(items)} images:")
    for name, times in best.items():
        median = statistics.median(times.values())
        print(f"  {name:40} {1000 * median:6.1f} ms  {median / vtracer_median:.3f}x vtracer")
    if len(args.trees) == 2:
        first, second = (str(tree) for tree in args.trees)
        ratios = sorted(best[second][i] / best[first][i] for i in best[first])
        print(
            f"  per image, second / first: median {statistics.median(ratios):.3f} "
            f"(range {ratios[0]:.3f}–{ratios[-1]:.3f})"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"rounds": rounds, "best": best}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
