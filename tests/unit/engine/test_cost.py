"""The engine's cost on hostile images (issue 15): every stage linear or n log n.

Timings belong in `bench/abuse.py`; here the cost is pinned by what it is made of (the
corner thinning against its quadratic definition) and by how often the stages check for
a cancel per unit of work.
"""

from __future__ import annotations

import importlib
import io
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from printjob_adapters.engine import boundaries, bounds, cleanup, curves, pipeline, vectorise
from printjob_adapters.engine.errors import Cancelled, TracingFailed
from printjob_adapters.engine.options import TraceOptions
from printjob_adapters.engine.pipeline import trace
from printjob_adapters.engine.progress import Stage
from printjob_adapters.engine.vector import VectorArt


def thin_by_definition(
    gap: list[int], angle: list[float], span: int, m: int, closed: bool
) -> list[bool]:
    """Corner thinning as first written: strongest first, each candidate against every
    kept one (quadratic; the reference the windowed lookup must agree with)."""
    kept: list[int] = []
    for c in sorted(range(len(gap)), key=lambda c: (-angle[c], gap[c])):
        clash = []
        for q in kept:
            d = abs(gap[c] - gap[q])
            if min(d, m - d if closed else m) <= span:
                clash.append(q)
        sharp = angle[c] >= curves.SHARP_ANGLE
        if not clash or (sharp and all(angle[q] >= curves.SHARP_ANGLE for q in clash)):
            kept.append(c)
    return [c in kept for c in range(len(gap))]


@st.composite
def candidate_clusters(draw: st.DrawFn) -> tuple[list[int], list[float], int, int, bool]:
    m = draw(st.integers(5, 80))
    closed = draw(st.booleans())
    gaps = sorted(draw(st.sets(st.integers(0, m - 1), min_size=1, max_size=min(m, 40))))
    angles = draw(
        st.lists(
            st.sampled_from([0.9, 1.0, 1.2, 1.49, 1.5, 1.6, 2.0, 3.1]),
            min_size=len(gaps),
            max_size=len(gaps),
        )
    )
    return gaps, angles, draw(st.integers(1, 3)), m, closed


@settings(max_examples=400, deadline=None)
@given(candidate_clusters())
def test_corner_thinning_keeps_what_the_quadratic_definition_keeps(
    case: tuple[list[int], list[float], int, int, bool],
) -> None:
    gap, angle, span, m, closed = case
    kept = curves._thin_one(np.array(gap), np.array(angle), span, m, closed)
    assert kept.tolist() == thin_by_definition(gap, angle, span, m, closed)


# -- the bounds: refused early, with a detail that says what to change --


def png_of(pixels: npt.NDArray[np.uint8]) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


def combs(size: int) -> npt.NDArray[np.uint8]:
    """Two interlocking 1-px combs: two regions whose shared border is the whole image."""
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[: size - 1, 0::2] = (20, 20, 200)
    pixels[0, :] = (20, 20, 200)
    return pixels


def square_waves(size: int) -> npt.NDArray[np.uint8]:
    """Bands whose borders are 1-px square waves of period 6: many short runs."""
    y, x = np.mgrid[:size, :size]
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[((y + (x // 3) % 2) // 4) % 2 == 1] = (20, 20, 200)
    return pixels


def checkerboard(size: int) -> npt.NDArray[np.uint8]:
    y, x = np.mgrid[:size, :size]
    pixels = np.full((size, size, 3), 255, dtype=np.uint8)
    pixels[(x + y) % 2 == 1] = (0, 0, 0)
    return pixels


def test_specks_and_borders_are_counted_exactly() -> None:
    assert bounds.speck_pixels(np.array([[0, 1], [1, 0]])) == 4
    assert bounds.speck_pixels(np.array([[0, 0], [1, 0]])) == 1
    assert bounds.border_cracks(np.array([[0, 1], [1, 0]])) == 4
    assert bounds.border_cracks(np.array([[0, 0, 1], [0, 0, 1]])) == 2


def test_a_colour_map_of_lone_pixels_is_refused_before_speck_cleaning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bounds, "MAX_SPECK_PIXELS", 5_000)
    cleaned: list[int] = []
    monkeypatch.setattr(
        cleanup, "clean_speckles", lambda *a, **k: cleaned.append(1) or pytest.fail("cleaned")
    )
    with pytest.raises(bounds.TooMuchDetail, match=r"too noisy.*10000 pixels.*at most 5000"):
        trace(png_of(checkerboard(100)), TraceOptions(colors=2))
    assert cleaned == []


def test_an_image_of_more_borders_than_the_cap_is_refused_before_tracing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bounds, "MAX_BORDER_CRACKS", 10_000)
    traced = trace(png_of(combs(70)), TraceOptions())  # 70 x 69 cracks: under the cap
    assert traced.colors == 2
    built: list[int] = []
    real_build = vectorise.build_boundary_graph
    monkeypatch.setattr(
        vectorise, "build_boundary_graph", lambda labels: built.append(1) or real_build(labels)
    )
    with pytest.raises(TracingFailed, match=r"too much fine detail to trace: 14162 pixel edges"):
        trace(png_of(combs(120)), TraceOptions())
    assert built == []


def test_a_design_of_more_segments_than_the_cap_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    image = png_of(combs(60))
    svg = trace(image, TraceOptions()).data
    monkeypatch.setattr(bounds, "MAX_SEGMENTS", svg.count(b"v") // 4)
    with pytest.raises(bounds.TooMuchDetail, match=r"path segments, at most"):
        trace(image, TraceOptions())


@pytest.mark.parametrize("fmt", ["svg", "pdf", "eps", "png"])
def test_a_file_over_the_byte_cap_is_refused_in_every_format(
    monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    image = png_of(combs(40))
    size = len(trace(image, TraceOptions(format=fmt)).data)
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", size)
    assert len(trace(image, TraceOptions(format=fmt)).data) == size
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", size - 1)
    with pytest.raises(bounds.TooMuchDetail, match=rf"The {fmt.upper()} file would be {size}"):
        trace(image, TraceOptions(format=fmt))


# -- cooperative cancel: bounded work between two checks --


def test_the_fitting_search_checks_for_a_cancel_every_batch_of_attempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counts fit attempts (rows tried) between two cancel checks on an image of many
    short runs: at most one batch, however many runs there are; and the batches change
    nothing."""
    image = png_of(square_waves(160))
    unbatched = trace(image, TraceOptions()).data
    monkeypatch.setattr(curves, "ATTEMPT_BATCH", 64)
    rows_since_check = [0]
    most = [0]
    rows = [0]
    real_try = curves._try

    def counting_try(*args: Any) -> Any:
        rows_since_check[0] += len(args[4])
        rows[0] += len(args[4])
        return real_try(*args)

    def cancelled() -> bool:
        most[0] = max(most[0], rows_since_check[0])
        rows_since_check[0] = 0
        return False

    monkeypatch.setattr(curves, "_try", counting_try)
    checks = []
    batched = trace(image, TraceOptions(), cancelled=lambda: checks.append(1) or cancelled())
    assert batched.data == unbatched
    assert 0 < most[0] <= 64
    assert rows[0] > 20 * 64
    assert len(checks) >= rows[0] / 64


def test_a_cancel_during_fitting_stops_the_conversion_at_the_next_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(curves, "ATTEMPT_BATCH", 64)
    attempts = [0]
    real_try = curves._try

    def counting_try(*args: Any) -> Any:
        attempts[0] += 1
        return real_try(*args)

    monkeypatch.setattr(curves, "_try", counting_try)
    with pytest.raises(Cancelled):
        trace(png_of(combs(160)), TraceOptions(), cancelled=lambda: attempts[0] >= 3)
    assert attempts[0] == 3


@pytest.mark.parametrize("fmt", ["svg", "pdf", "eps", "png"])
def test_the_writers_check_for_a_cancel_every_few_segments(
    monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """Counts cancel checks while the file is written: one per layer at least and, in
    the writers that draw segment by segment, one per `TICK_SEGMENTS` segments."""
    module = importlib.import_module(f"printjob_adapters.engine.writers.{fmt}")
    by_segment = hasattr(module, "TICK_SEGMENTS")
    if by_segment:
        monkeypatch.setattr(module, "TICK_SEGMENTS", 8)
    arts: list[VectorArt] = []
    real_write = pipeline.write

    def keep_art(art: VectorArt, *args: Any) -> bytes:
        arts.append(art)
        return real_write(art, *args)

    monkeypatch.setattr(pipeline, "write", keep_art)
    stage = [Stage.DECODE]
    writing_checks = [0]

    def cancelled() -> bool:
        writing_checks[0] += stage[0] is Stage.WRITE
        return False

    def progress(now: Stage, percent: int) -> None:
        stage[0] = now

    trace(png_of(square_waves(64)), TraceOptions(format=fmt), progress, cancelled)
    art = arts[0]
    assert art.segment_count() > 100
    expected = art.segment_count() // 8 if by_segment else len(art.layers)
    assert writing_checks[0] >= expected


def walk_by_definition(succ: npt.NDArray[np.int64], pred: npt.NDArray[np.int64]) -> list[int]:
    """Chains in ascending order of first crack, each followed while the link is mutual."""
    order: list[int] = []
    for first in np.nonzero(pred < 0)[0].tolist():
        crack = first
        while True:
            order.append(crack)
            nxt = int(succ[crack])
            if nxt < 0 or pred[nxt] != crack:
                break
            crack = nxt
    return order


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.booleans())
def test_chains_are_walked_in_order_of_their_first_crack(
    seed: int, colours: int, blocky: bool
) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, colours, (12, 14)).astype(np.int32)
    if blocky:
        labels = np.repeat(np.repeat(labels, 2, axis=0), 2, axis=1)
    graph = boundaries.build_boundary_graph(labels)
    # Rebuild the crack links the graph was walked from: each edge's cracks in order.
    n = len(graph.crack_x)
    succ = np.full(n, -1, dtype=np.int64)
    pred = np.full(n, -1, dtype=np.int64)
    for e in range(len(graph.edge_start) - 1):
        a, b = int(graph.edge_start[e]), int(graph.edge_start[e + 1])
        succ[a : b - 1] = np.arange(a + 1, b)
        pred[a + 1 : b] = np.arange(a, b - 1)
    shuffled = rng.permutation(n)  # crack ids in another order: the walk must sort them
    where = np.argsort(shuffled)
    s = np.where(succ[shuffled] >= 0, where[np.maximum(succ[shuffled], 0)], -1)
    p = np.where(pred[shuffled] >= 0, where[np.maximum(pred[shuffled], 0)], -1)
    assert boundaries._walk(s, p).tolist() == walk_by_definition(s, p)


def test_many_chains_are_walked_without_a_node_of_high_degree() -> None:
    # 200 000 one-crack chains: a single root above them all cost SciPy minutes.
    count = 200_000
    none = np.full(count, -1, dtype=np.int64)
    assert boundaries._walk(none, none).tolist() == list(range(count))


def test_a_design_of_more_edges_than_the_segment_cap_is_refused_before_fitting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bounds, "MAX_SEGMENTS", 100)
    fitted: list[int] = []
    monkeypatch.setattr(vectorise, "fit_edges", lambda *a, **k: fitted.append(1))
    blocks = np.repeat(np.repeat(checkerboard(20), 2, axis=0), 2, axis=1)
    with pytest.raises(bounds.TooMuchDetail, match=r"about \d+ path segments, at most 100"):
        trace(png_of(blocks), TraceOptions(colors=2))
    assert fitted == []
