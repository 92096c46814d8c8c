"""Helpers for the tracer's tests: exact anti-aliased test images, a rasteriser for
`VectorArt` and outline sampling. (No tests here.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np
import skia

from printjob_adapters.engine.vector import VectorArt

Shape = Callable[[np.ndarray, np.ndarray], np.ndarray]


@attrs.frozen(eq=False)
class Seg:
    """The segmentation contract the tracer reads (labels, palette, background flag)."""

    labels: np.ndarray
    palette: np.ndarray
    background_removed: bool = False


def paint(
    height: int,
    width: int,
    background: tuple[int, int, int] | None,
    shapes: Sequence[tuple[tuple[int, int, int], Shape]],
    supersample: int = 8,
) -> tuple[np.ndarray, Seg]:
    """Paint shapes (inside-tests on x, y arrays) over a background with exact
    box-filtered anti-aliasing; label each pixel by the colour covering most of it.
    `background=None` paints on transparency (label -1 there)."""
    ss = supersample
    offs = (np.arange(ss) + 0.5) / ss
    ys = (np.arange(height)[:, None] + offs[None, :]).ravel()
    xs = (np.arange(width)[:, None] + offs[None, :]).ravel()
    gx, gy = np.meshgrid(xs, ys)
    owner = np.full(gx.shape, -1, dtype=np.int32)
    for k, (_, inside) in enumerate(shapes):
        owner[inside(gx, gy)] = k
    colours = [c for c, _ in shapes]
    palette_list = ([] if background is None else [background]) + colours
    base = 0 if background is None else 1
    sub = np.where(owner >= 0, owner + base, -1 if background is None else 0)
    sub = sub.reshape(height, ss, width, ss).transpose(0, 2, 1, 3).reshape(height, width, -1)
    count = len(palette_list)
    cover = np.stack([(sub == k).mean(axis=2) for k in range(count)], axis=2)
    pal = np.array(palette_list, dtype=np.float64)
    alpha = cover.sum(axis=2)
    rgb = np.einsum("hwk,kc->hwc", cover, pal) / np.maximum(alpha, 1e-9)[..., None]
    rgba = np.zeros((height, width, 4), dtype=np.uint8)
    rgba[..., :3] = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    rgba[..., 3] = np.clip(np.rint(alpha * 255), 0, 255).astype(np.uint8)
    labels = cover.argmax(axis=2).astype(np.int32)
    if background is None:
        labels[alpha < 0.5] = -1
    return rgba, Seg(labels=labels, palette=pal, background_removed=background is None)


def rect(x0: float, y0: float, x1: float, y1: float) -> Shape:
    return lambda x, y: (x >= x0) & (x < x1) & (y >= y0) & (y < y1)


def ellipse(cx: float, cy: float, rx: float, ry: float) -> Shape:
    return lambda x, y: ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1.0


def rasterise(art: VectorArt, scale: int) -> np.ndarray:
    """Paint the layers in order (even-odd, anti-aliased) into RGBA uint8."""
    surface = skia.Surface(art.width * scale, art.height * scale)
    canvas = surface.getCanvas()
    canvas.clear(skia.Color(0, 0, 0, 0))
    canvas.scale(scale, scale)
    for layer in art.layers:
        path = skia.Path()
        path.setFillType(skia.PathFillType.kEvenOdd)
        for op, pts in layer.commands:
            if op == "moveTo":
                path.moveTo(*pts[0])
            elif op == "lineTo":
                path.lineTo(*pts[0])
            elif op == "curveTo":
                path.cubicTo(*pts[0], *pts[1], *pts[2])
            else:
                path.close()
        canvas.drawPath(path, skia.Paint(AntiAlias=True, Color=skia.Color(*layer.color)))
    image = surface.makeImageSnapshot()
    return image.toarray(colorType=skia.ColorType.kRGBA_8888_ColorType)


def contours(commands: Sequence[tuple[str, tuple]], per_curve: int = 32) -> list[np.ndarray]:
    """Each closed contour densely sampled (closing line included)."""
    out: list[np.ndarray] = []
    pts: list[np.ndarray] = []
    cur = np.zeros(2)
    start = np.zeros(2)
    t = np.linspace(0, 1, per_curve + 1)[1:, None]
    for op, args in commands:
        if op == "moveTo":
            cur = start = np.array(args[0], dtype=float)
            pts = [cur[None]]
        elif op == "lineTo":
            end = np.array(args[0], dtype=float)
            pts.append(cur + t * (end - cur))
            cur = end
        elif op == "curveTo":
            c1, c2, end = (np.array(a, dtype=float) for a in args)
            v = 1 - t
            pts.append(v**3 * cur + 3 * v * v * t * c1 + 3 * v * t * t * c2 + t**3 * end)
            cur = end
        else:
            pts.append(cur + t * (start - cur))
            out.append(np.concatenate(pts))
    return out


def on_curve_points(commands: Sequence[tuple[str, tuple]]) -> np.ndarray:
    """The outline's nodes (segment end points)."""
    return np.array([args[-1] for op, args in commands if op != "closePath"], dtype=float)


def polygon_area(points: np.ndarray) -> float:
    x, y = points[:, 0], points[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
