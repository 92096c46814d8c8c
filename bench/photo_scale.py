"""Ordinary photos at print size (~3 MP): CPU seconds, peak memory, colours and segments.

Each of scikit-image's colour sample photos (and Grace Hopper) is upscaled with Lanczos to
the largest size of its aspect within 3 MP, given Gaussian sensor noise (sigma 2, fixed
seed) and saved as JPEG quality 90, as the benchmark's one 3 MP photo is
(`engine_bench.photo_input`). Every photo is traced in a fresh process (automatic colours,
SVG), so each peak is that trace's own; the CPU time is `time.process_time` of the trace
alone, decoding included, imports not: the engine's modules and the SciPy parts its
stages import on first use are loaded before the clock starts, as a worker has them
loaded after its first job. The SVG is rendered with resvg and compared with the
input (mean CIEDE2000 at 1x). A refusal is reported as such.

vtracer's default (`engine_bench.vtracer_svg`, in process) traces the same 3 MP file in a
fresh process of its own and is measured alike (its CPU seconds, peak, segments and ΔE
at 1x), so issue #12's "no worse than vtracer's default on every photo" is checked at print
size as well as at 512 px (`photo_table.py`); `--no-vtracer` leaves it out.

    .venv/bin/python bench/photo_scale.py [--only NAME ...] [--hard DIR] [--out DIR]
        [--no-vtracer]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

#: (name, scikit-image function, or a file of the public hard set); the stereo pair's
#: left view.
PHOTOS = (
    ("astronaut", "astronaut"),
    ("coffee", "coffee"),
    ("chelsea", "chelsea"),
    ("rocket", "rocket"),
    ("tissue", "immunohistochemistry"),
    ("grace", "mpl-grace-hopper.jpg"),
    ("hubble", "hubble_deep_field"),
    ("motorcycle", "stereo_motorcycle"),
    ("retina", "retina"),
)
PIXELS = 3_000_000
NOISE = 2.0
SEED = 1
QUALITY = 90

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {bench!r})
from pathlib import Path
data = Path({path!r}).read_bytes()
from printjob_adapters.engine import TraceOptions, trace
from printjob_adapters.engine.bounds import TooMuchDetail
import importlib, pkgutil
import scipy.ndimage, scipy.spatial
import printjob_adapters.engine as engine
for module in pkgutil.walk_packages(engine.__path__, "printjob_adapters.engine."):
    importlib.import_module(module.name)
start = time.process_time()
try:
    result = trace(data, TraceOptions())
except TooMuchDetail as refusal:
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({{"seconds": seconds, "peak_mb": peak, "refused": str(refusal)}}))
    raise SystemExit
seconds = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import engine_bench, metrics
from PIL import Image
import io
svg = result.data.decode()
rgb = __import__("numpy").asarray(Image.open(io.BytesIO(data)).convert("RGBA"))
h, w = rgb.shape[:2]
out = engine_bench.render(svg, w, h)
lab_out = metrics.to_lab(metrics.over_white(out))
de = metrics.masked_mean(metrics.delta_e_map(lab_out, metrics.to_lab(metrics.over_white(rgb))))
print(json.dumps({{"seconds": seconds, "peak_mb": peak, "colours": result.colors,
                  "segments": metrics.svg_segments(svg), "de_1x": de}}))
"""


_VTRACER_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {bench!r})
from pathlib import Path
data = Path({path!r}).read_bytes()
import engine_bench, metrics
start = time.process_time()
svg = engine_bench.vtracer_svg(data, "jpg").svg
seconds = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import numpy, io
from PIL import Image
rgb = numpy.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))
h, w = rgb.shape[:2]
out = engine_bench.render(svg, w, h)
lab_out = metrics.to_lab(metrics.over_white(out))
de = metrics.masked_mean(metrics.delta_e_map(lab_out, metrics.to_lab(metrics.over_white(rgb))))
print(json.dumps({{"seconds": seconds, "peak_mb": peak, "segments": metrics.svg_segments(svg),
                  "de_1x": de}}))
"""


def run_child(code: str) -> dict[str, object] | str:
    """The child's JSON row, or why it failed (the tail of its standard error)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return f"failed: {done.stderr.strip()[-200:]}"
    row: dict[str, object] = json.loads(lines[-1])
    return row


def photo(function: str, hard: Path) -> bytes:
    """The sample photo at ~3 MP, noisy, as JPEG (deterministic)."""
    if function.endswith(".jpg"):
        with Image.open(hard / function) as opened:
            image = opened.convert("RGB")
    else:
        from skimage import data

        array = getattr(data, function)()
        if isinstance(array, tuple):
            array = array[0]
        image = Image.fromarray(array).convert("RGB")
    aspect = image.width / image.height
    width = int((PIXELS * aspect) ** 0.5)
    height = int(width / aspect)
    big = np.asarray(image.resize((width, height), Image.Resampling.LANCZOS), dtype=np.float64)
    big += np.random.default_rng(SEED).normal(0.0, NOISE, big.shape)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(np.rint(big), 0, 255).astype(np.uint8)).save(
        buffer, "JPEG", quality=QUALITY
    )
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--hard", type=Path, default=Path("/work/shared/corpus-hard"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "photo-scale")
    parser.add_argument("--no-vtracer", action="store_true", help="printjob's trace only")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    bench = str(Path(__file__).resolve().parent)
    print(
        "| Photo | Size | CPU s | Peak MB | Colours | Segments | ΔE2000 1x "
        "| vtracer CPU s | vtracer MB | vtracer segments | vtracer ΔE 1x |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worse: list[str] = []
    for name, function in PHOTOS:
        if args.only and name not in args.only:
            continue
        path = args.out / f"{name}.jpg"
        if not path.exists():
            path.write_bytes(photo(function, args.hard))
        with Image.open(path) as image:
            size = f"{image.width}x{image.height}"
        row = run_child(_CHILD.format(bench=bench, path=str(path)))
        theirs = (
            None
            if args.no_vtracer
            else run_child(_VTRACER_CHILD.format(bench=bench, path=str(path)))
        )
        cells = _vtracer_cells(theirs)
        if isinstance(row, str):
            print(f"| {name} | {size} | {row} | | | | | {cells} |", flush=True)
            continue
        if "refused" in row:
            print(
                f"| {name} | {size} | {row['seconds']:.2f} | {row['peak_mb']:.0f} | "
                f"refused: {str(row['refused'])[:80]} | | | {cells} |",
                flush=True,
            )
            continue
        print(
            f"| {name} | {size} | {row['seconds']:.2f} | {row['peak_mb']:.0f} | "
            f"{row['colours']} | {row['segments']:,} | {row['de_1x']:.2f} | {cells} |",
            flush=True,
        )
        if isinstance(theirs, dict) and float(theirs["de_1x"]) < float(row["de_1x"]):  # type: ignore[arg-type]
            worse.append(name)
    if not args.no_vtracer:
        print(f"\nphotos where vtracer's default is closer at 3 MP: {worse}")


def _vtracer_cells(theirs: dict[str, object] | str | None) -> str:
    """vtracer's four cells of the row: CPU s, peak MB, segments, ΔE 1x (blank when not run)."""
    if theirs is None:
        return " | | |"
    if isinstance(theirs, str):
        return f"{theirs} | | |"
    return (
        f"{theirs['seconds']:.2f} | {theirs['peak_mb']:.0f} | {theirs['segments']:,} | "
        f"{theirs['de_1x']:.2f}"
    )


if __name__ == "__main__":
    main()
