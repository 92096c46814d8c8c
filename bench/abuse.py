"""The worst cases (issue 15): images made to make the engine work hard, and the API's
memory and read latency under slow clients.

Run from the repository root:

    .venv/bin/python bench/abuse.py [--only engine|api] [--images combs,noise]
        [--colors auto,1000] [--formats svg,pdf,eps,png] [--size 1732] [--json PATH]

The engine part generates every image at about 3 MP (`--size` square; the engine
accepts at most 3,000,000 pixels) and converts it with each colour setting into each
format, every case in a fresh Python process (`--case`), so that its peak resident
memory (`ru_maxrss`, imports included) is its own. Each case prints its seconds, its
peak memory, the longest time between two cancel checks of the engine, and its outcome:
the file's size, or the detail of the engine's refusal (what the job service reports as
`processing_failed`). Every case must finish or be refused in under 30 s and 1 GB.

The images:

- `combs`: two interlocking 1-px combs (two regions whose shared border is the image);
- `checker`: a 1-px black and white checkerboard;
- `stripes`: 1-px red and white horizontal stripes;
- `waves`: bands whose borders are 1-px square waves (a corner every three pixels:
  the case that made corner thinning quadratic);
- `blocks`: 2 x 2 blocks of 1000 random colours;
- `noise`: uniform random RGB noise;
- `radial`: a smooth radial gradient, cream to wine (shaded art: `engine/shading.py`);
- `twoaxis`: a smooth gradient along both axes, blue to yellow across, dark to light down;
- `radialjpeg`: `radial` saved as JPEG at quality 80 (its noise widens the band
  labelling's linear test: `shading.NOISY_LINEAR`).

The API part is `bench/abuse_api.py`'s `run(args)`, when that file exists.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 30.0
BUDGET_MB = 1024.0
#: A case still running after this long is stopped and reported as over budget.
CASE_TIMEOUT = 180.0

Pixels = npt.NDArray[np.uint8]


def combs(size: int) -> Pixels:
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[: size - 1, 0::2] = (20, 20, 200)
    pixels[0, :] = (20, 20, 200)
    return pixels


def checker(size: int) -> Pixels:
    y, x = np.mgrid[:size, :size]
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[(x + y) % 2 == 1] = (0, 0, 0)
    return pixels


def stripes(size: int) -> Pixels:
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[0::2] = (200, 30, 30)
    return pixels


def waves(size: int) -> Pixels:
    y, x = np.mgrid[:size, :size]
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[((y + (x // 3) % 2) // 4) % 2 == 1] = (20, 20, 200)
    return pixels


def blocks(size: int) -> Pixels:
    rng = np.random.default_rng(1)
    palette = rng.integers(0, 256, (1000, 3), dtype=np.uint8)
    half = (size + 1) // 2
    cells = palette[rng.integers(0, 1000, (half, half))]
    out: Pixels = np.repeat(np.repeat(cells, 2, axis=0), 2, axis=1)[:size, :size]
    return out


def noise(size: int) -> Pixels:
    out: Pixels = np.random.default_rng(2).integers(0, 256, (size, size, 3), dtype=np.uint8)
    return out


def radial(size: int) -> Pixels:
    y, x = np.mgrid[:size, :size].astype(np.float32)
    t = np.clip(np.hypot(x - size / 2, y - size / 2) / (size / 2), 0.0, 1.0)[..., None]
    inner, outer = np.array([255.0, 240.0, 200.0]), np.array([150.0, 30.0, 60.0])
    out: Pixels = np.round(inner + (outer - inner) * t).astype(np.uint8)
    return out


def twoaxis(size: int) -> Pixels:
    y, x = np.mgrid[:size, :size].astype(np.float32) / max(size - 1, 1)
    left, right = np.array([30.0, 80.0, 200.0]), np.array([240.0, 200.0, 60.0])
    across = left + (right - left) * x[..., None]
    out: Pixels = np.round(across * (0.35 + 0.65 * y[..., None])).astype(np.uint8)
    return out


def radialjpeg(size: int) -> Pixels:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(radial(size)).save(buffer, "JPEG", quality=80)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        out: Pixels = np.asarray(decoded.convert("RGB")).copy()
    return out


IMAGES: dict[str, Callable[[int], Pixels]] = {
    "combs": combs,
    "checker": checker,
    "stripes": stripes,
    "waves": waves,
    "blocks": blocks,
    "noise": noise,
    "radial": radial,
    "twoaxis": twoaxis,
    "radialjpeg": radialjpeg,
}
COLORS = ("auto", "1000")
FORMATS = ("svg", "pdf", "eps", "png")


def png_bytes(pixels: Pixels) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def run_case(image: str, colors: str, fmt: str, size: int) -> dict[str, Any]:
    """One conversion in this process: seconds, peak memory, longest gap between two
    cancel checks, and the outcome."""
    from printjob_adapters.engine import EngineError, TraceOptions, trace

    data = png_bytes(IMAGES[image](size))
    options = TraceOptions(format=fmt, colors=None if colors == "auto" else int(colors))
    last = [0.0]
    longest = [0.0]

    def cancelled() -> bool:
        now = time.perf_counter()
        longest[0] = max(longest[0], now - last[0])
        last[0] = now
        return False

    started = last[0] = time.perf_counter()
    try:
        result = trace(data, options, cancelled=cancelled)
        outcome = f"{len(result.data)} bytes, {result.colors} colours"
        refused = False
    except EngineError as exc:
        outcome = exc.detail
        refused = True
    seconds = time.perf_counter() - started
    longest[0] = max(longest[0], time.perf_counter() - last[0])
    return {
        "image": image,
        "colors": colors,
        "format": fmt,
        "size": size,
        "seconds": round(seconds, 2),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "longest_gap": round(longest[0], 2),
        "refused": refused,
        "outcome": outcome,
    }


def in_fresh_process(image: str, colors: str, fmt: str, size: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--case", f"{image}:{colors}:{fmt}:{size}"]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=CASE_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return {
            "image": image,
            "colors": colors,
            "format": fmt,
            "size": size,
            "seconds": CASE_TIMEOUT,
            "peak_mb": float("nan"),
            "longest_gap": float("nan"),
            "refused": False,
            "outcome": f"still running after {CASE_TIMEOUT:.0f} s",
        }
    if done.returncode != 0:
        raise RuntimeError(f"case {image}:{colors}:{fmt} crashed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def within_budget(case: dict[str, Any]) -> bool:
    return bool(case["seconds"] < BUDGET_SECONDS and case["peak_mb"] < BUDGET_MB)


def run_engine(args: argparse.Namespace) -> list[dict[str, Any]]:
    cases = []
    print("image    colours format  seconds  peak MB  longest gap  outcome", flush=True)
    for image in args.images.split(","):
        for colors in args.colors.split(","):
            for fmt in args.formats.split(","):
                case = in_fresh_process(image, colors, fmt, args.size)
                case["within_budget"] = within_budget(case)
                cases.append(case)
                mark = "ok  " if case["within_budget"] else "OVER"
                print(
                    f"{image:8} {colors:7} {fmt:6} {case['seconds']:8.2f} "
                    f"{case['peak_mb']:8.0f} {case['longest_gap']:11.2f}  {mark} "
                    f"{'refused: ' if case['refused'] else ''}{case['outcome']}",
                    flush=True,
                )
    over = [c for c in cases if not c["within_budget"]]
    print(
        f"{len(cases) - len(over)} of {len(cases)} cases within {BUDGET_SECONDS:.0f} s "
        f"and {BUDGET_MB:.0f} MB",
        flush=True,
    )
    return cases


def run_api(args: argparse.Namespace) -> Any:
    path = ROOT / "bench" / "abuse_api.py"
    if not path.exists():
        print("bench/abuse_api.py not present: no API part", flush=True)
        return None
    spec = importlib.util.spec_from_file_location("abuse_api", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("engine", "api"))
    parser.add_argument("--images", default=",".join(IMAGES))
    parser.add_argument("--colors", default=",".join(COLORS))
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--size", type=int, default=1732)
    parser.add_argument("--json", type=Path, help="write the engine's cases here")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args(argv)
    if args.case:
        image, colors, fmt, size = args.case.split(":")
        print(json.dumps(run_case(image, colors, fmt, int(size))))
        return 0
    failed = False
    if args.only in (None, "engine"):
        cases = run_engine(args)
        failed = not all(c["within_budget"] for c in cases)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(cases, indent=1))
    if args.only in (None, "api"):
        run_api(args)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
