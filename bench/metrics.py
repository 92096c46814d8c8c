"""Image and SVG metrics of printjob's engine benchmark.

Every function here is pure: arrays or SVG text in, numbers or masks out. The definitions
are the ones documented in docs/engine.md ("Metric definitions"); change both together.

Conventions: images are numpy arrays, H x W x C, `uint8`; RGBA arrays carry straight
(not premultiplied) alpha, as PNG decoders return them. Colour metrics compare images
composited over white (`over_white`), in CIELAB (D65, skimage's `rgb2lab`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import numpy as np
from PIL import ImageColor
from scipy import ndimage
from skimage.color import deltaE_ciede2000, rgb2lab
from skimage.metrics import structural_similarity

#: Lab gradient (CIE76 units per output pixel, Sobel / 8) above which a ground-truth pixel
#: at 4x is a colour edge.
EDGE_THRESHOLD = 2.0
#: Edge-band half-width at 4x, in output pixels (one input pixel).
EDGE_RADIUS = 4.0
#: Alpha (of 255) below which a pixel inside the opaque area counts as a seam pixel (0.99).
SEAM_ALPHA = 252
#: Rows per chunk for CIEDE2000, which allocates many full-size float64 temporaries.
_CHUNK_ROWS = 256


# --------------------------------------------------------------------------- pixels


def as_rgba(image: np.ndarray) -> np.ndarray:
    """Return `image` (grey, grey+alpha, RGB or RGBA, uint8) as RGBA uint8."""
    if image.ndim == 2:
        image = image[:, :, None]
    channels = image.shape[2]
    if channels == 4:
        return image
    if channels == 3:
        alpha = np.full((*image.shape[:2], 1), 255, np.uint8)
        return np.concatenate([image, alpha], axis=2)
    if channels == 2:
        grey = np.repeat(image[:, :, :1], 3, axis=2)
        return np.concatenate([grey, image[:, :, 1:2]], axis=2)
    if channels == 1:
        return as_rgba(np.repeat(image, 3, axis=2))
    raise ValueError(f"unsupported channel count {channels}")


def over_white(image: np.ndarray) -> np.ndarray:
    """Composite a straight-alpha image over opaque white; returns RGB uint8 (rounded)."""
    rgba = as_rgba(image).astype(np.float32)
    alpha = rgba[:, :, 3:4] / 255.0
    rgb = rgba[:, :, :3] * alpha + 255.0 * (1.0 - alpha)
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def alpha_of(image: np.ndarray) -> np.ndarray:
    """The alpha channel of an image as uint8 (255 everywhere for an image without one)."""
    return as_rgba(image)[:, :, 3]


def to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of an RGB uint8 image, float32 H x W x 3."""
    lab = np.empty((*rgb.shape[:2], 3), np.float32)
    for start in range(0, rgb.shape[0], _CHUNK_ROWS):
        rows = slice(start, start + _CHUNK_ROWS)
        lab[rows] = rgb2lab(rgb[rows].astype(np.float32) / 255.0)
    return lab


def delta_e_map(lab_a: np.ndarray, lab_b: np.ndarray) -> np.ndarray:
    """Per-pixel CIEDE2000 between two Lab images of the same shape (float32 H x W)."""
    if lab_a.shape != lab_b.shape:
        raise ValueError(f"shape mismatch {lab_a.shape} vs {lab_b.shape}")
    out = np.empty(lab_a.shape[:2], np.float32)
    for start in range(0, lab_a.shape[0], _CHUNK_ROWS):
        rows = slice(start, start + _CHUNK_ROWS)
        out[rows] = deltaE_ciede2000(lab_a[rows], lab_b[rows], channel_axis=-1)
    return out


def masked_mean(values: np.ndarray, mask: np.ndarray | None = None) -> float | None:
    """Mean of `values` where `mask` is true (everywhere without a mask); None if empty."""
    selected = values if mask is None else values[mask]
    return float(selected.mean()) if selected.size else None


def lab_gradient(lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sobel gradient of a Lab image, per channel, scaled by 1/8 (Lab units per pixel).

    Returns (gx, gy), each H x W x 3 float32. Borders are handled by reflection.
    """
    gx = np.empty_like(lab)
    gy = np.empty_like(lab)
    for c in range(3):
        gx[:, :, c] = ndimage.sobel(lab[:, :, c], axis=1, mode="reflect") / 8.0
        gy[:, :, c] = ndimage.sobel(lab[:, :, c], axis=0, mode="reflect") / 8.0
    return gx, gy


def gradient_energy_map(lab: np.ndarray) -> np.ndarray:
    """Squared Lab gradient magnitude per pixel: sum over L, a, b of gx^2 + gy^2."""
    gx, gy = lab_gradient(lab)
    return (gx * gx + gy * gy).sum(axis=2)


def difference_energy_map(lab: np.ndarray) -> np.ndarray:
    """Squared forward differences per pixel, to the right and down, summed over L, a, b.

    This is the gradient energy of the sharpness metric: a one-pixel step of height D
    contributes its full D^2 at one pixel, where Sobel would spread D^2/2 over two pixels
    and so reward blur. The last column and row have no right/down neighbour (0 there).
    """
    energy = np.zeros(lab.shape[:2], np.float32)
    dx = np.diff(lab, axis=1)
    dy = np.diff(lab, axis=0)
    energy[:, :-1] += (dx * dx).sum(axis=2)
    energy[:-1, :] += (dy * dy).sum(axis=2)
    return energy


def edge_pixels(lab_gt: np.ndarray, threshold: float = EDGE_THRESHOLD) -> np.ndarray:
    """Ground-truth colour edges: Lab gradient magnitude (Sobel / 8) above `threshold`."""
    return np.sqrt(gradient_energy_map(lab_gt)) > threshold


def edge_band(edges: np.ndarray, radius: float = EDGE_RADIUS) -> np.ndarray:
    """Pixels within Euclidean distance `radius` of an edge pixel (edge pixels included)."""
    if not edges.any():
        return np.zeros_like(edges)
    distance = ndimage.distance_transform_edt(~edges)
    return distance <= radius


def sharpness(energy: np.ndarray, energy_gt: np.ndarray, band: np.ndarray) -> float | None:
    """Gradient energy of an image in `band` divided by the ground truth's in the same band."""
    reference = float(energy_gt[band].sum(dtype=np.float64))
    if reference <= 0.0:
        return None
    return float(energy[band].sum(dtype=np.float64)) / reference


def ssim(rgb: np.ndarray, rgb_gt: np.ndarray) -> float:
    """SSIM of two RGB uint8 images (skimage defaults: 7x7 window, data_range 255).

    Computed in float32 (skimage keeps the input's float type), which is faster than
    uint8 input (float64 internally) and agrees to about 1e-7.
    """
    a, b = rgb.astype(np.float32), rgb_gt.astype(np.float32)
    return float(structural_similarity(a, b, channel_axis=2, data_range=255))


def upscale_nearest(mask: np.ndarray, factor: int) -> np.ndarray:
    """Repeat every pixel of a 2-D array `factor` times along both axes."""
    return np.repeat(np.repeat(mask, factor, axis=0), factor, axis=1)


def opaque_interior(input_alpha: np.ndarray, factor: int, margin: int = 1) -> np.ndarray:
    """Where the output at `factor`x must be fully opaque.

    The input's opaque pixels (alpha == 255), upscaled nearest to `factor`x, then eroded by
    `margin` output pixels (3x3 square, repeated; outside the canvas counts as
    transparent) so that the anti-aliased outline of the artwork, including where it runs
    along or touches the canvas edge, does not count. The default margin of one output
    pixel is the seam metric's; `margin=factor` (one input pixel) leaves out outline
    inaccuracies too and keeps only real holes.
    """
    opaque = upscale_nearest(input_alpha == 255, factor)
    return ndimage.binary_erosion(
        opaque, structure=np.ones((3, 3), bool), iterations=margin, border_value=0
    )


def seam_pixels(output_alpha: np.ndarray, interior: np.ndarray) -> int:
    """Pixels inside `interior` whose alpha is below `SEAM_ALPHA` (0.99)."""
    if output_alpha.shape != interior.shape:
        raise ValueError(f"shape mismatch {output_alpha.shape} vs {interior.shape}")
    return int(np.count_nonzero((output_alpha < SEAM_ALPHA) & interior))


def alpha_error(alpha: np.ndarray, alpha_ref: np.ndarray) -> float:
    """Mean absolute alpha difference, as a fraction of full opacity (0..1)."""
    return float(np.abs(alpha.astype(np.int16) - alpha_ref.astype(np.int16)).mean() / 255.0)


# --------------------------------------------------------------------------- SVG


_COMMAND_RE = re.compile(r"[MmZzLlHhVvCcSsQqTtAa]")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SEPARATORS = " \t\r\n,"
#: Numbers per segment of each drawing command (M: per implicit lineto after the first).
_ARITY = {"M": 2, "L": 2, "T": 2, "H": 1, "V": 1, "C": 6, "S": 4, "Q": 4, "A": 7}


def tokenize_path(d: str) -> Iterator[str | float]:
    """Split SVG path data into command letters (str) and numbers (float).

    Follows the SVG path grammar: numbers may run together ("1-2", "0.5.5", "1e-3"),
    separators are whitespace and commas, and the two arc flags may be written as single
    digits without separators ("a1 1 0 012 3"). Raises ValueError on anything else.
    """
    i, n = 0, len(d)
    command = ""
    index = 0  # parameter index within the current command
    while i < n:
        ch = d[i]
        if ch in _SEPARATORS:
            i += 1
            continue
        if _COMMAND_RE.match(ch):
            command, index = ch, 0
            i += 1
            yield ch
            continue
        if command.upper() == "A" and index % 7 in (3, 4) and ch in "01":
            i += 1
            index += 1
            yield float(ch)
            continue
        match = _NUMBER_RE.match(d, i)
        if match is None:
            raise ValueError(f"bad path data at {i}: {d[i : i + 20]!r}")
        i = match.end()
        index += 1
        yield float(match.group())


def count_path_segments(d: str) -> int:
    """Drawing segments in SVG path data.

    Every L/H/V/C/S/Q/T/A segment counts one, in either case, including implicit repeats
    (extra parameter groups after one letter), and so do the implicit linetos after a
    moveto's first pair. Every Z/z counts one (the closing line). Moveto pairs themselves
    and trailing incomplete parameter groups count nothing.
    """
    segments = 0
    command = ""
    numbers = 0

    def flush() -> int:
        if not command or command in "Zz":
            return 0
        arity = _ARITY[command.upper()]
        groups = numbers // arity
        return groups - 1 if command in "Mm" and groups else groups

    for token in tokenize_path(d):
        if isinstance(token, str):
            segments += flush()
            command, numbers = token, 0
            if token in "Zz":
                segments += 1
        else:
            numbers += 1
    return segments + flush()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _presentation(element: ET.Element, name: str) -> str | None:
    """A presentation attribute, from `style` first, then the attribute itself."""
    style = element.get("style")
    if style:
        for declaration in style.split(";"):
            key, _, value = declaration.partition(":")
            if key.strip() == name:
                return value.strip()
    return element.get(name)


#: Elements whose content is not painted directly.
_NOT_PAINTED = {
    "defs",
    "clipPath",
    "mask",
    "symbol",
    "pattern",
    "marker",
    "linearGradient",
    "radialGradient",
    "filter",
    "metadata",
    "title",
    "desc",
    "style",
}
_SHAPES = {"path", "rect", "circle", "ellipse", "polygon", "polyline", "line", "text"}
_PAINT = ("fill", "stroke", "color")
#: SVG's initial values of the inherited paint properties.
_INITIAL = {"fill": "black", "stroke": "none", "color": "black"}


def _painted_shapes(root: ET.Element) -> Iterator[tuple[ET.Element, dict[str, str]]]:
    """Every painted shape with its effective fill, stroke and color (inherited)."""

    def resolve(element: ET.Element, parent: dict[str, str]) -> dict[str, str]:
        paint = dict(parent)
        for name in _PAINT:
            value = _presentation(element, name)
            if value and value != "inherit":
                paint[name] = value
        return paint

    stack = [(root, resolve(root, _INITIAL))]
    while stack:
        element, paint = stack.pop()
        for child in element:
            tag = _local(child.tag)
            if tag in _NOT_PAINTED:
                continue
            child_paint = resolve(child, paint)
            if tag in _SHAPES:
                yield child, child_paint
            stack.append((child, child_paint))


def normalise_color(value: str, current: str = "black") -> str | None:
    """A paint value as '#rrggbb' (gradients as 'url(#id)'); None for 'none'/'transparent'."""
    value = value.strip()
    if value == "currentColor":
        value = current
    if value in ("none", "transparent"):
        return None
    if value.startswith("url("):
        return value.split(")")[0] + ")"
    try:
        rgb = ImageColor.getrgb(value)
    except ValueError:
        return value.lower()
    return "#{:02x}{:02x}{:02x}".format(*rgb[:3])


def svg_fill_colors(svg: str) -> set[str]:
    """Distinct paint colours of the painted shapes in an SVG document.

    Fills, plus strokes (which only the reference SVGs use; traced output is fills only).
    `currentColor` resolves through the inherited `color`.
    """
    colors: set[str] = set()
    for element, paint in _painted_shapes(ET.fromstring(svg)):
        names = ("stroke",) if _local(element.tag) == "line" else ("fill", "stroke")
        for name in names:
            color = normalise_color(paint[name], paint["color"])
            if color is not None:
                colors.add(color)
    return colors


def _points_segments(points: str, closed: bool) -> int:
    count = len(_NUMBER_RE.findall(points)) // 2
    if count == 0:
        return 0
    return count if closed else count - 1


def svg_segments(svg: str) -> int:
    """Drawing segments of the painted shapes in an SVG document.

    Path data counts as `count_path_segments`; polygon n points = n segments, polyline
    n - 1; rect = 4, circle/ellipse = 4 (the arcs of their outline) and line = 1, for
    the reference rows whose SVG uses those primitives.
    """
    total = 0
    for element, _ in _painted_shapes(ET.fromstring(svg)):
        tag = _local(element.tag)
        if tag == "path":
            total += count_path_segments(element.get("d", ""))
        elif tag in ("polygon", "polyline"):
            total += _points_segments(element.get("points", ""), tag == "polygon")
        elif tag in ("rect", "circle", "ellipse"):
            total += 4
        elif tag == "line":
            total += 1
    return total


# --------------------------------------------------------------------------- detail and text


#: Lab gradient (Sobel / 8, Lab units per pixel) above which a pixel at 1x is an edge of
#: the detail metric. Higher than `EDGE_THRESHOLD` (which finds edges in clean ground
#: truth) so that JPEG ringing and sensor noise in an input are mostly not edges.
DETAIL_THRESHOLD = 8.0
#: How far (Chebyshev distance, pixels at 1x) the output's edge may lie from the input's.
DETAIL_TOLERANCE = 1


def detail_edges(lab: np.ndarray, threshold: float = DETAIL_THRESHOLD) -> np.ndarray:
    """Edge pixels of a 1x image for detail recall: Lab gradient magnitude above
    `threshold` (the same Sobel / 8 gradient as `edge_pixels`)."""
    edges: np.ndarray = np.sqrt(gradient_energy_map(lab)) > threshold
    return edges


def detail_recall(
    input_edges: np.ndarray, output_edges: np.ndarray, tolerance: int = DETAIL_TOLERANCE
) -> float | None:
    """Share of the input's edge pixels with an output edge pixel within `tolerance`
    pixels (3 x 3 neighbourhood per pixel of tolerance); None when the input has no edge.

    A lost hairline, a dot, or a letter's strokes take their edge pixels with them; an
    edge that moved by one pixel (anti-aliasing, rounding) still counts as kept.
    """
    if input_edges.shape != output_edges.shape:
        raise ValueError(f"shape mismatch {input_edges.shape} vs {output_edges.shape}")
    total = int(np.count_nonzero(input_edges))
    if total == 0:
        return None
    near = output_edges
    if tolerance > 0:
        near = ndimage.binary_dilation(
            output_edges, structure=np.ones((3, 3), bool), iterations=tolerance
        )
    return int(np.count_nonzero(input_edges & near)) / total


def ocr_words(rgb: np.ndarray) -> frozenset[str]:
    """Words tesseract reads in an RGB image (the normalisation of the engine's tests,
    `tests/unit/engine/ocr.py`, so a test and the benchmark count a word alike)."""
    from PIL import Image
    from tests.unit.engine.ocr import read_words

    return read_words(Image.fromarray(rgb))


def upscale_bicubic(rgb: np.ndarray, factor: int) -> np.ndarray:
    """An RGB image `factor` times larger, Pillow BICUBIC: the input as a viewer zooms it."""
    from PIL import Image

    image = Image.fromarray(rgb)
    size = (image.width * factor, image.height * factor)
    upscaled: np.ndarray = np.asarray(image.resize(size, Image.Resampling.BICUBIC))
    return upscaled


def ocr_recall(reference: frozenset[str], words: frozenset[str]) -> float | None:
    """Share of the reference's words also read in `words`; None when OCR reads no word
    in the reference (nothing legible to keep)."""
    if not reference:
        return None
    return len(reference & words) / len(reference)
