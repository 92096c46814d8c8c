"""Layers built from their outline arrays alone: commands on first reading, the same
layer, the same files."""

from __future__ import annotations

import numpy as np
import pytest

from printjob_adapters.engine import small_text
from printjob_adapters.engine.canvas import place
from printjob_adapters.engine.options import Background, OutputFormat, TraceOptions
from printjob_adapters.engine.pipeline import _vectorise
from printjob_adapters.engine.progress import silent
from printjob_adapters.engine.segmentation import segment
from printjob_adapters.engine.vector import Layer, Outline, VectorArt
from printjob_adapters.engine.vectorise import vectorise
from printjob_adapters.engine.writers import write
from tests.unit.engine import hard_synthetic
from tests.unit.engine.test_vectorise_support import ellipse, paint, rect

SQUARE = (
    ("moveTo", ((1.0, 1.0),)),
    ("lineTo", ((4.0, 1.0),)),
    ("curveTo", ((5.0, 2.0), (5.0, 3.0), (4.0, 4.0))),
    ("lineTo", ((1.0, 4.0),)),
    ("closePath", ()),
)


def test_a_layer_of_an_outline_reads_its_commands_and_equals_one_given_them() -> None:
    outline = Outline.from_commands(SQUARE)
    lazy = Layer((10, 20, 30), outline=outline)
    given = Layer((10, 20, 30), SQUARE)
    assert lazy.commands == SQUARE
    assert lazy == given
    assert hash(lazy) == hash(given)
    assert lazy.segment_count() == given.segment_count() == 4
    assert lazy != Layer((10, 20, 31), SQUARE)
    assert lazy.as_outline() is outline


def test_a_layer_needs_its_commands_or_its_outline() -> None:
    with pytest.raises(ValueError, match="commands or its outline"):
        Layer((0, 0, 0))


@pytest.mark.parametrize("fmt", [OutputFormat.SVG, OutputFormat.PDF, OutputFormat.EPS])
def test_traced_layers_write_the_files_of_layers_given_their_commands(fmt: OutputFormat) -> None:
    rgba, seg = paint(
        40,
        48,
        (255, 255, 255),
        [((220, 30, 40), ellipse(20, 18, 12, 9)), ((20, 40, 200), rect(26, 8, 44, 34))],
    )
    art = vectorise(rgba, seg, silent())
    assert all(layer.outline is not None for layer in art.layers)
    eager = VectorArt(
        art.width,
        art.height,
        tuple(Layer(layer.color, layer.as_outline().commands()) for layer in art.layers),
        art.background_removed,
    )
    placement = place(art.width, art.height, TraceOptions(format=fmt))
    assert write(art, placement, fmt) == write(eager, placement, fmt)
    assert art == eager
    assert art.segment_count() == eager.segment_count()


def test_an_empty_layer_is_known_from_its_op_codes() -> None:
    lazy = Layer((1, 2, 3), outline=Outline.from_commands(SQUARE))
    assert not lazy.is_empty()
    assert lazy._commands is None  # no command tuples were built to find out
    assert Layer((1, 2, 3), outline=Outline.from_commands(())).is_empty()
    assert Layer((1, 2, 3), ()).is_empty()
    assert not Layer((1, 2, 3), SQUARE).is_empty()


@pytest.mark.parametrize("fmt", [OutputFormat.SVG, OutputFormat.PDF])
def test_art_with_small_text_keeps_its_layers_as_arrays(fmt: OutputFormat) -> None:
    # The letters drawn over the art leave every layer, the art's and the letters', as
    # arrays: the writers' bytes are those of the layers given their commands.
    image = hard_synthetic.small_text(pixel_size=8).image
    rgba = np.asarray(image.convert("RGBA"))
    segmentation = segment(rgba, None, Background.KEEP, silent())
    text = small_text.overlay(rgba, segmentation)
    assert text is not None
    art = _vectorise(rgba, segmentation, silent())
    assert len(art.layers) >= 2
    assert all(layer._commands is None and layer.outline is not None for layer in art.layers)
    eager = VectorArt(
        art.width,
        art.height,
        tuple(Layer(layer.color, layer.as_outline().commands()) for layer in art.layers),
        art.background_removed,
    )
    placement = place(art.width, art.height, TraceOptions(format=fmt))
    assert write(art, placement, fmt) == write(eager, placement, fmt)
