"""Gradients in automatic mode: bands too close to see, and a bounded number of paths.

`colour_count.BAND_STEP` (2.5 CIEDE2000) is the design step between neighbouring bands.
Measured on the final fill colours (re-measured from their pixels, after the speck filter):
95 % of the length of every band edge is under that step and none reaches 4 (steep
radial rims, where the speck filter merges rings of one or two pixels, reach 3.2 to 3.5);
a flat logo on a gradient keeps its exact colours.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from PIL import Image, ImageDraw

from printjob_adapters.engine.colour import ciede2000, delta_e2000_srgb, srgb_to_lab
from printjob_adapters.engine.colour_count import BAND_STEP
from printjob_adapters.engine.segmentation import Segmentation

from .colour_support import neighbour_steps, path_segments, png_bytes, run, svg_of
from .hard_synthetic import linear_gradient, radial_gradient

GRADIENTS = {
    "linear blue to yellow": lambda: linear_gradient().image,
    "linear white to black at 30 degrees": lambda: (
        linear_gradient(
            angle_degrees=30, start_colour=(250, 250, 250), end_colour=(10, 10, 10)
        ).image
    ),
    "linear pale sky": lambda: (
        linear_gradient(
            size=(320, 200), start_colour=(215, 235, 250), end_colour=(250, 245, 225)
        ).image
    ),
    "radial cream to wine": lambda: radial_gradient().image,
    "radial sky to navy": lambda: (
        radial_gradient(
            size=(300, 200), inner_colour=(200, 230, 255), outer_colour=(20, 40, 120)
        ).image
    ),
}


def _assert_no_visible_steps(steps: np.ndarray, border: np.ndarray) -> None:
    assert steps.max() < 4.0, steps.max()
    # Weighted by the length of the border: 95 % of every band edge is under the design step.
    order = np.argsort(steps)
    share = np.cumsum(border[order]) / border.sum()
    assert steps[order][np.searchsorted(share, 0.95)] < BAND_STEP, (steps.round(2), border)


def _assert_no_visible_bands(image: Image.Image) -> int:
    seg = run(image)
    _assert_no_visible_steps(*neighbour_steps(seg))
    return len(seg.palette)


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_a_gradient_shows_no_band(name: str) -> None:
    image = GRADIENTS[name]()
    colours = _assert_no_visible_bands(image)
    assert colours <= 64
    segments = path_segments(svg_of(png_bytes(image)))
    # Reasonable: a straight band edge is a handful of segments, a ring a few dozen.
    per_colour = 8 if name.startswith("linear") else 64
    assert segments <= per_colour * colours, (segments, colours)


def test_a_flat_logo_on_a_gradient_keeps_its_colours_and_its_outline() -> None:
    background = linear_gradient(
        size=(480, 320), start_colour=(215, 235, 250), end_colour=(250, 245, 225)
    ).image.resize((960, 640))
    draw = ImageDraw.Draw(background)
    draw.ellipse((200, 120, 760, 520), fill=(220, 60, 160), outline=(0, 0, 0), width=6)
    draw.rectangle((380, 260, 580, 380), fill=(120, 40, 170))
    image = background.resize((480, 320), Image.Resampling.LANCZOS)
    seg = run(image)
    for colour in [(220, 60, 160), (120, 40, 170), (0, 0, 0)]:
        de = delta_e2000_srgb(seg.palette, np.array(colour, float))
        assert de.min() < 1.0, (colour, seg.palette.round())
    # The background's own bands, above the logo, show no step.
    top = attrs.evolve(seg, labels=seg.labels[:50])
    _assert_no_visible_steps(*neighbour_steps(top))


def _conic(size: tuple[int, int] = (240, 240)) -> Image.Image:
    """Orange to blue and back around the centre: a conic gradient without a seam."""
    width, height = size
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    turn = (np.arctan2(ys - (height - 1) / 2, xs - (width - 1) / 2) + np.pi) / (2 * np.pi)
    t = 1.0 - np.abs(2.0 * turn - 1.0)
    start, end = np.array([250.0, 120.0, 40.0]), np.array([40.0, 60.0, 200.0])
    rgb = start + (end - start) * t[..., None]
    return Image.fromarray(np.round(rgb).astype(np.uint8), "RGB")


def _shaded_ball(size: tuple[int, int] = (240, 200), radius: float = 80.0) -> Image.Image:
    """A lit blue ball on a flat off-white ground, anti-aliased (4x4 samples a pixel)."""
    width, height = size
    samples = 4
    ys, xs = np.mgrid[0 : height * samples, 0 : width * samples].astype(np.float64) / samples
    nx, ny = (xs - width / 2) / radius, (ys - height / 2) / radius
    inside = nx * nx + ny * ny < 1.0
    nz = np.sqrt(np.clip(1.0 - nx * nx - ny * ny, 0.0, 1.0))
    light = np.clip(-0.5 * nx - 0.5 * ny + 0.7 * nz, 0.0, 1.0)[..., None]
    ball = np.array([40.0, 110.0, 200.0]) * (0.25 + 0.75 * light) + 38.0 * light**8
    rgb = np.where(inside[..., None], ball, np.array([245.0, 245.0, 240.0]))
    rgb = rgb.reshape(height, samples, width, samples, 3).mean(axis=(1, 3))
    return Image.fromarray(np.clip(np.round(rgb), 0, 255).astype(np.uint8), "RGB")


#: CIEDE2000 per pixel of the input up to which bands `BAND_STEP` apart can be two pixels
#: wide (`shading.STEEP`).
GENTLE = 1.25

#: A radial gradient whose rim is steep: white to navy over 80 px, 1.1 CIEDE2000 per pixel
#: at its steepest (`shading.STEEP`).
STEEP_RIM = {
    "radial steep rim": lambda: (
        radial_gradient(
            size=(240, 240), radius=80, inner_colour=(255, 255, 255), outer_colour=(10, 20, 60)
        ).image
    ),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS | STEEP_RIM))
def test_neighbouring_bands_of_a_gradient_are_under_the_step(name: str) -> None:
    image = (GRADIENTS | STEEP_RIM)[name]()
    seg = run(image)
    steps, _ = neighbour_steps(seg)
    assert steps.max() <= BAND_STEP, steps.max()
    segments = path_segments(svg_of(png_bytes(image)))
    per_colour = 8 if name.startswith("linear") else 64
    assert segments <= per_colour * len(seg.palette), (segments, len(seg.palette))


def _gentle(image: Image.Image, seg: Segmentation) -> Segmentation:
    """`seg` with only the pixels where the input changes by at most `GENTLE` CIEDE2000 per
    pixel within two pixels around: there bands `BAND_STEP` apart are two pixels wide or
    more; where the input is steeper, its own step bounds the bands' (docs/engine.md)."""
    lab = srgb_to_lab(np.asarray(image.convert("RGB"), np.float64))
    change = np.zeros(lab.shape[:2])
    change[:, :-1] = ciede2000(lab[:, :-1], lab[:, 1:])
    change[:-1] = np.maximum(change[:-1], ciede2000(lab[:-1], lab[1:]))
    steep = change > GENTLE
    for _ in range(2):
        grown = steep.copy()
        grown[1:] |= steep[:-1]
        grown[:-1] |= steep[1:]
        grown[:, 1:] |= steep[:, :-1]
        grown[:, :-1] |= steep[:, 1:]
        steep = grown
    return attrs.evolve(seg, labels=np.where(steep, -1, seg.labels).astype(np.int32))


def test_a_conic_gradient_shows_no_band() -> None:
    image = _conic()
    seg = run(image)
    # Near the centre every colour meets every other within a few pixels.
    assert neighbour_steps(_gentle(image, seg))[0].max() <= BAND_STEP
    assert path_segments(svg_of(png_bytes(image))) <= 64 * len(seg.palette)


def test_a_shaded_ball_shows_no_band_inside() -> None:
    image = _shaded_ball()
    seg = run(image)
    # The square inside the ball: its shading only, not its outline on the ground.
    inside = attrs.evolve(_gentle(image, seg), labels=_gentle(image, seg).labels[44:156, 64:176])
    steps, _ = neighbour_steps(inside)
    assert steps.max() <= BAND_STEP, steps.max()
    ground = delta_e2000_srgb(seg.palette, np.array([245.0, 245.0, 240.0]))
    assert ground.min() < 1.0, seg.palette.round()


def test_a_logo_on_a_radial_gradient_keeps_its_colours_and_the_ground_its_bands() -> None:
    ground = radial_gradient(
        size=(600, 400), inner_colour=(255, 250, 220), outer_colour=(30, 90, 60)
    ).image.resize((1200, 800))
    draw = ImageDraw.Draw(ground)
    draw.rectangle((300, 250, 900, 550), fill=(250, 200, 0), outline=(20, 20, 20), width=8)
    seg = run(ground.resize((300, 200), Image.Resampling.BOX))
    for colour in [(250, 200, 0), (20, 20, 20)]:
        de = delta_e2000_srgb(seg.palette, np.array(colour, float))
        assert de.min() < 1.0, (colour, seg.palette.round())
    # The outline stays one closed frame of its own colour.
    outline = int(np.argmin(delta_e2000_srgb(seg.palette, np.array([20.0, 20.0, 20.0]))))
    frame = seg.labels == outline
    assert frame[61:65, 80:220].any(axis=0).all() and frame[136:140, 80:220].any(axis=0).all()
    assert frame[70:130, 73:77].any(axis=1).all() and frame[70:130, 223:227].any(axis=1).all()
    # The ground above the logo: no visible step.
    above = attrs.evolve(seg, labels=seg.labels[:55])
    assert neighbour_steps(above)[0].max() <= BAND_STEP
