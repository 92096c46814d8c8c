"""The quantise-and-trace engine: raster image in, print file (SVG, PDF, EPS, PNG) out.

A library of its own: it knows nothing of jobs, accounts or credits, and imports nothing
of printjob's outside this package. Tracing an image to an SVG:

    from printjob_adapters.engine import TraceOptions, trace
    svg = trace(Path("logo.png").read_bytes(), TraceOptions(colors=4)).data

Layers, each importing only those below it:

    pipeline                         decode -> segment -> vectorise -> place -> write
    writers, vectorise               the files; tracing a `Segmentation` to `VectorArt`
    segmentation                     pixels to a label map over flat colours
    (their steps)                    stacking, cleanup, curves, subpixel, quantise, ...
    decode, canvas, vector           bytes to pixels, the canvas, the traced art
    progress, options, errors        what a caller passes in and gets back

`printjob_adapters.tracing` maps the job service's options, phases and errors onto these.
"""

from __future__ import annotations

from printjob_adapters.engine.decode import ImageHeader, decode, probe
from printjob_adapters.engine.errors import (
    Cancelled,
    EngineError,
    ImageTooLarge,
    TracingFailed,
    UnsupportedImage,
)
from printjob_adapters.engine.options import (
    Background,
    ImageLimits,
    OutputFormat,
    Size,
    TraceOptions,
)
from printjob_adapters.engine.pipeline import TraceResult, trace
from printjob_adapters.engine.progress import CancelCheck, ProgressCallback, Stage

__all__ = [
    "Background",
    "CancelCheck",
    "Cancelled",
    "EngineError",
    "ImageHeader",
    "ImageLimits",
    "ImageTooLarge",
    "OutputFormat",
    "ProgressCallback",
    "Size",
    "Stage",
    "TraceOptions",
    "TraceResult",
    "TracingFailed",
    "UnsupportedImage",
    "decode",
    "probe",
    "trace",
]
