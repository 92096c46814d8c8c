"""Every bundled photo against vtracer's default, in one table: mean CIEDE2000 at 1x.

scikit-image's sample photographs (JPEG, quality 90 unless named; any side over 512 px
reduced to 512 with Lanczos) and `mpl-grace-hopper` from the public hard set, each traced by
printjob (automatic colours) and by vtracer's default in the same run; both SVGs rendered
with resvg at the input's size and compared with the input pixel by pixel.

    .venv/bin/python bench/photo_table.py [--hard ../shared/corpus-hard] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

import engine_bench
import metrics

#: (name, scikit-image function, JPEG quality); greyscale photos included.
PHOTOS = (
    ("astronaut", "astronaut", 90),
    ("coffee", "coffee", 85),
    ("chelsea", "chelsea", 90),
    ("cat", "cat", 90),
    ("rocket", "rocket", 85),
    ("immunohistochemistry", "immunohistochemistry", 90),
    ("hubble_deep_field", "hubble_deep_field", 90),
    ("retina", "retina", 90),
    ("stereo_motorcycle", "stereo_motorcycle", 90),
    ("camera", "camera", 90),
    ("coins", "coins", 90),
    ("moon", "moon", 90),
)
#: Longest side a photo is traced at.
SIDE = 512


def skimage_jpeg(function: str, quality: int) -> bytes:
    """A scikit-image sample as a JPEG of at most `SIDE` px."""
    from skimage import data

    array = getattr(data, function)()
    if isinstance(array, tuple):
        array = array[0]  # the stereo pair's left view
    image = Image.fromarray(array).convert("RGB")
    if max(image.size) > SIDE:
        scale = SIDE / max(image.size)
        size = (round(image.width * scale), round(image.height * scale))
        image = image.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def photos(hard: Path | None) -> Iterator[tuple[str, bytes]]:
    if hard is not None and (hard / "mpl-grace-hopper.jpg").exists():
        yield "mpl-grace-hopper", (hard / "mpl-grace-hopper.jpg").read_bytes()
    for name, function, quality in PHOTOS:
        yield name, skimage_jpeg(function, quality)


def delta_e(data: bytes, svg: str) -> float:
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    height, width = rgb.shape[:2]
    out = metrics.over_white(engine_bench.render(svg, width, height))
    return float(metrics.delta_e_map(metrics.to_lab(rgb), metrics.to_lab(out)).mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hard", type=Path, default=Path("../shared/corpus-hard"))
    parser.add_argument("--only", nargs="*", help="photo names to run (default: all)")
    args = parser.parse_args()
    convert, why = engine_bench.engine_convert()
    if convert is None:
        print(why, file=sys.stderr)
        return 1
    print("| Photo | printjob ΔE | vtracer ΔE | colours | segments (vtracer) | CPU s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    losses = 0
    for name, data in photos(args.hard):
        if args.only and name not in args.only:
            continue
        start = time.process_time()
        ours = engine_bench.printjob_svg(convert, data)
        cpu = time.process_time() - start
        theirs = engine_bench.vtracer_svg(data, "jpg")
        de_ours, de_theirs = delta_e(data, ours.svg), delta_e(data, theirs.svg)
        losses += de_ours > de_theirs
        mark = "**" if de_ours <= de_theirs else ""
        print(
            f"| {name} | {mark}{de_ours:.2f}{mark} | {de_theirs:.2f} "
            f"| {ours.extra['reported_colors']} | {metrics.svg_segments(ours.svg):,} "
            f"({metrics.svg_segments(theirs.svg):,}) | {cpu:.2f} |",
            flush=True,
        )
    print(f"\nphotos where vtracer's default is closer: {losses}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
