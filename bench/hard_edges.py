"""Hard-edged (aliased) art: how smooth its traced outlines come out, beside vtracer.

    .venv/bin/python bench/hard_edges.py [--repeat 7] [--only circle-300,...] [--save DIR]

GIF logos, MS-Paint drawings, nearest-neighbour resizes and screenshots have no
anti-aliasing: every pixel is one colour or the other, and a curve's outline is a
staircase. Each image here is drawn once at `SUPER` times its size with Pillow, and from
that one drawing come both the input and its truth:

- the input, hard-edged at 1x: the drawing sampled at each pixel's centre (what an
  aliased renderer does);
- the truth at 4x: the drawing box-reduced to 4x (its true shape, anti-aliased).

Rows: path segments, ΔE2000 at 4x of the render against the truth (mean over all pixels,
and over the pixels within one input pixel of an outline: `near`), CPU time of the trace
(`time.process_time`, best of `--repeat`), for printjob and vtracer's defaults. One more
row is the 300-px red circle drawn by `ImageDraw.ellipse` straight at 1x (Pillow's own
aliased ellipse; its truth is the same ellipse drawn at 8x).

To compare two versions of the engine, run this script with each on `PYTHONPATH`
(`PYTHONPATH=/path/to/other/src`); the images are the same bytes every time.

`--phases N` traces every drawn image N times more, its drawing moved by a few eighths
of a pixel each time (`phase_shift`), and prints each image's mean segments and `near`
over those phases. One image's `near` depends on where its outlines happen to fall
between the pixel centres (the rounded rectangle's top side lies 0.38 px off its cracks,
its upright sides 0.2 px the other way), and on the fitting's choices, which small
changes of the data points flip: a change that is the same to 1e-12 px moved the
rounded rectangle's `near` by 0.16 and the rotated square's by 0.15. A mean over phases
says more about a change to the smoothing than one phase's figure.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import metrics  # noqa: E402

#: Drawing scale: the input samples it at pixel centres, the truth box-reduces it.
SUPER = 8
#: Scale of the rendered comparison.
SCALE = 4
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
WHITE = (255, 255, 255)
RED = (220, 30, 40)
BLUE = (30, 70, 200)
YELLOW = (250, 200, 20)
BLACK = (20, 20, 20)
Draw = Callable[[ImageDraw.ImageDraw, float], None]


@dataclass
class Art:
    """One image of the set: its name, the hard-edged input and the 4x truth (RGB)."""

    name: str
    hard: np.ndarray
    truth4x: np.ndarray


def phase_shift(phase: int) -> tuple[int, int]:
    """How far (rows, columns of the `SUPER`x drawing) phase `phase` moves it: eighths of
    a pixel, different down and across, so the outlines fall elsewhere between the
    pixel centres. Phase 0 does not move it."""
    return phase * 5 % SUPER, phase * 3 % SUPER


def drawn(name: str, size: tuple[int, int], draw: Draw, phase: int = 0) -> Art:
    """`draw(canvas, s)` at `SUPER`x, moved by `phase_shift(phase)`, sampled at pixel
    centres (input) and box-reduced to 4x (truth). Coordinates given to `draw` are 1x
    pixels times `s`."""
    w, h = size
    big = Image.new("RGB", (w * SUPER, h * SUPER), WHITE)
    draw(ImageDraw.Draw(big), float(SUPER))
    # Every drawing leaves a margin of white wider than a pixel, so the roll wraps none.
    pixels = np.roll(np.asarray(big), phase_shift(phase), axis=(0, 1))
    # The sub-pixel just past the centre of every 1x pixel (a sixteenth of a pixel off).
    hard = np.ascontiguousarray(pixels[SUPER // 2 :: SUPER, SUPER // 2 :: SUPER])
    step = SUPER // SCALE
    truth = pixels.reshape(h * SCALE, step, w * SCALE, step, 3).mean(axis=(1, 3))
    return Art(name, hard, np.clip(np.rint(truth), 0, 255).astype(np.uint8))


def _box(cx: float, cy: float, rx: float, ry: float, s: float) -> list[float]:
    return [(cx - rx) * s, (cy - ry) * s, (cx + rx) * s, (cy + ry) * s]


def circle(radius: float) -> Draw:
    def draw(d: ImageDraw.ImageDraw, s: float) -> None:
        d.ellipse(_box(128, 128, radius, radius, s), fill=RED)

    return draw


def ellipse(rx: float, ry: float) -> Draw:
    def draw(d: ImageDraw.ImageDraw, s: float) -> None:
        d.ellipse(_box(128.3, 127.6, rx, ry, s), fill=BLUE)

    return draw


def _polygon(points: np.ndarray, s: float) -> list[tuple[float, float]]:
    return [(float(x) * s, float(y) * s) for x, y in points]


def rotated_square(d: ImageDraw.ImageDraw, s: float) -> None:
    a = np.deg2rad(20) + np.arange(4) * np.pi / 2
    d.polygon(_polygon(np.stack([128 + 80 * np.cos(a), 128 + 80 * np.sin(a)], 1), s), fill=BLUE)


def rounded_rectangle(d: ImageDraw.ImageDraw, s: float) -> None:
    d.rounded_rectangle(
        [40.3 * s, 70.6 * s, 215.7 * s, 185.2 * s], radius=int(30 * s), fill=(40, 140, 60)
    )


def ring(d: ImageDraw.ImageDraw, s: float) -> None:
    d.ellipse(_box(128, 128, 90, 90, s), fill=BLACK)
    d.ellipse(_box(128, 128, 62, 62, s), fill=WHITE)


def _star(cx: float, cy: float, outer: float, inner: float) -> np.ndarray:
    a = -np.pi / 2 + np.arange(10) * np.pi / 5
    r = np.where(np.arange(10) % 2 == 0, outer, inner)
    return np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], 1)


def star(d: ImageDraw.ImageDraw, s: float) -> None:
    d.polygon(_polygon(_star(128, 135, 105, 42), s), fill=YELLOW)


def logo(d: ImageDraw.ImageDraw, s: float) -> None:
    """Three colours touching: a blue rounded square, a red disc over its corner, a
    yellow star on the disc."""
    d.rounded_rectangle([30 * s, 60 * s, 170 * s, 200 * s], radius=int(24 * s), fill=BLUE)
    d.ellipse(_box(165, 105, 65, 65, s), fill=RED)
    d.polygon(_polygon(_star(165, 108, 45, 19), s), fill=YELLOW)


def word(d: ImageDraw.ImageDraw, s: float) -> None:
    """A 14-px word, drawn as a screen without font smoothing would."""
    font = ImageFont.truetype(str(FONT), int(14 * s))
    d.fontmode = "1"  # no anti-aliasing in the drawing either: the input stays two-colour
    d.text((8 * s, 8 * s), "Pizza Bar", font=font, fill=BLACK)


def _line_1px(start: tuple[float, float], end: tuple[float, float]) -> np.ndarray:
    """The corners of a line one pixel wide from `start` to `end` (1x pixels), drawn as
    a polygon: Pillow's `line(width=8)` at 8x is 7 sub-pixel rows thick in over a
    quarter of its columns (0.93 px across), so sampled at pixel centres a shallow line
    loses whole columns at some placements (14 of 136 at phases 1 and 4) and the input
    is dashes, not the aliased line it should be."""
    (x0, y0), (x1, y1) = start, end
    length = float(np.hypot(x1 - x0, y1 - y0))
    nx, ny = -(y1 - y0) / length / 2, (x1 - x0) / length / 2
    return np.array(
        [(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)]
    )


def hairline(d: ImageDraw.ImageDraw, s: float) -> None:
    """A one-pixel line at a shallow angle and a one-pixel circle outline."""
    d.polygon(_polygon(_line_1px((10, 20), (150, 60)), s), fill=BLACK)
    d.ellipse(_box(80, 110, 40, 40, s), outline=BLACK, width=int(s))


def pil_circle() -> Art:
    """The circle of the issue: `ImageDraw.ellipse((100, 100, 400, 400))` on 512 px, at
    1x (Pillow's aliased ellipse); the truth is the same ellipse drawn at 8x."""
    hard = Image.new("RGB", (512, 512), WHITE)
    ImageDraw.Draw(hard).ellipse((100, 100, 400, 400), fill="red")
    truth = drawn(
        "circle-pil-300",
        (512, 512),
        lambda d, s: d.ellipse(_box(250.5, 250.5, 150.5, 150.5, s), fill="red"),
    )
    return Art("circle-pil-300", np.asarray(hard), truth.truth4x)


def build(phase: int = 0) -> list[Art]:
    """The set, drawn at `phase` (the issue's circle, drawn by Pillow at 1x, only at
    phase 0)."""
    square = (256, 256)
    return [pil_circle()] * (phase == 0) + [
        drawn("circle-100", square, circle(100), phase),
        drawn("circle-40", square, circle(40.4), phase),
        drawn("circle-12", square, circle(12.3), phase),
        drawn("circle-5", square, circle(5.2), phase),
        drawn("ellipse", square, ellipse(110, 45), phase),
        drawn("rotated-square", square, rotated_square, phase),
        drawn("rounded-rect", square, rounded_rectangle, phase),
        drawn("ring", square, ring, phase),
        drawn("star", square, star, phase),
        drawn("logo", square, logo, phase),
        drawn("word-14px", (96, 32), word, phase),
        drawn("hairline", (160, 160), hairline, phase),
    ]


def png(rgb: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, "PNG")
    return out.getvalue()


def printjob(data: bytes) -> str:
    from printjob_adapters.engine.options import TraceOptions
    from printjob_adapters.engine.pipeline import trace

    return trace(data, TraceOptions()).data.decode("utf-8")


def vtracer_default(data: bytes) -> str:
    import vtracer

    svg: str = vtracer.convert_raw_image_to_svg(data, img_format="png")
    return svg


def render4x(svg: str, width: int, height: int) -> np.ndarray:
    from bench.engine_bench import render, with_white_background

    return metrics.over_white(render(with_white_background(svg), width * SCALE, height * SCALE))


def best_cpu(run: Callable[[], str], repeat: int) -> tuple[str, float]:
    best = float("inf")
    out = ""
    for _ in range(repeat):
        start = time.process_time()
        out = run()
        best = min(best, time.process_time() - start)
    return out, best


def score(art: Art, svg: str) -> dict[str, float]:
    h, w = art.hard.shape[:2]
    lab = metrics.to_lab(render4x(svg, w, h))
    lab_gt = metrics.to_lab(art.truth4x)
    delta = metrics.delta_e_map(lab, lab_gt)
    near = metrics.edge_band(metrics.edge_pixels(lab_gt))
    return {
        "segments": float(metrics.svg_segments(svg)),
        "de4x": float(delta.mean()),
        "near": float(delta[near].mean()),
    }


METHODS: dict[str, Callable[[bytes], str]] = {"printjob": printjob, "vtracer": vtracer_default}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per trace (best)")
    parser.add_argument("--only", default="", help="comma-separated image names")
    parser.add_argument("--methods", default="printjob,vtracer")
    parser.add_argument("--save", type=Path, help="write inputs, truths and SVGs here")
    parser.add_argument(
        "--phases", type=int, default=0, help="also mean segments and near over this many phases"
    )
    args = parser.parse_args(argv)
    only = {n for n in args.only.split(",") if n}
    methods = [m for m in args.methods.split(",") if m]
    rows = []
    print(f"| image | {' | '.join(f'{m} seg / ΔE 4x / near / ms' for m in methods)} |")
    print(f"|---|{'---|' * len(methods)}")
    for art in build():
        if only and art.name not in only:
            continue
        data = png(art.hard)
        cells = []
        for method in methods:
            convert = METHODS[method]
            svg, cpu = best_cpu(lambda: convert(data), args.repeat)  # noqa: B023
            s = score(art, svg)
            rows.append((art.name, method, s, cpu))
            ms = cpu * 1000
            cells.append(f"{s['segments']:.0f} / {s['de4x']:.2f} / {s['near']:.2f} / {ms:.1f}")
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                (args.save / f"{art.name}.{method}.svg").write_text(svg)
        if args.save:
            Image.fromarray(art.hard).save(args.save / f"{art.name}.png")
            Image.fromarray(art.truth4x).save(args.save / f"{art.name}.truth4x.png")
        print(f"| {art.name} | {' | '.join(cells)} |", flush=True)
    for method in methods:
        mine = [r for r in rows if r[1] == method]
        seg = np.median([r[2]["segments"] for r in mine])
        near = np.median([r[2]["near"] for r in mine])
        cpu = np.median([r[3] for r in mine]) * 1000
        print(f"median {method}: segments {seg:.0f}, near-edge ΔE {near:.2f}, {cpu:.1f} ms")
    if args.phases:
        over_phases(args.phases, only, methods)
    return 0


def over_phases(phases: int, only: set[str], methods: list[str]) -> None:
    """Each drawn image's mean segments and `near` over `phases` phases (0 to phases - 1),
    per method, and the medians of those means. Untimed."""
    scores: dict[tuple[str, str], list[dict[str, float]]] = {}
    for phase in range(phases):
        for art in build(phase):
            if art.name == "circle-pil-300" or (only and art.name not in only):
                continue
            data = png(art.hard)
            for method in methods:
                scores.setdefault((art.name, method), []).append(score(art, METHODS[method](data)))
    names = list(dict.fromkeys(name for name, _ in scores))
    print(
        f"\n| image (mean of {phases} phases) | {' | '.join(f'{m} seg / near' for m in methods)} |"
    )
    print(f"|---|{'---|' * len(methods)}")
    for name in names:
        cells = [
            f"{np.mean([s['segments'] for s in scores[name, m]]):.1f} / "
            f"{np.mean([s['near'] for s in scores[name, m]]):.3f}"
            for m in methods
        ]
        print(f"| {name} | {' | '.join(cells)} |", flush=True)
    for method in methods:
        seg = np.median([np.mean([s["segments"] for s in scores[n, method]]) for n in names])
        near = np.median([np.mean([s["near"] for s in scores[n, method]]) for n in names])
        print(f"median over phases {method}: segments {seg:.1f}, near-edge ΔE {near:.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
