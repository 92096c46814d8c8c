"""Layers written together in one whole-array pass give each layer's text alone."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from printjob_adapters.engine.canvas import fit
from printjob_adapters.engine.vector import Command, Layer, VectorArt
from printjob_adapters.engine.writers import svg

POINT = st.tuples(
    st.integers(-4, 12).map(lambda v: v / 2), st.integers(-4, 12).map(lambda v: v / 4)
)


@st.composite
def layer_commands(draw: st.DrawFn) -> tuple[Command, ...]:
    out: list[Command] = []
    # Mostly closed contours from a moveTo; now and then a stray command first.
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            out.append(("moveTo", (draw(POINT),)))
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["lineTo", "curveTo", "closePath"]))
            if kind == "lineTo":
                out.append(("lineTo", (draw(POINT),)))
            elif kind == "curveTo":
                out.append(("curveTo", (draw(POINT), draw(POINT), draw(POINT))))
            else:
                out.append(("closePath", ()))
        out.append(("closePath", ()))
    return tuple(out)


arts = st.lists(layer_commands(), min_size=1, max_size=8).map(
    lambda layers: VectorArt(
        6, 3, tuple(Layer(color=(k, 0, 0), commands=c) for k, c in enumerate(layers))
    )
)


@settings(max_examples=150, deadline=None)
@given(arts, st.sampled_from([1, 3, 1 << 12]))
def test_svg_paths_are_each_layers_own(art: VectorArt, group: int) -> None:
    placement = fit(6, 3, 60, 30, 300)
    old = svg.GROUP_COMMANDS
    svg.GROUP_COMMANDS = group
    try:
        document = svg.write_svg(art, placement).decode()
    finally:
        svg.GROUP_COMMANDS = old
    expected = [svg.path_data(layer, placement) for layer in art.layers]
    assert re.findall(r'<path d="([^"]*)"/>', document) == [d for d in expected if d]


@settings(max_examples=150, deadline=None)
@given(arts)
def test_layers_drawn_are_each_layers_own(art: VectorArt) -> None:
    placement = fit(6, 3, 60, 30, 300)
    together = list(svg.layers_drawn(art.layers, placement))
    assert [layer for layer, _ in together] == list(art.layers)
    for layer, d in together:
        alone = svg.drawn(layer, placement)
        for field in ("ops", "points", "current"):
            assert np.array_equal(getattr(d, field), getattr(alone, field))
