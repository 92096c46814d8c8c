"""How much one conversion may trace and write: the bounds that keep a hostile image
(1-px combs, noise, a thousand colours in 2 x 2 blocks) from holding a worker for
minutes, taking gigabytes, or writing a file of hundreds of megabytes.

Four checks, each as early as the quantity is known and each refusing with a
`TooMuchDetail` whose detail says what to change:

0. Specks (`check_specks`, after the first colour assignment, before speck cleaning):
   pixels whose four neighbours all have other colours. Cleaning costs time and memory
   per speck (a 1-px checkerboard of 3 MP: tens of seconds and 1.5 GB), and an image that
   is mostly specks is noise, not artwork. The shared corpora's busiest image has 5 % of
   its pixels as specks, a 3 MP camera photo 4 %; the cap is a quarter of the pixels of
   the largest accepted image.
1. Borders (`check_borders`, before tracing): the cracks between differently coloured
   pixels of the label map. Tracing's time and memory grow with them (about 250 bytes
   of working memory per crack), so the cap keeps tracing under 1 GB. The busiest image
   of the shared corpora has 0.2 cracks per pixel, a 3 MP camera photo 0.1; the cap is
   0.5 per pixel of the largest accepted image (3 MP).
2. Path segments (`check_segments`): the drawing segments of all layers together;
   before fitting, an estimate (the boundary edges the layers' outlines replay), and
   after fitting, before any command is built, the segments themselves. The
   shared corpora's busiest image has 15 000, a 3 MP photo about 110 000.
3. File bytes (`check_file`, after writing): the cap every format keeps. With at most
   `MAX_SEGMENTS` segments no vector file comes near it (a curve is at most ~60 bytes
   in any of them), and a PNG is bounded by its canvas; the check makes the promise
   exact.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from printjob_adapters.engine.errors import TracingFailed

#: Most lone pixels (no 4-neighbour of their colour) a colour map may have.
MAX_SPECK_PIXELS = 750_000
#: Most cracks between differently coloured neighbouring pixels a conversion traces.
MAX_BORDER_CRACKS = 1_500_000
#: Most drawing segments (lines, curves, closing lines) in one file, all layers together.
MAX_SEGMENTS = 500_000
#: Largest file the writers hand back, in bytes (any format).
MAX_FILE_BYTES = 40 * 1000 * 1000

_ADVICE = "Try fewer colours, a smaller size, or a less noisy image."


class TooMuchDetail(TracingFailed):
    """The image would trace to more borders, segments or bytes than one conversion may
    make: refused early, before the work or the file grows, rather than holding a worker
    for minutes or handing back a file no printer can open."""


class TooManySegments(TooMuchDetail):
    """The traced design would pass `MAX_SEGMENTS`: told apart from the other refusals
    because a photo's trace can be made again with fewer colours (`pipeline`), while
    noise or combs are refused by the earlier checks."""


def border_cracks(labels: npt.NDArray[np.integer]) -> int:
    """Cracks between 4-neighbouring pixels of different labels. O(pixels); its only
    temporary is one bool map the size of the image."""
    across = int(np.count_nonzero(labels[:, 1:] != labels[:, :-1]))
    down = int(np.count_nonzero(labels[1:] != labels[:-1]))
    return across + down


def speck_pixels(labels: npt.NDArray[np.integer]) -> int:
    """Pixels none of whose 4-neighbours has their label. O(pixels); its temporaries
    are two bool maps the size of the image."""
    paired = paired_pixels(labels)
    return int(paired.size - np.count_nonzero(paired))


def paired_pixels(labels: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
    """Whether each pixel has a 4-neighbour of its own label (the rest are specks of
    one pixel). O(pixels); one bool map the size of the image besides the answer."""
    paired = np.zeros(labels.shape, dtype=bool)
    same = labels[:, 1:] == labels[:, :-1]
    paired[:, 1:] |= same
    paired[:, :-1] |= same
    same = labels[1:] == labels[:-1]
    paired[1:] |= same
    paired[:-1] |= same
    return paired


def check_specks(labels: npt.NDArray[np.integer]) -> None:
    """Refuse a colour map with more than `MAX_SPECK_PIXELS` lone pixels. O(pixels),
    nothing for a map too small to reach the cap."""
    if labels.size <= MAX_SPECK_PIXELS:
        return
    specks = speck_pixels(labels)
    if specks > MAX_SPECK_PIXELS:
        raise TooMuchDetail(
            f"The image is too noisy to trace: {specks} pixels differ in colour from all "
            f"their neighbours, at most {MAX_SPECK_PIXELS}. {_ADVICE}"
        )


def over_speck_cap(labels: npt.NDArray[np.integer]) -> bool:
    """Whether a colour map has more lone pixels than `MAX_SPECK_PIXELS` (`check_specks`
    would refuse it). O(pixels), nothing for a map too small to reach the cap."""
    return labels.size > MAX_SPECK_PIXELS and speck_pixels(labels) > MAX_SPECK_PIXELS


def check_borders(labels: npt.NDArray[np.integer]) -> None:
    """Refuse a label map with more than `MAX_BORDER_CRACKS` border cracks. O(pixels),
    nothing for a map too small to reach the cap (fewer than two cracks per pixel)."""
    if 2 * labels.size <= MAX_BORDER_CRACKS:
        return
    cracks = border_cracks(labels)
    if cracks > MAX_BORDER_CRACKS:
        raise TooMuchDetail(
            f"The image has too much fine detail to trace: {cracks} pixel edges between "
            f"colours, at most {MAX_BORDER_CRACKS}. {_ADVICE}"
        )


def check_segments(segments: int, estimate: bool = False) -> None:
    """Refuse art of more than `MAX_SEGMENTS` path segments (`estimate`: counted before
    fitting, as the boundary edges the layers' outlines replay, one segment each, which
    is what the file gets but for runs of straight edges along one line). O(1)."""
    if segments > MAX_SEGMENTS:
        raise TooManySegments(
            f"The traced design would have {'about ' if estimate else ''}{segments} path "
            f"segments, at most {MAX_SEGMENTS}. {_ADVICE}"
        )


def check_file(data: bytes, format_name: str) -> None:
    """Refuse a file of more than `MAX_FILE_BYTES`. O(1)."""
    if len(data) > MAX_FILE_BYTES:
        raise TooMuchDetail(
            f"The {format_name} file would be {len(data)} bytes, at most {MAX_FILE_BYTES}. "
            f"{_ADVICE}"
        )
