"""printjob's engine benchmark: our tracer against vtracer and a bicubic upscale.

Run from the repository root:

    .venv/bin/python bench/engine_bench.py [--only ID[,ID...]] [--skip-scale] [--no-write-docs]
        [--set corpus|hard|own|all] [--label LABEL]

`--set hard` runs the public hard set (`shared/corpus-hard`), `--set own` printjob's own
hard images (drawn by bench/hard_images.py into bench/out/hard), `--set all` the corpus
and both: the hard sets get detail recall, OCR word recall, a contact sheet each
(bench/out/contact-<set>.png) and the docs section "## Hard images (LABEL)".

Every method converts every corpus image in this one process; the traced SVGs are then
rendered with one renderer (resvg, through resvg_py) at 1x and 4x and scored against the
input and the 4x ground truth. Results go to bench/out/engine.json and, on a full run, to
docs/engine.md. The metric definitions live in bench/metrics.py and docs/engine.md.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import io
import json
import multiprocessing
import os
import platform
import re
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import resvg_py
import vtracer
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    # The shared test helpers (tests/unit/engine/ocr.py) are used by metrics and hard_images.
    sys.path.insert(0, str(ROOT))

import hard_images  # noqa: E402
import metrics as m  # noqa: E402

CORPUS = Path(os.environ.get("PRINTJOB_CORPUS", ROOT.parent / "shared" / "corpus"))
#: The public hard set (`shared/corpus-hard`, issue #12) and printjob's own hard set, which
#: `bench/hard_images.py` draws into bench/out/hard at run time.
HARD_CORPUS = Path(os.environ.get("PRINTJOB_CORPUS_HARD", ROOT.parent / "shared" / "corpus-hard"))
OUT = ROOT / "bench" / "out"
OWN_CORPUS = OUT / "hard"
SETS = ("corpus", "hard", "own", "all")
DOCS = ROOT / "docs" / "engine.md"
SCALE = 4
#: dpi resvg resolves physical units with (see `render`).
RENDER_DPI = 300
#: Pixels of the scale-check inputs (about 3 MP; the engine accepts at most 3,000,000).
SCALE_PIXELS = 3_000_000
#: The photo scale check: this corpus photo upscaled (Pillow LANCZOS) to about
#: `SCALE_PIXELS`, with Gaussian noise of `PHOTO_NOISE` (8-bit levels, seed
#: `PHOTO_SEED`) and saved as JPEG at `PHOTO_QUALITY`, so that it looks like a camera
#: photo rather than a smooth upscale.
PHOTO_SOURCE = "sk-chelsea"
PHOTO_NOISE = 2.0
PHOTO_SEED = 20240601
PHOTO_QUALITY = 90

ENGINE = "printjob"
VTRACER_DEFAULT = "vtracer-default"
VTRACER_POSTER = "vtracer-poster"
BICUBIC = "bicubic"
SOURCE = "source-svg"
METHODS = [ENGINE, VTRACER_DEFAULT, VTRACER_POSTER, BICUBIC, SOURCE]
#: vtracer's "poster" preset.
POSTER = {"colormode": "color", "color_precision": 5, "layer_difference": 32, "filter_speckle": 8}

#: Metric key, table heading, number format, lower is better (None: neither).
METRICS: list[tuple[str, str, str, bool | None]] = [
    ("de_1x", "Mean ΔE2000 at 1x vs input", "{:.2f}", True),
    ("de_4x", "Mean ΔE2000 at 4x vs ground truth", "{:.2f}", True),
    ("de_4x_edge", "Mean ΔE2000 at 4x in the edge band", "{:.2f}", True),
    ("sharpness_4x", "Edge sharpness at 4x (1 = ground truth)", "{:.3f}", None),
    ("ssim_4x", "SSIM at 4x vs ground truth", "{:.4f}", False),
    ("alpha_err_1x", "Mean alpha error at 1x (inputs with alpha)", "{:.4f}", True),
    ("alpha_err_4x", "Mean alpha error at 4x (inputs with alpha)", "{:.4f}", True),
    ("seams_4x", "Seam pixels at 4x", "{:,.0f}", True),
    ("seams_4x_deep", "Seam pixels at 4x, one input pixel or more inside", "{:,.0f}", True),
    ("segments", "Path segments", "{:,.0f}", True),
    ("bytes", "SVG bytes", "{:,.0f}", True),
    ("colors", "Fill colours", "{:.0f}", None),
    ("detail_recall", "Detail recall at 1x (input edges kept within 1 px)", "{:.3f}", False),
    ("ocr_recall", "OCR word recall at 4x (images with text)", "{:.2f}", False),
    ("seconds", "Tracing seconds", "{:.3f}", True),
    ("peak_mb", "Peak memory, MB (RSS above start)", "{:.1f}", True),
]


# --------------------------------------------------------------------------- corpus


@dataclass
class Item:
    """One corpus image as the manifest describes it."""

    id: str
    klass: str
    variant: str
    path: Path
    width: int
    height: int
    gt4x: Path | None
    source_svg: Path | None
    colors: int | None
    #: The image has small text: OCR word recall is measured.
    text: bool = False
    #: The kind of hard image (own set), or the class.
    kind: str = ""

    @property
    def data(self) -> bytes:
        return self.path.read_bytes()

    @property
    def is_jpeg(self) -> bool:
        return self.variant == "jpeg" or self.path.suffix.lower() in (".jpg", ".jpeg")


def load_corpus(corpus: Path) -> tuple[list[Item], dict[str, Any]]:
    """Read manifest.json; returns the items (in manifest order) and the manifest."""
    manifest = json.loads((corpus / "manifest.json").read_text())
    items = []
    for entry in manifest["items"]:
        source = entry.get("source") or {}
        items.append(
            Item(
                id=entry["id"],
                klass=entry.get("class", ""),
                variant=entry.get("variant", ""),
                path=corpus / entry["file"],
                width=int(entry["width"]),
                height=int(entry["height"]),
                gt4x=corpus / entry["gt4x"] if entry.get("gt4x") else None,
                source_svg=corpus / source["svg"] if source.get("svg") else None,
                colors=entry.get("colors"),
                text=bool(entry.get("text")),
                kind=entry.get("kind") or entry.get("class", ""),
            )
        )
    return items, manifest


def decode_rgba(data: bytes) -> np.ndarray:
    """Decode an image file to RGBA uint8 (alpha 255 where the file has none)."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGBA"))


def png_bytes(image: np.ndarray) -> bytes:
    """Encode an array as PNG (fast compression)."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


# --------------------------------------------------------------------------- measuring


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _trim_heap() -> None:
    """Return freed heap memory to the OS so the next RSS delta starts from a low base."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class PeakRss:
    """Peak resident memory above the level at entry, sampled every `interval` seconds.

    Counts native allocations too (vtracer and resvg are Rust; numpy buffers), which
    tracemalloc would miss for vtracer. Use as a context manager; read `.peak_mb`.
    """

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.base = 0
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _rss_bytes())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        _trim_heap()
        self.base = self.peak = _rss_bytes()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.peak = max(self.peak, _rss_bytes())
        self._stop.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float:
        return (self.peak - self.base) / 2**20


@dataclass
class Conversion:
    """What one method made from one input, and what it cost."""

    svg: str | None = None
    #: Raster output at 4x (the bicubic baseline only), RGBA.
    raster4x: np.ndarray | None = None
    seconds: float | None = None
    peak_mb: float | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


#: Timed runs per conversion (best time kept), unless the runs so far took over
#: `REPEAT_BUDGET` seconds. Set by --repeat.
REPEAT = 3
REPEAT_BUDGET = 1.0


def measured(function: Callable[[], Conversion]) -> Conversion:
    """Run one conversion: once under the memory sampler, then timed without it.

    The sampler is a Python thread that wakes every 2 ms; while it runs it takes the
    interpreter lock from Python-heavy code (printjob's stages) far more often than from
    one long native call (vtracer), so runs timed under it would charge the sampler's
    cost to some methods and not others. The first run therefore samples memory only;
    then up to `REPEAT` runs are timed bare while the runs so far took under
    `REPEAT_BUDGET` seconds in all. Keeps the first run's output, the best bare time and
    the sampled peak. The heap is not trimmed before the timed runs: a worker's heap
    stays warm from one job to the next, and trimming would charge every method page
    faults a running service does not pay. A failed call is not repeated, and its time
    and memory are not reported.
    """
    with PeakRss() as memory:
        try:
            result = function()
        except Exception as exc:
            result = Conversion(error=_describe(exc))
    if result.error is not None:
        return result
    times: list[float] = []
    while len(times) < max(1, REPEAT) and sum(times) < REPEAT_BUDGET:
        start = time.perf_counter()
        try:
            run = function()
        except Exception as exc:
            run = Conversion(error=_describe(exc))
        seconds = time.perf_counter() - start
        if run.error is not None:
            return run
        times.append(seconds)
        del run
    result.seconds = min(times)
    result.peak_mb = memory.peak_mb
    result.extra["runs"] = len(times)
    return result


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__
    if cause is not None:
        text += f" (caused by {type(cause).__name__}: {cause})"
    return text


# --------------------------------------------------------------------------- methods


def engine_convert() -> tuple[Callable[..., Any] | None, str]:
    """printjob's `convert`, or None and why not, if it does not import yet."""
    try:
        from printjob_adapters.tracing import convert
    except Exception as exc:
        return None, f"printjob engine unavailable: {_describe(exc)}"
    return convert, "printjob engine imported"


def printjob_svg(convert: Callable[..., Any], data: bytes) -> Conversion:
    """Our engine: SVG output, original size, automatic colours."""
    from printjob_core.model import JobOptions, OutputFormat

    output = convert(data, JobOptions(format=OutputFormat.SVG))
    return Conversion(
        svg=output.data.decode("utf-8"),
        extra={
            "reported_colors": output.colors,
            "reported_size": [output.width, output.height],
            "background_removed": output.background_removed,
        },
    )


def vtracer_svg(data: bytes, fmt: str, **options: Any) -> Conversion:
    """vtracer from PyPI, in-process, on the encoded image file."""
    return Conversion(svg=vtracer.convert_raw_image_to_svg(data, img_format=fmt, **options))


def bicubic(data: bytes) -> Conversion:
    """The no-vectorisation baseline: Pillow BICUBIC 4x upscale (premultiplied for RGBA)."""
    with Image.open(io.BytesIO(data)) as image:
        image = image.convert("RGBA")
        big = image.resize((image.width * SCALE, image.height * SCALE), Image.Resampling.BICUBIC)
    return Conversion(raster4x=np.asarray(big))


_SVG_OPEN = re.compile(r"<svg\b[^>]*>", re.S)


def with_white_background(svg: str) -> str:
    """The SVG with a white rectangle under everything (for opaque-input references)."""
    match = _SVG_OPEN.search(svg)
    if match is None:
        raise ValueError("no <svg> element")
    rect = '<rect x="-100000" y="-100000" width="200000" height="200000" fill="#ffffff"/>'
    return svg[: match.end()] + rect + svg[match.end() :]


def source_svg(item: Item, opaque: bool) -> Conversion:
    """The ground truth's own SVG, as a perfect tracer would give it.

    For an opaque input (rendered over white for the corpus) a white background rectangle
    is added, as a tracer keeping the background would.
    """
    assert item.source_svg is not None
    svg = item.source_svg.read_text()
    return Conversion(svg=with_white_background(svg) if opaque else svg)


def image_format(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".")
    return "jpg" if suffix == "jpeg" else suffix


def run_method(
    method: str, item: Item, data: bytes, convert: Callable[..., Any] | None
) -> Conversion:
    """Convert one input with one method (timed for the tracing methods)."""
    fmt = image_format(item.path)
    if method == ENGINE:
        assert convert is not None
        return measured(lambda: printjob_svg(convert, data))
    if method == VTRACER_DEFAULT:
        return measured(lambda: vtracer_svg(data, fmt))
    if method == VTRACER_POSTER:
        return measured(lambda: vtracer_svg(data, fmt, **POSTER))
    if method == BICUBIC:
        return measured(lambda: bicubic(data))
    if method == SOURCE:
        opaque = bool((decode_rgba(data)[:, :, 3] == 255).all())
        return source_svg(item, opaque)
    raise ValueError(method)


# --------------------------------------------------------------------------- rendering


def render(svg: str, width: int, height: int) -> np.ndarray:
    """Render an SVG with resvg at `width` pixels wide; RGBA uint8 of shape (height, width).

    A rendered height off by rounding (one or two pixels) is padded or cropped.

    dpi is `RENDER_DPI` (300): resvg_py's default (0) makes any size in physical units
    invalid, and printjob's SVG states its size in pt at 300 dpi, so at 300 dpi its
    intrinsic size is exactly the input's pixels. At 96 dpi it would be fractional
    (512 px = 122.88 pt = 163.84 px), resvg would round the canvas up and leave a
    transparent strip along the right and bottom edges. Unitless sizes do not depend on it.
    """
    png = bytes(resvg_py.svg_to_bytes(svg_string=svg, width=width, dpi=RENDER_DPI))
    with Image.open(io.BytesIO(png)) as image:
        rgba = np.asarray(image.convert("RGBA"))
    if rgba.shape[1] != width or abs(rgba.shape[0] - height) > 2:
        raise ValueError(f"rendered {rgba.shape[1]}x{rgba.shape[0]}, expected {width}x{height}")
    if rgba.shape[0] != height:
        fixed = np.zeros((height, width, 4), np.uint8)
        rows = min(height, rgba.shape[0])
        fixed[:rows] = rgba[:rows]
        rgba = fixed
    return rgba


# --------------------------------------------------------------------------- scoring


@dataclass
class Reference:
    """What every method of one item is scored against (computed once per item)."""

    rgb1x: np.ndarray
    lab1x: np.ndarray
    alpha1x: np.ndarray
    has_alpha: bool
    interior4x: np.ndarray
    deep4x: np.ndarray
    rgb4x: np.ndarray | None = None
    lab4x: np.ndarray | None = None
    alpha4x: np.ndarray | None = None
    energy4x: np.ndarray | None = None
    band4x: np.ndarray | None = None
    band_fraction: float | None = None
    edges1x: np.ndarray | None = None
    #: Words tesseract reads in the input upscaled 4x bicubic (images with text only).
    words4x: frozenset[str] | None = None


def reference_for(item: Item, rgba: np.ndarray) -> Reference:
    """Prepare the input and ground-truth images, Lab, edge band and seam mask of one item."""
    rgb1x = m.over_white(rgba)
    ref = Reference(
        rgb1x=rgb1x,
        lab1x=m.to_lab(rgb1x),
        alpha1x=rgba[:, :, 3],
        has_alpha=bool((rgba[:, :, 3] < 255).any()),
        interior4x=m.opaque_interior(rgba[:, :, 3], SCALE),
        deep4x=m.opaque_interior(rgba[:, :, 3], SCALE, margin=SCALE),
    )
    ref.edges1x = m.detail_edges(ref.lab1x)
    if item.text:
        ref.words4x = m.ocr_words(m.upscale_bicubic(rgb1x, SCALE))
    if item.gt4x is not None:
        with Image.open(item.gt4x) as image:
            gt = np.asarray(image.convert("RGBA"))
        ref.rgb4x = m.over_white(gt)
        ref.lab4x = m.to_lab(ref.rgb4x)
        ref.alpha4x = gt[:, :, 3]
        ref.energy4x = m.difference_energy_map(ref.lab4x)
        ref.band4x = m.edge_band(m.edge_pixels(ref.lab4x))
        ref.band_fraction = float(ref.band4x.mean())
    return ref


def score(item: Item, method: str, conversion: Conversion, ref: Reference) -> dict[str, Any]:
    """All metrics of one method on one item (None where a metric does not apply)."""
    row: dict[str, Any] = {key: None for key, *_ in METRICS}
    row["seconds"] = conversion.seconds
    row["peak_mb"] = conversion.peak_mb
    row.update(conversion.extra)
    if conversion.error:
        row["error"] = conversion.error
        return row
    width, height = item.width, item.height
    try:
        if conversion.svg is not None:
            svg = conversion.svg
            row["segments"] = m.svg_segments(svg)
            row["bytes"] = len(svg.encode("utf-8"))
            row["colors"] = len(m.svg_fill_colors(svg))
            out1x = render(svg, width, height)
            out4x = render(svg, width * SCALE, height * SCALE)
            rgb1x = m.over_white(out1x)
            lab1x = m.to_lab(rgb1x)
            row["de_1x"] = m.masked_mean(m.delta_e_map(lab1x, ref.lab1x))
            assert ref.edges1x is not None
            row["detail_recall"] = m.detail_recall(ref.edges1x, m.detail_edges(lab1x))
            if ref.words4x is not None:
                row["ocr_recall"] = m.ocr_recall(ref.words4x, m.ocr_words(m.over_white(out4x)))
            if ref.has_alpha:
                row["alpha_err_1x"] = m.alpha_error(out1x[:, :, 3], ref.alpha1x)
        else:
            assert conversion.raster4x is not None
            out4x = conversion.raster4x
        row["seams_4x"] = m.seam_pixels(out4x[:, :, 3], ref.interior4x)
        row["seams_4x_deep"] = m.seam_pixels(out4x[:, :, 3], ref.deep4x)
        if ref.lab4x is not None:
            rgb4x = m.over_white(out4x)
            lab4x = m.to_lab(rgb4x)
            de = m.delta_e_map(lab4x, ref.lab4x)
            row["de_4x"] = m.masked_mean(de)
            row["de_4x_edge"] = m.masked_mean(de, ref.band4x)
            row["sharpness_4x"] = m.sharpness(
                m.difference_energy_map(lab4x), ref.energy4x, ref.band4x
            )
            row["ssim_4x"] = m.ssim(rgb4x, ref.rgb4x)
            if ref.has_alpha:
                row["alpha_err_4x"] = m.alpha_error(out4x[:, :, 3], ref.alpha4x)
        if conversion.svg is not None and OUT_RENDERS is not None:
            _save_renders(item, method, out4x)
        if OUT_SHEET is not None:
            _save_cell(item, method, out4x)
    except Exception as exc:
        row["error"] = f"scoring failed: {_describe(exc)}"
        traceback.print_exc()
    return row


#: Where to save 4x renders (set by --save-renders), or None.
OUT_RENDERS: Path | None = None
#: Where to save contact-sheet cells (hard sets), or None.
OUT_SHEET: Path | None = None
#: Longest side of a contact-sheet cell, in pixels.
CELL = 288
#: The methods in a contact sheet's columns, after the input.
SHEET_METHODS = ["printjob", "vtracer-default", "vtracer-poster"]


def _cell_image(rgba: np.ndarray) -> Image.Image:
    """An image (RGBA) over a light checkerboard, fitted into a `CELL` square: enlarged
    without smoothing (pixels stay visible), reduced with LANCZOS."""
    height, width = rgba.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width]
    board = np.where(((ys // 8 + xs // 8) % 2)[..., None] == 0, 255, 228).astype(np.uint8)
    board = np.concatenate([np.repeat(board, 3, axis=2), np.full_like(board, 255)], axis=2)
    image = Image.alpha_composite(Image.fromarray(board), Image.fromarray(rgba)).convert("RGB")
    scale = CELL / max(width, height)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    resample = Image.Resampling.NEAREST if scale >= 1 else Image.Resampling.LANCZOS
    return image.resize(size, resample)


def _save_cell(item: Item, method: str, out4x: np.ndarray) -> None:
    assert OUT_SHEET is not None
    folder = OUT_SHEET / item.id
    folder.mkdir(parents=True, exist_ok=True)
    _cell_image(out4x).save(folder / f"{method}.png", compress_level=1)


def _save_renders(item: Item, method: str, out4x: np.ndarray) -> None:
    assert OUT_RENDERS is not None
    folder = OUT_RENDERS / item.id
    folder.mkdir(parents=True, exist_ok=True)
    Image.fromarray(out4x).save(folder / f"{method}-4x.png", compress_level=1)


# --------------------------------------------------------------------------- corpus run


def run_corpus(
    items: list[Item], methods: list[str], convert: Callable[..., Any] | None, jobs: int
) -> list[dict[str, Any]]:
    """Convert every item with every method (timed, one at a time), then score them all."""
    inputs = {item.id: item.data for item in items}
    timed = [name for name in methods if name != SOURCE]
    # Warm-up: first calls pay imports and caches; not measured.
    smallest = min(items, key=lambda item: item.width * item.height)
    for method in timed:
        run_method(method, smallest, inputs[smallest.id], convert)

    conversions: dict[tuple[str, str], Conversion] = {}
    for item in items:
        for method in methods:
            if method == SOURCE and item.source_svg is None:
                continue
            conversion = run_method(method, item, inputs[item.id], convert)
            conversions[item.id, method] = conversion
            status = conversion.error or f"{conversion.seconds or 0:.3f} s"
            print(f"  traced {item.id:16} {method:16} {status}", flush=True)
            if conversion.svg is not None:
                folder = OUT / "svg" / item.id
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{method}.svg").write_text(conversion.svg)

    global _CONVERSIONS
    _CONVERSIONS = conversions
    if jobs <= 1:
        return [score_item(item, methods) for item in items]
    # Scoring is memory-bound numpy work that threads do not speed up; forked workers
    # inherit the conversions and score whole items. Nothing is timed any more here.
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(score_item, items, [methods] * len(items)))


#: The conversions of the current run, for the scoring workers (inherited on fork).
_CONVERSIONS: dict[tuple[str, str], Conversion] = {}


def score_item(item: Item, methods: list[str]) -> dict[str, Any]:
    """Score every method's conversion of one item; the item's result record."""
    started = time.perf_counter()
    ref = reference_for(item, decode_rgba(item.data))
    names = [name for name in methods if (item.id, name) in _CONVERSIONS]
    rows = {name: score(item, name, _CONVERSIONS[item.id, name], ref) for name in names}
    print(f"  scored {item.id:16} {time.perf_counter() - started:.1f} s", flush=True)
    return {
        "id": item.id,
        "class": item.klass,
        "variant": item.variant,
        "file": item.path.name,
        "width": item.width,
        "height": item.height,
        "has_ground_truth": item.gt4x is not None,
        "has_alpha": ref.has_alpha,
        "true_colors": item.colors,
        "edge_band_fraction": ref.band_fraction,
        "methods": rows,
    }


def medians(results: list[dict[str, Any]], methods: list[str]) -> dict[str, dict[str, Any]]:
    """Per method and metric: the median over the items that have a value, and their count."""
    table: dict[str, dict[str, Any]] = {}
    for method in methods:
        row: dict[str, Any] = {}
        for key, *_ in METRICS:
            values = [
                r["methods"][method][key]
                for r in results
                if method in r["methods"] and r["methods"][method].get(key) is not None
            ]
            row[key] = statistics.median(values) if values else None
            row[f"{key}_n"] = len(values)
        table[method] = row
    return table


# --------------------------------------------------------------------------- scale


def scale_input(item: Item) -> tuple[bytes, int, int]:
    """A ~3 MP opaque PNG rendered by resvg from `item`'s source SVG, over white."""
    aspect = item.width / item.height
    width = round((SCALE_PIXELS * aspect) ** 0.5)
    height = round(width / aspect)
    svg = item.source_svg.read_text() if item.source_svg else ""
    rgba = render(svg, width, height)
    return png_bytes(m.over_white(rgba)), width, height


def photo_input(item: Item) -> tuple[bytes, int, int]:
    """A ~3 MP camera-like JPEG made from the corpus photo `item`, deterministically:
    over white, upscaled with Pillow LANCZOS to the largest size of its aspect within
    `SCALE_PIXELS`, plus Gaussian noise (`PHOTO_NOISE`, fixed seed), JPEG quality
    `PHOTO_QUALITY`."""
    with Image.open(item.path) as image:
        rgb = m.over_white(np.asarray(image.convert("RGBA")))
    aspect = item.width / item.height
    width = int((SCALE_PIXELS * aspect) ** 0.5)
    height = int(width / aspect)
    big = np.asarray(
        Image.fromarray(rgb).resize((width, height), Image.Resampling.LANCZOS), dtype=np.float64
    )
    big += np.random.default_rng(PHOTO_SEED).normal(0.0, PHOTO_NOISE, big.shape)
    noisy = np.clip(np.rint(big), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(noisy).save(buffer, format="JPEG", quality=PHOTO_QUALITY)
    return buffer.getvalue(), width, height


def scale_traces(
    item: Item, path: Path, data: bytes, width: int, height: int, convert: Callable[..., Any] | None
) -> dict[str, Any]:
    """One ~3 MP input traced by printjob and both vtracer presets: seconds, peak memory,
    size, colours, ΔE and seams at 1x (vs the input itself)."""
    rgba = decode_rgba(data)
    lab = m.to_lab(m.over_white(rgba))
    interior = m.opaque_interior(rgba[:, :, 3], 1)
    scaled = Item(item.id, item.klass, "white", path, width, height, None, None, None)
    traces: dict[str, Any] = {}
    for method in (ENGINE, VTRACER_DEFAULT, VTRACER_POSTER):
        if method == ENGINE and convert is None:
            continue
        conversion = run_method(method, scaled, data, convert)
        row: dict[str, Any] = {
            "seconds": conversion.seconds,
            "peak_mb": conversion.peak_mb,
            **conversion.extra,
        }
        if conversion.error:
            row["error"] = conversion.error
        elif conversion.svg is not None:
            row["segments"] = m.svg_segments(conversion.svg)
            row["bytes"] = len(conversion.svg.encode("utf-8"))
            row["colors"] = len(m.svg_fill_colors(conversion.svg))
            out = render(conversion.svg, width, height)
            row["de_1x"] = m.masked_mean(m.delta_e_map(m.to_lab(m.over_white(out)), lab))
            row["seams_1x"] = m.seam_pixels(out[:, :, 3], interior)
        traces[method] = row
        print(
            f"  scale trace {path.name:10} {method:16} {row.get('error') or row['seconds']}",
            flush=True,
        )
    return traces


def run_scale(
    items: list[Item], scale_id: str | None, convert: Callable[..., Any] | None
) -> dict[str, Any]:
    """The scale checks: a ~3 MP flat trace and a ~3 MP photo trace (all tracers), and a
    4500x5400 print PNG (ours)."""
    candidates = [i for i in items if i.source_svg is not None and i.klass == "flat"]
    if scale_id:
        candidates = [i for i in items if i.id == scale_id and i.source_svg is not None]
    if not candidates:
        return {"error": "no corpus item with a source SVG for the scale checks"}
    item = next((i for i in candidates if i.variant == "white"), candidates[0])
    data, width, height = scale_input(item)
    print(f"  scale input: {item.id} rendered at {width}x{height}", flush=True)
    traces = scale_traces(item, Path("scale.png"), data, width, height, convert)

    photo_item = next((i for i in items if i.id == PHOTO_SOURCE), None)
    photo: dict[str, Any]
    if photo_item is None:
        photo = {"error": f"no corpus item {PHOTO_SOURCE!r} for the photo scale check"}
    else:
        photo_data, photo_w, photo_h = photo_input(photo_item)
        print(f"  photo input: {photo_item.id} upscaled to {photo_w}x{photo_h}", flush=True)
        photo = {
            "source": photo_item.id,
            "width": photo_w,
            "height": photo_h,
            "bytes": len(photo_data),
            "traces": scale_traces(
                photo_item, Path("photo.jpg"), photo_data, photo_w, photo_h, convert
            ),
        }

    prints: dict[str, Any] = {}
    if convert is not None:
        for label, source in (
            (f"{item.id} ({item.width}x{item.height})", item.data),
            (f"{item.id} at {width}x{height}", data),
        ):
            row = prints[label] = print_png(convert, source)
            print(f"  print png from {label}: {row.get('error') or row['seconds']}", flush=True)
    return {
        "source": item.id,
        "width": width,
        "height": height,
        "traces": traces,
        "photo": photo,
        "print_png": prints,
    }


def print_png(convert: Callable[..., Any], data: bytes) -> dict[str, Any]:
    """Our engine writing a PNG at the print canvas (format png, size original)."""
    from printjob_core.model import PRINT_CANVAS, JobOptions, OutputFormat

    def job() -> Conversion:
        output = convert(data, JobOptions(format=OutputFormat.PNG))
        return Conversion(extra={"output": output})

    conversion = measured(job)
    row: dict[str, Any] = {"seconds": conversion.seconds, "peak_mb": conversion.peak_mb}
    if conversion.error:
        row["error"] = conversion.error
        return row
    output = conversion.extra["output"]
    with Image.open(io.BytesIO(output.data)) as image:
        row["png_size"] = list(image.size)
    row["reported_size"] = [output.width, output.height]
    row["bytes"] = len(output.data)
    row["canvas_ok"] = tuple(row["png_size"]) == PRINT_CANVAS
    return row


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    """One pass/fail line of the report."""

    name: str
    value: str
    threshold: str
    passed: bool | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "threshold": self.threshold,
            "pass": self.passed,
        }


def short_error(text: str) -> str:
    """An error message cut to fit a table cell (the Errors section has it in full)."""
    text = text.split(" (caused by")[0]
    return text if len(text) <= 60 else text[:57] + "…"


def _fmt(value: float | None, spec: str = "{:.3f}") -> str:
    return "n/a" if value is None else spec.format(value)


def _check(*values: float | None) -> bool:
    return all(v is not None for v in values)


def targets(
    results: list[dict[str, Any]], med: dict[str, dict[str, Any]], scale: dict[str, Any] | None
) -> list[Target]:
    """The product issue's targets for printjob, evaluated on this run."""
    ours = med.get(ENGINE, {})
    vt = med.get(VTRACER_DEFAULT, {})
    poster = med.get(VTRACER_POSTER, {})
    bic = med.get(BICUBIC, {})
    out: list[Target] = []

    edge, sharp, bic_edge = ours.get("de_4x_edge"), ours.get("sharpness_4x"), bic.get("de_4x_edge")
    out.append(
        Target(
            "median ΔE at 4x near edges below bicubic's",
            f"{_fmt(edge, '{:.2f}')} vs {_fmt(bic_edge, '{:.2f}')}",
            "< bicubic",
            edge < bic_edge if _check(edge, bic_edge) else None,
        )
    )
    out.append(
        Target(
            "median edge sharpness at 4x",
            _fmt(sharp),
            "0.9 … 1.1",
            0.9 <= sharp <= 1.1 if sharp is not None else None,
        )
    )
    de4, vt4 = ours.get("de_4x"), vt.get("de_4x")
    out.append(
        Target(
            "median ΔE at 4x at most half of vtracer-default's",
            f"{_fmt(de4, '{:.2f}')} vs {_fmt(vt4, '{:.2f}')}",
            "≤ 0.5 × vtracer-default",
            de4 <= 0.5 * vt4 if _check(de4, vt4) else None,
        )
    )
    de1, vt1 = ours.get("de_1x"), vt.get("de_1x")
    out.append(
        Target(
            "median ΔE at 1x no worse than vtracer-default's",
            f"{_fmt(de1, '{:.2f}')} vs {_fmt(vt1, '{:.2f}')}",
            "≤ vtracer-default",
            de1 <= vt1 if _check(de1, vt1) else None,
        )
    )
    seg, pseg = ours.get("segments"), poster.get("segments")
    out.append(
        Target(
            "median path segments at most vtracer-poster's",
            f"{_fmt(seg, '{:,.0f}')} vs {_fmt(pseg, '{:,.0f}')}",
            "≤ vtracer-poster",
            seg <= pseg if _check(seg, pseg) else None,
        )
    )
    seams = [
        r["methods"][ENGINE]["seams_4x"]
        for r in results
        if ENGINE in r["methods"] and r["methods"][ENGINE].get("seams_4x") is not None
    ]
    complete = len(seams) == len(results) and bool(seams)
    out.append(
        Target(
            "seam pixels at 4x, all images",
            f"{sum(seams):,}" + ("" if complete else f" ({len(seams)}/{len(results)} images)"),
            "0",
            (sum(seams) == 0) if complete else None if not seams else False,
        )
    )
    for r in results:
        if r["variant"] != "jpeg" and not r["file"].lower().endswith((".jpg", ".jpeg")):
            continue
        colors = r["methods"].get(ENGINE, {}).get("colors")
        limit = (r["true_colors"] or 0) + 2
        out.append(
            Target(
                f"colours on the JPEG input {r['file']}",
                _fmt(colors, "{:.0f}"),
                f"≤ {limit} (artwork {r['true_colors']} + 2)",
                colors <= limit if colors is not None else None,
            )
        )
    sec, vsec = ours.get("seconds"), vt.get("seconds")
    out.append(
        Target(
            "median tracing time at most twice vtracer-default's",
            f"{_fmt(sec)} s vs {_fmt(vsec)} s",
            "≤ 2 × vtracer-default",
            sec <= 2 * vsec if _check(sec, vsec) else None,
        )
    )
    if scale is not None and "traces" in scale:
        trace = scale["traces"].get(ENGINE, {})
        label = f"{scale['width']}x{scale['height']}"
        ok = "error" not in trace and trace.get("seconds") is not None
        out.append(
            Target(
                f"~3 MP trace ({label}) seconds",
                _fmt(trace.get("seconds")) if ok else short_error(trace.get("error", "not run")),
                "< 10 s",
                trace["seconds"] < 10 if ok else None if not trace else False,
            )
        )
        out.append(
            Target(
                f"~3 MP trace ({label}) peak memory, MB",
                _fmt(trace.get("peak_mb"), "{:.0f}") if ok else "n/a",
                "< 1024 MB",
                trace["peak_mb"] < 1024 if ok else None if not trace else False,
            )
        )
        photo = scale.get("photo") or {}
        trace = (photo.get("traces") or {}).get(ENGINE, {})
        error = photo.get("error") or trace.get("error")
        ok = error is None and trace.get("seconds") is not None
        label = f"{photo['width']}x{photo['height']}" if "width" in photo else "not made"
        out.append(
            Target(
                f"~3 MP photo trace ({label}) seconds",
                _fmt(trace.get("seconds")) if ok else short_error(error or "not run"),
                "< 10 s",
                trace["seconds"] < 10 if ok else None if not trace and not error else False,
            )
        )
        out.append(
            Target(
                f"~3 MP photo trace ({label}) peak memory, MB",
                _fmt(trace.get("peak_mb"), "{:.0f}") if ok else "n/a",
                "< 1024 MB",
                trace["peak_mb"] < 1024 if ok else None if not trace and not error else False,
            )
        )
        prints = scale.get("print_png") or {}
        first = next(iter(prints.items()), None)
        if first is not None:
            label, row = first
            ok = "error" not in row and bool(row.get("canvas_ok"))
            out.append(
                Target(
                    f"4500x5400 print PNG from {label}, seconds",
                    _fmt(row.get("seconds"))
                    if ok
                    else short_error(row.get("error", "wrong canvas size")),
                    "< 5 s",
                    row["seconds"] < 5 if ok else False,
                )
            )
            out.append(
                Target(
                    f"4500x5400 print PNG from {label}, peak memory, MB",
                    _fmt(row.get("peak_mb"), "{:.0f}") if ok else "n/a",
                    "< 1024 MB",
                    row["peak_mb"] < 1024 if ok else False,
                )
            )
    return out


def harness_checks(results: list[dict[str, Any]], med: dict[str, dict[str, Any]]) -> list[Target]:
    """Checks that the metrics themselves behave (perfect tracer, bicubic, vtracer)."""
    src = [
        r["methods"][SOURCE]
        for r in results
        if SOURCE in r["methods"] and r["methods"][SOURCE].get("de_4x") is not None
    ]
    out: list[Target] = []
    if src:
        worst = max(row["de_4x"] for row in src)
        sharp = [row["sharpness_4x"] for row in src if row.get("sharpness_4x") is not None]
        seams = sum(row.get("seams_4x") or 0 for row in src)
        out.append(Target("source-svg: worst mean ΔE at 4x", f"{worst:.3f}", "≤ 0.1", worst <= 0.1))
        out.append(
            Target(
                "source-svg: sharpness range",
                f"{min(sharp):.3f} … {max(sharp):.3f}",
                "0.98 … 1.02",
                min(sharp) >= 0.98 and max(sharp) <= 1.02,
            )
        )
        out.append(Target("source-svg: seam pixels", f"{seams:,}", "0", seams == 0))
    bic_sharp = med.get(BICUBIC, {}).get("sharpness_4x")
    if bic_sharp is not None:
        out.append(
            Target(
                "bicubic: median sharpness",
                f"{bic_sharp:.3f}",
                "≈ 0.26 (0.2 … 0.35)",
                0.2 <= bic_sharp <= 0.35,
            )
        )
    vt_edge = med.get(VTRACER_DEFAULT, {}).get("de_4x_edge")
    bic_edge = med.get(BICUBIC, {}).get("de_4x_edge")
    if vt_edge is not None and bic_edge is not None:
        out.append(
            Target(
                "vtracer-default: median ΔE near edges worse than bicubic's",
                f"{vt_edge:.2f} vs {bic_edge:.2f}",
                "> bicubic",
                vt_edge > bic_edge,
            )
        )
    return out


# --------------------------------------------------------------------------- report


def _cell(value: Any, spec: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, float) and not np.isfinite(value):
        return "–"
    return spec.format(value)


def _mark(passed: bool | None) -> str:
    return {True: "✅ pass", False: "❌ fail", None: "– not measured"}[passed]


def target_table(rows: list[Target]) -> str:
    lines = ["| Target | Measured | Threshold | Result |", "| --- | --- | --- | --- |"]
    lines += [f"| {t.name} | {t.value} | {t.threshold} | {_mark(t.passed)} |" for t in rows]
    return "\n".join(lines)


def medians_table(med: dict[str, dict[str, Any]], methods: list[str], count: int) -> str:
    """Medians per metric and method; `(n=…)` where a method has fewer images than another."""
    lines = [
        "| Metric | " + " | ".join(methods) + " |",
        "| --- |" + " ---: |" * len(methods),
    ]
    for key, title, spec, _ in METRICS:
        cells = []
        most = max((med[method].get(f"{key}_n", 0) for method in methods), default=count)
        for method in methods:
            value, n = med[method].get(key), med[method].get(f"{key}_n", 0)
            cell = _cell(value, spec)
            if value is not None and n < most:
                cell += f" (n={n})"
            cells.append(cell)
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def metric_tables(results: list[dict[str, Any]], methods: list[str], med: dict[str, Any]) -> str:
    parts = []
    for key, title, spec, lower in METRICS:
        if all(r["methods"].get(mm, {}).get(key) is None for r in results for mm in methods):
            continue
        better = {True: " (lower is better)", False: " (higher is better)", None: ""}[lower]
        lines = [
            f"### {title}{better}",
            "",
            "| Image | " + " | ".join(methods) + " |",
            "| --- |" + " ---: |" * len(methods),
        ]
        for r in results:
            cells = [_cell(r["methods"].get(mm, {}).get(key), spec) for mm in methods]
            lines.append(f"| {r['id']} ({r['variant']}) | " + " | ".join(cells) + " |")
        cells = [_cell(med[mm].get(key), spec) for mm in methods]
        lines.append("| **median** | " + " | ".join(f"**{c}**" for c in cells) + " |")
        if key.startswith("seams"):
            totals = []
            for mm in methods:
                values = [r["methods"].get(mm, {}).get(key) for r in results]
                present = [v for v in values if v is not None]
                totals.append(_cell(sum(present) if present else None, spec))
            lines.append("| **total** | " + " | ".join(f"**{c}**" for c in totals) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def errors_section(results: list[dict[str, Any]], scale: dict[str, Any] | None) -> str:
    """Every conversion or scoring error of the run, in full."""
    lines = []
    for r in results:
        for method, row in r["methods"].items():
            if row.get("error"):
                lines.append(f"- {r['id']} / {method}: {row['error']}")
    if scale:
        for method, row in (scale.get("traces") or {}).items():
            if row.get("error"):
                lines.append(f"- scale trace / {method}: {row['error']}")
        photo = scale.get("photo") or {}
        if photo.get("error"):
            lines.append(f"- photo scale check: {photo['error']}")
        for method, row in (photo.get("traces") or {}).items():
            if row.get("error"):
                lines.append(f"- photo scale trace / {method}: {row['error']}")
        for label, row in (scale.get("print_png") or {}).items():
            if row.get("error"):
                lines.append(f"- print PNG from {label}: {row['error']}")
    return "\n".join(lines)


def trace_table(traces: dict[str, Any]) -> list[str]:
    """One ~3 MP input's rows per tracer (the scale section's tables)."""
    lines = [
        "| Tracer | Seconds | Peak MB | Segments | SVG bytes | Colours | ΔE 1x | Seams 1x |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for method, row in traces.items():
        if row.get("error"):
            lines.append(
                f"| {method} | {_cell(row.get('seconds'), '{:.2f}')} | | "
                f"error: {short_error(row['error'])} | | | | |"
            )
            continue
        lines.append(
            f"| {method} | {_cell(row.get('seconds'), '{:.2f}')} | "
            f"{_cell(row.get('peak_mb'), '{:.0f}')} | {_cell(row.get('segments'), '{:,}')} | "
            f"{_cell(row.get('bytes'), '{:,}')} | {_cell(row.get('colors'), '{}')} | "
            f"{_cell(row.get('de_1x'), '{:.2f}')} | {_cell(row.get('seams_1x'), '{:,}')} |"
        )
    return lines


def scale_section(scale: dict[str, Any] | None) -> str:
    if not scale:
        return "Not run (`--skip-scale`)."
    if "error" in scale:
        return scale["error"]
    lines = [
        f"Input: `{scale['source']}` rendered by resvg from its source SVG at "
        f"{scale['width']}x{scale['height']} ({scale['width'] * scale['height'] / 1e6:.1f} MP), "
        "over white, as PNG.",
        "",
        *trace_table(scale["traces"]),
    ]
    photo = scale.get("photo") or {}
    lines.append("")
    if "error" in photo:
        lines.append(f"Photo: {photo['error']}")
    elif photo:
        lines += [
            f"Photo: `{photo['source']}` upscaled with Pillow LANCZOS to "
            f"{photo['width']}x{photo['height']} "
            f"({photo['width'] * photo['height'] / 1e6:.1f} MP), Gaussian noise σ "
            f"{PHOTO_NOISE:g}, JPEG quality {PHOTO_QUALITY} ({photo['bytes']:,} bytes).",
            "",
            *trace_table(photo["traces"]),
        ]
    prints = scale.get("print_png") or {}
    if prints:
        lines += [
            "",
            "printjob writing a print PNG (format png, size original → 4500x5400 canvas):",
            "",
            "| Input | Seconds | Peak MB | PNG size | PNG bytes |",
            "| --- | ---: | ---: | --- | ---: |",
        ]
        for label, row in prints.items():
            if row.get("error"):
                lines.append(
                    f"| {label} | {_cell(row.get('seconds'), '{:.2f}')} | | "
                    f"error: {short_error(row['error'])} | |"
                )
                continue
            size = "x".join(str(v) for v in row.get("png_size", []))
            lines.append(
                f"| {label} | {row['seconds']:.2f} | {row['peak_mb']:.0f} | {size} | "
                f"{row['bytes']:,} |"
            )
        lines += ["", "The target applies to the first row; the second is for information."]
    return "\n".join(lines)


def environment() -> dict[str, Any]:
    versions = {}
    for package in ("numpy", "scipy", "pillow", "scikit-image", "vtracer", "resvg-py"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": [round(v, 2) for v in os.getloadavg()],
        "packages": versions,
    }


MARK_BEGIN = "<!-- engine-bench:begin (generated by bench/engine_bench.py) -->"
MARK_END = "<!-- engine-bench:end -->"

INTRO = f"""# Engine benchmark

How printjob's tracer compares with vtracer and with no vectorisation at all, on the shared
corpus (`shared/corpus/manifest.json`). The figures after this introduction are written
by the benchmark; rerun it from the repository root with

    .venv/bin/python bench/engine_bench.py

(a few minutes; `--only ID[,ID]`, `--skip-scale` and `--no-write-docs` for quick runs,
`--save-renders` to keep the 4x renders in `bench/out/renders/`). Machine-readable results
go to `bench/out/engine.json`, the SVGs of every method to `bench/out/svg/`.

The hard images of issue #12 (small text, hairlines, photos, gradients, JPEG'd pixel art,
stamps) have sections of their own, "Hard images (LABEL)", near the end of this page:
`--set hard,own [--label LABEL]` runs the public hard set (`shared/corpus-hard`) and
printjob's own (`bench/hard_images.py`) with printjob and both vtracer presets, adds detail
recall and OCR word recall, and draws a contact sheet per set (`bench/out/contact-*.png`:
input, printjob, vtracer default, vtracer poster, one row per image).

## Method

All methods run in one Python process, one conversion at a time:

- **printjob**: `printjob_adapters.tracing.convert` with `JobOptions(format=svg)`
  (size original, automatic colours).
- **vtracer-default**: vtracer (PyPI) `convert_raw_image_to_svg` on the image file, with
  its defaults. **vtracer-poster**: the same with colormode color, color_precision 5,
  layer_difference 32, filter_speckle 8.
- **bicubic**: Pillow BICUBIC 4x upscale of the input (the "no vectorisation" baseline; at
  1x it is the input itself, so it has no 1x figures).
- **source-svg**: the corpus's own source SVG, i.e. a perfect tracer. It validates the
  metrics (ΔE ≈ 0, sharpness ≈ 1, no seams) and is not a competitor. For an opaque input
  a white background rectangle is added, as the corpus rendered those over white.

Every SVG is rendered by one renderer, resvg (resvg_py, the renderer of the ground
truth), at 1x (input width) and at 4x (4 × input width), RGBA, with `dpi=300` so that
printjob's size in pt (at 300 dpi) is exactly the input's pixels (resvg_py's default dpi
of 0 rejects physical units; at 96 dpi the canvas would be fractional and rounded up).
Timing and memory cover the conversion only, never rendering or scoring: all
conversions run first, one at a time in the main process; each tracer first runs once
untimed (on the smallest image) so imports and first-call costs are not counted.
Scoring then runs in `--jobs` forked worker processes. The machine may be shared, so
the load average at the start is reported with the results; compare times within one
run only.

## Metric definitions

- **Colour** is compared over white: every image (input, ground truth, render) with alpha
  is composited over opaque white (straight alpha, rounded to 8 bits), then converted to
  CIELAB D65 (`skimage.color.rgb2lab`); ΔE is CIEDE2000 (`deltaE_ciede2000`) per pixel,
  averaged. Inputs with alpha additionally get the **alpha error**: mean |α − α_ref| / 255
  at 1x (vs the input) and at 4x (vs the ground truth).
- **ΔE at 1x** is vs the input image itself (for the JPEG input that includes its
  artefacts); **ΔE at 4x** is vs the 4x ground truth (`gt4x`), where one exists.
- **Edge band** (4x): ground-truth edge pixels are those whose Lab gradient magnitude —
  Sobel per L, a, b channel divided by 8, i.e. Lab units per pixel, Euclidean over the
  six components — exceeds {m.EDGE_THRESHOLD} (EDGE_THRESHOLD); the band is every
  pixel within Euclidean distance {m.EDGE_RADIUS:g} (EDGE_RADIUS, one input pixel) of an
  edge pixel. Smooth gradients stay below the threshold. `edge_band_fraction` in the
  JSON gives the band's share of each image (3–5 % on this corpus).
- **Edge sharpness** (4x): gradient energy in the edge band divided by the ground truth's
  in the same band. Gradient energy = Σ over band pixels of the squared forward
  differences to the right and down neighbours, summed over L, a and b. Forward
  differences are used because a Sobel kernel smooths a one-pixel step over two pixels
  and so rewards blur: with Sobel, bicubic scores ≈ 0.43 instead of ≈ 0.26. A blurred
  edge scores well below 1; ringing or over-sharpening scores above 1.
- **SSIM** (4x): `skimage.metrics.structural_similarity` on the over-white RGB images,
  `channel_axis=2`, `data_range=255`, default 7 × 7 window.
- **Seam pixels** (4x): the input's opaque area (α = 255), upscaled nearest to 4x and
  eroded by one 4x pixel (3 × 3 square; outside the canvas counts as transparent), is
  where the rendered output must be opaque; every pixel there with
  α < {m.SEAM_ALPHA}/255 (0.99) is a seam pixel. Gaps between layers, holes and a strip
  left uncovered along the canvas edge count; the anti-aliased outline of the artwork
  (and the outermost 4x pixel row of the canvas, where resvg's anti-aliasing of a shape
  touching the edge can legitimately be partial) does not.
- **Seams, deep**: the same with the opaque area eroded by one input pixel (4 output
  pixels) instead: outline inaccuracies drop out and only real holes and gaps remain.
  Not a target; it tells a gap from an outline that cuts slightly inside.
- **Path segments**: every drawing segment in `<path d>` data — each L/l, H/h, V/v,
  C/c, S/s, Q/q, T/t, A/a segment including implicit repeats, each implicit lineto after a
  moveto's first pair, and each Z/z (the closing line) — by a tokenizer that follows the
  SVG path grammar (numbers run together, compact arc flags). Only for reference SVGs:
  polygon n, polyline n − 1, rect 4, circle/ellipse 4, line 1.
- **SVG bytes**: UTF-8 size of the SVG as produced.
- **Colours**: distinct fill (and, for reference SVGs, stroke) colours of painted shapes,
  with inheritance through groups; a gradient counts as one colour.
- **Seconds**: wall clock of the conversion call (decode + trace + write SVG), best of
  up to `--repeat` (3) runs, fewer when the runs so far took a second or more. The timed
  runs follow one untimed run, are not sampled for memory (the sampler thread would
  take the interpreter lock from Python code and not from one native call) and start
  from a warm heap, as a worker's calls do.
- **Peak memory**: highest resident set size during that first, untimed call, sampled
  every 2 ms, minus the RSS at its start (after `malloc_trim`). RSS
  rather than tracemalloc, which misses native allocations (vtracer and resvg are Rust)
  and slows Python code down.
- **Scale checks**: one flat corpus image (by default the first "white" one with a
  source SVG) rendered by resvg from its source SVG at about 3 MP (1732 x 1732 for a
  square), over white, as PNG; and a photo: the corpus photo `{PHOTO_SOURCE}` over white,
  upscaled with Pillow LANCZOS to the largest size of its aspect within 3 MP (2123 x
  1412), plus Gaussian noise of σ {PHOTO_NOISE:g} (8-bit levels, fixed seed), saved as
  JPEG quality {PHOTO_QUALITY}, so that it looks like a camera photo (texture and noise
  everywhere) rather than a smooth upscale. Both are traced by printjob and both vtracer
  presets (seconds, peak memory, size, ΔE and seams at 1x). Also printjob writing a PNG
  with size original (the 4500 x 5400 print canvas) from the flat corpus image itself,
  and, for information, from its 3 MP rendering.
- **Detail recall** (1x): the input and the 1x render, both over white in CIELAB, get the
  same edge detector: a pixel is an edge where its Lab gradient magnitude (Sobel per
  channel / 8, as for the edge band) exceeds {m.DETAIL_THRESHOLD:g} (DETAIL_THRESHOLD; high
  enough that JPEG ringing and sensor noise mostly are not edges). Detail recall is the
  share of the input's edge pixels with a render edge pixel within {m.DETAIL_TOLERANCE} px
  (3 × 3 neighbourhood): a lost hairline, dot or letter loses its edge pixels; an edge
  moved by one pixel still counts.
- **OCR word recall** (4x, images whose manifest says `"text": true`): tesseract (Debian
  tesseract-ocr, eng, `--psm 11`) reads the input upscaled 4x bicubic and the 4x render,
  both over white; words are lower-cased, reduced to letters and digits, and words of one
  character dropped (`tests/unit/engine/ocr.py`, shared with the tests). The recall is the
  share of the input's words also read in the render.
- **Medians** are over the images where a metric exists (4x metrics: the images with
  ground truth); `(n=…)` marks a median over fewer images than the others.
"""


def render_markdown(report: dict[str, Any], methods: list[str]) -> str:
    """The generated part of docs/engine.md."""
    results, med = report["results"], report["medians"]
    env = report["environment"]
    packages = ", ".join(f"{k} {v}" for k, v in env["packages"].items())
    count = len(results)
    parts = [
        f"Run {report['generated']} on {env['cpus']} CPU(s) (load average at start "
        f"{', '.join(str(v) for v in env['load_average'])}), Python {env['python']}; "
        f"{packages}. Engine: {report['engine']}. "
        f"EDGE_THRESHOLD = {m.EDGE_THRESHOLD}, EDGE_RADIUS = {m.EDGE_RADIUS}, "
        f"SEAM_ALPHA = {m.SEAM_ALPHA}.",
        "## Targets",
        "printjob's value first, then the method it is compared with.",
        target_table([Target(**_target_args(t)) for t in report["targets"]]),
        "## Harness checks",
        target_table([Target(**_target_args(t)) for t in report["harness_checks"]]),
        "## Medians",
        medians_table(med, methods, count),
        "## Scale",
        scale_section(report.get("scale")),
        "## Per image",
        metric_tables(results, methods, med),
    ]
    errors = errors_section(results, report.get("scale"))
    if errors:
        parts += ["## Errors", errors]
    return "\n\n".join(parts) + "\n"


def _target_args(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": row["name"],
        "value": row["value"],
        "threshold": row["threshold"],
        "passed": row["pass"],
    }


def _sections(text: str) -> list[tuple[str, str]]:
    """A markdown text as (heading line, section text) pairs, split before every `#` and
    `##` heading (the text before the first heading has the heading "")."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines(keepends=True):
        if line.startswith(("# ", "## ")):
            sections.append((line.strip(), []))
        sections[-1][1].append(line)
    return [(heading, "".join(lines)) for heading, lines in sections if lines]


def merged_intro(head: str) -> str:
    """The intro for docs/engine.md: `INTRO`'s sections replace theirs in `head` (the text
    before the generated part), and sections a colleague wrote there stay where they are."""
    fresh = dict(_sections(INTRO))
    kept = []
    for heading, text in _sections(head):
        kept.append(fresh.pop(heading, text))
    kept += fresh.values()
    return "".join(section.rstrip("\n") + "\n\n" for section in kept).rstrip("\n") + "\n"


def write_docs(generated: str) -> None:
    """Write docs/engine.md: the intro, then the generated part between its markers.

    Text a colleague added after the end marker, and sections of their own among the
    intro's, are kept.
    """
    head, tail = "", ""
    if DOCS.exists():
        text = DOCS.read_text()
        if MARK_BEGIN in text and MARK_END in text:
            head = text.split(MARK_BEGIN, 1)[0]
            tail = text.split(MARK_END, 1)[1]
    intro = merged_intro(head) if head.strip() else INTRO
    DOCS.write_text(f"{intro}\n{MARK_BEGIN}\n\n{generated}\n{MARK_END}{tail or chr(10)}")


# --------------------------------------------------------------------------- hard sets

HARD_METHODS = [ENGINE, VTRACER_DEFAULT, VTRACER_POSTER]
#: The metrics of the hard-set tables: key, column heading, format.
HARD_COLUMNS: list[tuple[str, str, str]] = [
    ("de_1x", "ΔE2000 1x", "{:.2f}"),
    ("detail_recall", "detail recall", "{:.2f}"),
    ("ocr_recall", "OCR words", "{:.2f}"),
    ("colors", "colours", "{:.0f}"),
    ("segments", "segments", "{:,.0f}"),
    ("seconds", "seconds", "{:.2f}"),
    ("peak_mb", "peak MB", "{:.0f}"),
]
#: The medians of the hard-set summary: the columns above and the 4x metrics.
HARD_MEDIANS = [
    *(key for key, _, _ in HARD_COLUMNS),
    "de_4x",
    "ssim_4x",
    "sharpness_4x",
    "bytes",
]
HARD_BEGIN = "<!-- engine-bench-hard:{label}:begin (generated by bench/engine_bench.py) -->"
HARD_END = "<!-- engine-bench-hard:{label}:end -->"


def set_items(name: str, args: argparse.Namespace) -> list[Item]:
    """The items of one set; the own set is drawn first (bench/hard_images.py)."""
    if name == "corpus":
        return load_corpus(args.corpus)[0]
    if name == "hard":
        return load_corpus(args.hard)[0]
    if name == "own":
        hard_images.build(args.own)
        return load_corpus(args.own)[0]
    raise ValueError(name)


def run_hard_set(
    name: str, items: list[Item], convert: Callable[..., Any] | None, jobs: int
) -> dict[str, Any]:
    """Trace, score and draw the contact sheet of one hard set."""
    global OUT_SHEET
    methods = HARD_METHODS if convert is not None else HARD_METHODS[1:]
    OUT_SHEET = OUT / "sheets" / name
    for item in items:
        (OUT_SHEET / item.id).mkdir(parents=True, exist_ok=True)
        _cell_image(decode_rgba(item.data)).save(OUT_SHEET / item.id / "input.png")
    print(f"{name}: {len(items)} images, methods: {', '.join(methods)}", flush=True)
    results = run_corpus(items, methods, convert, jobs)
    for r, item in zip(results, items, strict=True):
        r["kind"] = item.kind
        r["text"] = item.text
    sheet = contact_sheet(name, results)
    OUT_SHEET = None
    print(f"  contact sheet {sheet}", flush=True)
    return {
        "results": results,
        "medians": medians(results, HARD_METHODS),
        "sheet": str(sheet.relative_to(ROOT)),
    }


def contact_sheet(name: str, results: list[dict[str, Any]]) -> Path:
    """input | printjob | vtracer default | vtracer poster, one labelled row per image."""
    from PIL import ImageDraw, ImageFont

    assert OUT_SHEET is not None
    font_path = hard_images.FONTS / "DejaVuSans.ttf"
    font = ImageFont.truetype(str(font_path), 13)
    small = ImageFont.truetype(str(font_path), 11)
    columns = ["input", *SHEET_METHODS]
    label_width, caption, pad = 170, 30, 8
    width = label_width + len(columns) * (CELL + pad)
    header = 26
    sheet = Image.new("RGB", (width, header + len(results) * (CELL + caption + pad)), "white")
    draw = ImageDraw.Draw(sheet)
    for index, column in enumerate(columns):
        draw.text((label_width + index * (CELL + pad), 6), column, fill="black", font=font)
    for row, r in enumerate(results):
        top = header + row * (CELL + caption + pad)
        draw.text((6, top + 4), r["id"], fill="black", font=font)
        draw.text((6, top + 22), f"{r.get('kind', '')} ({r['variant']})", fill="#555", font=small)
        draw.text((6, top + 38), f"{r['width']}x{r['height']}", fill="#555", font=small)
        for index, column in enumerate(columns):
            left = label_width + index * (CELL + pad)
            path = OUT_SHEET / r["id"] / f"{column}.png"
            if path.exists():
                with Image.open(path) as cell:
                    sheet.paste(cell.convert("RGB"), (left, top))
            scores = r["methods"].get(column)
            if scores is not None:
                text = (
                    f"ΔE {_cell(scores.get('de_1x'), '{:.1f}')}  det "
                    f"{_cell(scores.get('detail_recall'), '{:.2f}')}  ocr "
                    f"{_cell(scores.get('ocr_recall'), '{:.2f}')}\n"
                    f"{_cell(scores.get('colors'), '{:.0f}')} col  "
                    f"{_cell(scores.get('segments'), '{:,.0f}')} seg  "
                    f"{_cell(scores.get('seconds'), '{:.2f}')} s"
                )
                if scores.get("error"):
                    text = "error: " + str(scores["error"])[:40]
                draw.multiline_text((left, top + CELL + 1), text, fill="#222", font=small)
    path = OUT / f"contact-{name}.png"
    sheet.save(path, optimize=True)
    return path


def _three(row: dict[str, Any], key: str, spec: str) -> str:
    """One metric of the three methods in one cell: printjob / vtracer default / poster."""
    return " / ".join(_cell(row["methods"].get(mm, {}).get(key), spec) for mm in HARD_METHODS)


def hard_set_markdown(name: str, title: str, run: dict[str, Any]) -> str:
    results, med = run["results"], run["medians"]
    lines = [f"### {title}", ""]
    lines += ["| Median | " + " | ".join(HARD_METHODS) + " |"]
    lines += ["| --- |" + " ---: |" * len(HARD_METHODS)]
    titles = {key: (heading, spec) for key, heading, spec, _ in METRICS}
    for key in HARD_MEDIANS:
        heading, spec = titles[key]
        cells = []
        for mm in HARD_METHODS:
            value, n = med[mm].get(key), med[mm].get(f"{key}_n", 0)
            cells.append(_cell(value, spec) + (f" (n={n})" if value is not None else ""))
        lines.append(f"| {heading} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Per image (each cell: {' / '.join(HARD_METHODS)}; contact sheet `{run['sheet']}`):",
        "",
    ]
    lines += ["| Image | kind | " + " | ".join(h for _, h, _ in HARD_COLUMNS) + " |"]
    lines += ["| --- | --- |" + " ---: |" * len(HARD_COLUMNS)]
    for r in results:
        true = f", {r['true_colors']} colours" if r.get("true_colors") else ""
        cells = [_three(r, key, spec) for key, _, spec in HARD_COLUMNS]
        lines.append(f"| {r['id']} | {r.get('kind', '')}{true} | " + " | ".join(cells) + " |")
    errors = [
        f"- {r['id']} {mm}: {short_error(row['error'])}"
        for r in results
        for mm, row in r["methods"].items()
        if row.get("error")
    ]
    if errors:
        lines += ["", "Errors:", "", *errors]
    return "\n".join(lines)


SET_TITLES = {
    "hard": "Public hard set (`shared/corpus-hard`)",
    "own": "Own hard set (`bench/hard_images.py`)",
}


def hard_markdown(
    label: str, runs: dict[str, dict[str, Any]], env: dict[str, Any], engine: str
) -> str:
    packages = ", ".join(f"{k} {v}" for k, v in env["packages"].items())
    parts = [
        f"## Hard images ({label})",
        f"Generated by `bench/engine_bench.py --set {','.join(runs)} --label {label}` on "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, engine as of {git_revision()}, "
        f"{env['cpus']} CPU(s) shared (load average at start "
        f"{', '.join(str(v) for v in env['load_average'])}: times are noisy, compare "
        f"within one run); {packages}. Engine: {engine}. Methods: printjob (automatic "
        f"colours), vtracer default, vtracer poster. Detail recall: input edge pixels "
        f"(Lab Sobel / 8 above {m.DETAIL_THRESHOLD:g}) with an edge of the 1x render within "
        f"{m.DETAIL_TOLERANCE} px. OCR words: tesseract (psm 11) on the 4x render over "
        f"white against the words it reads in the input upscaled 4x bicubic, for images "
        f"with text. ΔE2000 at 1x against the input (over white). `(n=…)`: images with "
        f"the metric.",
    ]
    for name, run in runs.items():
        title = f"{SET_TITLES.get(name, name)}, {len(run['results'])} images"
        parts.append(hard_set_markdown(name, title, run))
    return "\n\n".join(parts)


def git_revision() -> str:
    """The last commit that changed the engine (or its adapter): what the figures are of."""
    import subprocess

    engine_paths = ["src/printjob_adapters/engine", "src/printjob_adapters/tracing.py"]
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s", "--", *engine_paths],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "an unknown revision"
    return f"`{done.stdout.strip()[:72]}`"


def write_hard_docs(label: str, generated: str) -> None:
    """Put the hard-image section of `label` into docs/engine.md: replaced between its own
    markers when there, else appended (a baseline stays beside a later run's figures)."""
    begin, end = HARD_BEGIN.format(label=label), HARD_END.format(label=label)
    block = f"{begin}\n\n{generated}\n\n{end}"
    text = DOCS.read_text() if DOCS.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOCS.write_text(text)


# --------------------------------------------------------------------------- main


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; see the module docstring and `--help`."""
    global OUT_RENDERS, REPEAT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="corpus item id(s), comma-separated")
    parser.add_argument("--skip-scale", action="store_true", help="skip the scale checks")
    parser.add_argument("--no-write-docs", action="store_true", help="leave docs/engine.md")
    parser.add_argument("--save-renders", action="store_true", help="keep 4x PNGs in bench/out")
    parser.add_argument("--methods", help=f"comma-separated subset of {','.join(METHODS)}")
    parser.add_argument("--scale-source", help="corpus id rendered for the 3 MP check")
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes for scoring (conversions always run one at a time)",
    )
    parser.add_argument(
        "--repeat", type=int, default=REPEAT, help="timed runs per conversion (best kept)"
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--set",
        default="corpus",
        help="corpus (default), hard (shared/corpus-hard), own (bench/hard_images.py), "
        "all, or a comma-separated list",
    )
    parser.add_argument("--hard", type=Path, default=HARD_CORPUS, help="the public hard set")
    parser.add_argument("--own", type=Path, default=OWN_CORPUS, help="where to draw the own set")
    parser.add_argument(
        "--label",
        default="baseline",
        help="names the docs/engine.md section of the hard sets: '## Hard images (LABEL)'",
    )
    args = parser.parse_args(argv)
    chosen = [name for chunk in args.set.split(",") for name in chunk.split() if name]
    if "all" in chosen:
        chosen = ["corpus", "hard", "own"]
    unknown_sets = [name for name in chosen if name not in SETS]
    if unknown_sets or not chosen:
        parser.error(f"--set: choose from {', '.join(SETS)}")
    if chosen != ["corpus"]:
        return main_hard(args, [name for name in chosen if name != "corpus"], "corpus" in chosen)

    REPEAT = args.repeat
    OUT.mkdir(parents=True, exist_ok=True)
    if args.save_renders:
        OUT_RENDERS = OUT / "renders"

    items, _ = load_corpus(args.corpus)
    if args.only:
        wanted = {i for chunk in args.only for i in chunk.split(",") if i}
        unknown = wanted - {item.id for item in items}
        if unknown:
            parser.error(f"unknown corpus id(s): {', '.join(sorted(unknown))}")
        items = [item for item in items if item.id in wanted]
    methods = args.methods.split(",") if args.methods else list(METHODS)

    convert, engine_note = engine_convert()
    print(engine_note, flush=True)
    if convert is None:
        print("NOTE: running without printjob; its rows stay empty.", flush=True)
        methods = [name for name in methods if name != ENGINE]

    env = environment()  # before the run, so the load average is that of the others
    started = time.perf_counter()
    print(f"corpus: {len(items)} images, methods: {', '.join(methods)}", flush=True)
    results = run_corpus(items, methods, convert, args.jobs)
    shown = [name for name in METHODS if name in methods or name == ENGINE]
    for r in results:
        r["methods"].setdefault(ENGINE, {key: None for key, *_ in METRICS})
    med = medians(results, shown)
    scale = None if args.skip_scale else run_scale(items_all(args), args.scale_source, convert)
    report = {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "environment": env,
        "engine": engine_note,
        "definitions": {
            "edge_threshold": m.EDGE_THRESHOLD,
            "edge_radius": m.EDGE_RADIUS,
            "seam_alpha": m.SEAM_ALPHA,
            "scale": SCALE,
            "peak_mb": "peak RSS above the RSS at the start of the call, sampled every 2 ms",
        },
        "methods": shown,
        "results": results,
        "medians": med,
        "targets": [t.as_dict() for t in targets(results, med, scale)],
        "harness_checks": [t.as_dict() for t in harness_checks(results, med)],
        "scale": scale,
        "seconds_total": None,
    }
    report["seconds_total"] = round(time.perf_counter() - started, 1)
    (OUT / "engine.json").write_text(json.dumps(_jsonable(report), indent=1, ensure_ascii=False))
    print()
    print(target_table([Target(**_target_args(t)) for t in report["targets"]]))
    print()
    print(target_table([Target(**_target_args(t)) for t in report["harness_checks"]]))
    print()
    print(medians_table(med, shown, len(results)))
    print()
    print(scale_section(scale))
    print(f"\nwrote {OUT / 'engine.json'} in {report['seconds_total']} s")
    if args.no_write_docs or args.only or args.methods:
        print("docs/engine.md left as it is (partial run or --no-write-docs)")
    else:
        write_docs(render_markdown(report, shown))
        print(f"wrote {DOCS}")
    return 0


def main_hard(args: argparse.Namespace, names: list[str], with_corpus: bool) -> int:
    """The hard sets (and the corpus first when asked): tables, contact sheets, docs."""
    global REPEAT
    wanted = {i for chunk in args.only or [] for i in chunk.split(",") if i}
    if with_corpus:
        corpus_ids = {item.id for item in load_corpus(args.corpus)[0]}
        only = sorted(wanted & corpus_ids)
        if only or not wanted:
            status = main([*_corpus_argv(args), *(["--only", ",".join(only)] if only else [])])
            if status:
                return status
    REPEAT = args.repeat
    OUT.mkdir(parents=True, exist_ok=True)
    convert, engine_note = engine_convert()
    print(engine_note, flush=True)
    env = environment()
    runs: dict[str, dict[str, Any]] = {}
    for name in names:
        items = set_items(name, args)
        if wanted:
            items = [item for item in items if item.id in wanted]
        if items:
            runs[name] = run_hard_set(name, items, convert, args.jobs)
    report = {"environment": env, "engine": engine_note, "sets": runs}
    (OUT / "engine-hard.json").write_text(
        json.dumps(_jsonable(report), indent=1, ensure_ascii=False)
    )
    generated = hard_markdown(args.label, runs, env, engine_note)
    print()
    print(generated)
    if args.no_write_docs or wanted:
        print("docs/engine.md left as it is (partial run or --no-write-docs)")
    else:
        write_hard_docs(args.label, generated)
        print(f"wrote {DOCS} (## Hard images ({args.label}))")
    return 0


def _corpus_argv(args: argparse.Namespace) -> list[str]:
    """The command line of the corpus part of a `--set all` run."""
    argv = ["--set", "corpus", "--corpus", str(args.corpus), "--jobs", str(args.jobs)]
    argv += ["--repeat", str(args.repeat)]
    for flag, on in (
        ("--skip-scale", args.skip_scale),
        ("--no-write-docs", args.no_write_docs),
        ("--save-renders", args.save_renders),
    ):
        if on:
            argv.append(flag)
    return argv


def items_all(args: argparse.Namespace) -> list[Item]:
    """All corpus items (the scale check picks its source regardless of --only)."""
    return load_corpus(args.corpus)[0]


if __name__ == "__main__":
    sys.exit(main())
