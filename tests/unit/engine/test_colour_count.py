"""The automatic colour count fits the content: flat art exact, texture gone, photos faithful."""

from __future__ import annotations

import io

import numpy as np
import pytest
import vtracer  # type: ignore[import-untyped]
from PIL import Image, ImageDraw
from skimage import data as samples

from printjob_adapters.engine.colour import delta_e2000_srgb

from .colour_support import mean_delta_e, png_bytes, render, run, svg_of
from .hard_synthetic import stamp

PAPER = (246, 238, 220)


@pytest.mark.parametrize(
    ("ink", "seed"), [((190, 30, 40), 0), ((20, 50, 160), 1), ((30, 30, 30), 2), ((0, 110, 60), 3)]
)
def test_a_stamp_gives_its_two_colours_with_the_ink_as_printed(
    ink: tuple[int, int, int], seed: int
) -> None:
    drawn = stamp(ink=ink, paper=PAPER, seed=seed)
    for colors in (None, 2):
        seg = run(drawn.image, colors)
        assert len(seg.palette) == 2, seg.palette.round()
        to_ink = delta_e2000_srgb(seg.palette, np.array(ink, float))
        ink_index = int(np.argmin(to_ink))
        # The ink itself, not ink thinned by the paper (a washed-out tint is 10 or more away).
        assert to_ink[ink_index] < 5, seg.palette.round()
        assert delta_e2000_srgb(seg.palette[1 - ink_index], np.array(PAPER, float)) < 6
        # Solid ink where the stamp printed, paper elsewhere: gaps and specks are gone.
        agree = ((seg.labels == ink_index) == drawn.ink_mask).mean()
        assert agree > 0.98


def test_the_speckled_scan_of_a_stamp_reads_as_solid_ink() -> None:
    drawn = stamp(seed=5)
    seg = run(drawn.image)
    ink_index = int(np.argmin(delta_e2000_srgb(seg.palette, np.array(drawn.ink, float))))
    inside = seg.labels[drawn.ink_mask] == ink_index
    assert inside.mean() > 0.98  # the 6 % of gaps in the ink are filled


def _flat_logo(colours: list[tuple[int, int, int]]) -> Image.Image:
    big = Image.new("RGB", (640, 480), colours[0])
    draw = ImageDraw.Draw(big)
    draw.ellipse((40, 40, 360, 360), fill=colours[1])
    draw.rectangle((300, 200, 600, 440), fill=colours[2])
    draw.polygon([(420, 20), (620, 180), (380, 220)], fill=colours[3])
    draw.ellipse((120, 300, 260, 440), fill=colours[4])
    return big.resize((160, 120), Image.Resampling.LANCZOS)


def test_flat_art_keeps_its_exact_colours() -> None:
    colours = [(255, 255, 255), (210, 47, 39), (0, 12, 138), (255, 185, 21), (250, 240, 245)]
    seg = run(_flat_logo(colours))
    assert len(seg.palette) == len(colours), seg.palette.round()
    got = {tuple(int(v) for v in np.rint(c)) for c in seg.palette}
    assert got == set(colours)


def test_a_jpeg_logo_keeps_its_colours_and_no_noise_colours() -> None:
    colours = [(255, 255, 255), (210, 47, 39), (0, 12, 138), (255, 185, 21), (20, 20, 20)]
    buffer = io.BytesIO()
    _flat_logo(colours).save(buffer, "JPEG", quality=70)
    seg = run(Image.open(buffer))
    assert len(seg.palette) == len(colours), seg.palette.round()
    de = delta_e2000_srgb(seg.palette[:, None, :], np.array(colours, float)[None, :, :])
    assert de.min(axis=0).max() < 4 and de.min(axis=1).max() < 4


@pytest.mark.parametrize("name", ["chelsea", "coffee"])
def test_a_photo_is_at_least_as_faithful_as_vtracer_default(name: str) -> None:
    photo = Image.fromarray(getattr(samples, name)()).convert("RGB")  # as bundled
    data = png_bytes(photo)
    truth = np.asarray(photo)
    ours = render(svg_of(data), photo.width, photo.height)
    theirs = render(
        vtracer.convert_raw_image_to_svg(data, img_format="png"), photo.width, photo.height
    )
    ours_de, theirs_de = mean_delta_e(ours, truth), mean_delta_e(theirs, truth)
    assert ours_de <= theirs_de, (ours_de, theirs_de)
    # As many colours as faithfulness needs: far more than a poster's handful.
    assert len(run(photo).palette) > 32
