"""What background=remove costs and removes, per image of the shared corpora.

For every image of `../shared/corpus/` and `../shared/corpus-hard/` (or `--corpus` manifests),
traces to SVG with background keep and remove, interleaved, `--repeat` times each, and
prints per image: whether a background was removed, the share of pixels left out, the file's
colours, and the median tracing CPU seconds with keep and with remove. The figures go into
docs/engine.md ("Background removal") by hand, with the load average printed here.

    .venv/bin/python bench/background_removal.py [--repeat 3] [--corpus MANIFEST ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from printjob_adapters.engine import Background, TraceOptions, trace
from printjob_adapters.engine.decode import decode
from printjob_adapters.engine.options import DEFAULT_LIMITS
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.segmentation import segment

ROOT = Path(__file__).resolve().parents[1]
# The shared corpora sit beside the main checkout; a worktree under wt/ is one level deeper.
SHARED = next(
    (up / "shared" for up in ROOT.parents if (up / "shared" / "corpus").is_dir()),
    ROOT.parent / "shared",
)
CORPORA = (SHARED / "corpus", SHARED / "corpus-hard")


def left_out_share(data: bytes) -> float:
    """Share of the image's pixels the segmentation leaves out with background=remove."""
    rgba = decode(data, DEFAULT_LIMITS)
    seg = segment(rgba, None, Background.REMOVE, Checkpoint())
    return float(np.mean(seg.labels < 0))


def timed(data: bytes, background: str) -> tuple[float, bool, int]:
    # CPU seconds: on a shared machine wall time measures the neighbours as much as us.
    start = time.process_time()
    result = trace(data, TraceOptions(format="svg", background=background))
    return time.process_time() - start, result.background_removed, result.colors


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, action="append")
    args = parser.parse_args(argv)
    manifests = args.corpus or [corpus / "manifest.json" for corpus in CORPORA]
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    head = ("image", "removed", "left out", "colours", "keep s", "remove s")
    print("{:32} {:>7} {:>8} {:>8} {:>7} {:>8}".format(*head))
    extra = []
    for manifest in manifests:
        items = json.loads(manifest.read_text())["items"]
        for item in items:
            data = (manifest.parent / item["file"]).read_bytes()
            timed(data, "remove")  # first-use imports and caches are not counted
            keep, remove = [], []
            for _ in range(args.repeat):
                keep.append(timed(data, "keep")[0])
                seconds, removed, colours = timed(data, "remove")
                remove.append(seconds)
            k, r = statistics.median(keep), statistics.median(remove)
            extra.append(r - k)
            print(
                f"{item['id']:32} {removed!s:>7} {left_out_share(data):8.3f} {colours:8d}"
                f" {k:7.3f} {r:8.3f}"
            )
    print(f"median extra CPU seconds for remove: {statistics.median(extra):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
