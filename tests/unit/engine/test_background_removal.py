"""background=remove on hard inputs: what surrounds the design goes, and nothing of the design.

Synthetic images with their truth (`hard_synthetic` and drawings here): white parts of the
artwork touching a white background, paper specks, gradient backgrounds, a photo-like
subject with `colors=6`, and the cases where `background_removed` must be false.
"""

from __future__ import annotations

import io

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image, ImageDraw
from scipy import ndimage

from printjob_adapters.engine import Background as TraceBackground
from printjob_adapters.engine import TraceOptions, trace
from printjob_adapters.engine.options import Background
from printjob_adapters.engine.progress import Checkpoint
from printjob_adapters.engine.segmentation import Segmentation, segment
from tests.unit.engine.hard_synthetic import font, jpeg, linear_gradient, radial_gradient, stamp
from tests.unit.engine.hard_synthetic import white_in_artwork as striped_cone

Mask = npt.NDArray[np.bool_]


def removed(image: Image.Image, colors: int | None = None) -> Segmentation:
    pixels = np.asarray(image.convert("RGBA")).copy()
    return segment(pixels, colors, Background.REMOVE, Checkpoint())


def kept(seg: Segmentation) -> Mask:
    mask: Mask = seg.labels >= 0
    return mask


def grown(mask: Mask, pixels: int) -> Mask:
    out: Mask = ndimage.binary_dilation(mask, iterations=pixels)
    return out


def shrunk(mask: Mask, pixels: int) -> Mask:
    out: Mask = ndimage.binary_erosion(mask, iterations=pixels)
    return out


def assert_one_piece(mask: Mask) -> None:
    """The kept design is one 8-connected piece (nothing cut off but specks of a pixel)."""
    parts, count = ndimage.label(mask, structure=np.ones((3, 3)))
    sizes = np.bincount(parts.ravel())[1:]
    assert count >= 1 and sizes.max() >= 0.995 * mask.sum()


# --- White parts of the artwork touching the white background --------------------------


@pytest.mark.parametrize(
    ("size", "stripes", "quality"),
    [
        ((200, 220), 3, None),
        ((150, 260), 4, None),
        ((320, 300), 2, 55),
        ((200, 220), 3, 60),
        ((400, 300), 1, 70),
        ((260, 240), 3, 80),
        ((760, 820), 3, 75),
    ],
)
def test_white_stripes_of_a_cone_stay(
    size: tuple[int, int], stripes: int, quality: int | None
) -> None:
    cone = striped_cone(size=size, stripes=stripes)
    image = cone.image if quality is None else jpeg(cone.image, quality)
    seg = removed(image)
    left = kept(seg)

    assert seg.background_removed
    assert left[cone.white_part_mask].mean() >= 0.9
    assert left[cone.artwork_mask & ~cone.white_part_mask].mean() >= 0.98
    assert left[~grown(cone.artwork_mask, 2)].mean() <= 0.01  # the background went
    assert_one_piece(left & shrunk(cone.artwork_mask, 1))


def outlined_shirt(size: tuple[int, int] = (220, 200)) -> tuple[Image.Image, Mask, Mask]:
    """A white shirt outlined in black that runs off the bottom edge, under a white disc in
    a black ring, on white. Returns the image, the white inside the outlines and the
    background."""
    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((40, 90, width - 41, height + 30), radius=24, outline="black", width=4)
    draw.ellipse((width // 2 - 30, 10, width // 2 + 30, 70), outline="black", width=5)
    inside = Image.new("L", size, 0)
    inner = ImageDraw.Draw(inside)
    inner.rounded_rectangle((44, 94, width - 45, height + 26), radius=20, fill=255)
    inner.ellipse((width // 2 - 25, 15, width // 2 + 25, 65), fill=255)
    white_inside = shrunk(np.asarray(inside) > 0, 1)
    design = Image.new("L", size, 0)
    whole = ImageDraw.Draw(design)
    whole.rounded_rectangle((40, 90, width - 41, height + 30), radius=24, fill=255)
    whole.ellipse((width // 2 - 30, 10, width // 2 + 30, 70), fill=255)
    background = ~grown(np.asarray(design) > 0, 1)
    return image, white_inside, background


@pytest.mark.parametrize("quality", [None, 75])
def test_white_inside_an_outline_that_runs_off_the_border_stays(quality: int | None) -> None:
    image, white_inside, background = outlined_shirt()
    seg = removed(image if quality is None else jpeg(image, quality))
    left = kept(seg)

    assert seg.background_removed
    assert left[white_inside].mean() >= 0.99
    assert left[background].mean() <= 0.01


@pytest.mark.parametrize(
    ("text", "pixels", "bold"), [("HILL MINT", 60, True), ("Illinois 1111", 48, False)]
)
def test_the_gaps_between_letters_go(text: str, pixels: int, bold: bool) -> None:
    # Flat-topped stems side by side line up like the pieces of a cone, but along parallel
    # lines: never bridged, so no white is kept between the letters.
    image = Image.new("RGB", (int(pixels * len(text) * 0.75) + 40, int(pixels * 1.6)), "white")
    ImageDraw.Draw(image).text((20, 10), text, fill=(20, 40, 160), font=font(pixels, bold=bold))
    ink = np.asarray(image.convert("L")) < 200
    seg = removed(image)
    left = kept(seg)
    drawn = segment(np.asarray(image.convert("RGBA")).copy(), None, Background.KEEP, Checkpoint())
    traced_ink = shrunk(ink, 1) & (drawn.palette.sum(axis=1) < 600)[drawn.labels]

    assert seg.background_removed
    assert traced_ink.sum() >= 0.95 * shrunk(ink, 1).sum()
    assert left[traced_ink].all()
    assert left[~grown(ndimage.binary_fill_holes(ink), 2)].sum() == 0


# --- Specks --------------------------------------------------------------------------


def scan_with_specks(seed: int) -> tuple[Image.Image, Mask, Mask, Mask]:
    """A dark logo on grainy cream paper with dust specks of 1-3 px far from it, and two
    small dots that belong to the design (a pin's centre, the dot over a stem). Returns the
    image, the logo (dots included), the dots, and the specks."""
    rng = np.random.default_rng(seed)
    width, height = 300, 220
    logo_image = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(logo_image)
    draw.ellipse((40, 40, 140, 140), outline=255, width=8)  # a pin's ring...
    draw.rectangle((88, 88, 89, 89), fill=255)  # ...and its 2-px centre dot
    draw.rectangle((180, 70, 196, 170), fill=255)  # a stem...
    draw.rectangle((185, 58, 190, 63), fill=255)  # ...and its dot, 6 px above it
    draw.polygon([(220, 170), (260, 60), (280, 170)], fill=255)
    logo = np.asarray(logo_image) > 0
    dots = np.zeros_like(logo)
    dots[88:90, 88:90] = True
    dots[58:64, 185:191] = True
    specks = np.zeros_like(logo)
    # On the paper around the design (the paper the ring encloses is the design's own).
    clear = ~grown(ndimage.binary_fill_holes(logo), 15)
    placed = 0
    while placed < 40:
        y, x = int(rng.integers(2, height - 5)), int(rng.integers(2, width - 5))
        s = int(rng.integers(1, 4))
        if clear[y : y + s, x : x + s].all():
            specks[y : y + s, x : x + s] = True
            placed += 1
    paper = np.array([244, 238, 224], np.float64)
    ink = np.array([35, 30, 40], np.float64)
    rgb = np.where((logo | specks)[..., None], ink, paper)
    rgb = rgb + rng.normal(0.0, 3.0, rgb.shape)
    image = Image.fromarray(np.clip(np.rint(rgb), 0, 255).astype(np.uint8), "RGB")
    return image, logo, dots, specks


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paper_specks_go_with_the_background_and_the_design_dots_stay(seed: int) -> None:
    image, logo, dots, specks = scan_with_specks(seed)
    seg = removed(image)
    left = kept(seg)
    pixels = np.asarray(image.convert("RGBA")).copy()
    drawn = segment(pixels, None, Background.KEEP, Checkpoint())
    dark = drawn.palette.sum(axis=1) < 300
    traced_dots = dots & dark[drawn.labels]

    assert seg.background_removed
    assert not left[specks].any()
    assert traced_dots.sum() >= 30  # the dot over the stem at least is traced...
    assert left[traced_dots].all()  # ...and no dot the tracing keeps is removed
    assert left[logo].mean() >= 0.99
    assert left[~grown(ndimage.binary_fill_holes(logo), 2)].sum() == 0


@pytest.mark.parametrize("seed", [3, 4])
def test_a_stamp_scan_leaves_no_specks_on_the_transparent_area(seed: int) -> None:
    scan = stamp(seed=seed)
    seg = removed(scan.image)
    left = kept(seg)

    assert seg.background_removed
    # Around the stamp's frame (the paper it encloses is kept with the design); ink
    # splashes within two closing radii of the frame count as its rough edge.
    around = ~grown(ndimage.binary_fill_holes(scan.ink_mask), 3)
    assert left[around].sum() <= 0.005 * around.sum()
    assert left[shrunk(scan.ink_mask, 2)].mean() >= 0.9


# --- Gradient backgrounds --------------------------------------------------------------


def logo_over(background: Image.Image) -> tuple[Image.Image, Mask]:
    """A magenta badge with a dark outline and an enclosed light panel over `background`."""
    image = background.convert("RGB").copy()
    width, height = image.size
    box = (width * 0.25, height * 0.2, width * 0.75, height * 0.8)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle(box, radius=18, fill=(210, 40, 150), outline=(30, 20, 40), width=3)
    inset = (box[0] + 20, box[1] + 20, box[2] - 20, box[3] - 20)
    draw.ellipse(inset, fill=(250, 250, 250))
    mask_image = Image.new("L", image.size, 0)
    ImageDraw.Draw(mask_image).rounded_rectangle(box, radius=18, fill=255)
    return image, np.asarray(mask_image) > 0


GENTLE_GRADIENTS = {
    "vertical": lambda: (
        linear_gradient(
            size=(260, 200),
            start_colour=(205, 228, 246),
            end_colour=(252, 246, 228),
            angle_degrees=90,
        ).image
    ),
    "diagonal": lambda: (
        linear_gradient(
            size=(300, 180),
            start_colour=(230, 236, 250),
            end_colour=(200, 230, 210),
            angle_degrees=35,
        ).image
    ),
    "radial": lambda: (
        radial_gradient(
            size=(240, 240), inner_colour=(255, 252, 240), outer_colour=(215, 225, 240)
        ).image
    ),
    "off-centre radial": lambda: (
        radial_gradient(
            size=(280, 200),
            centre=(60.0, 40.0),
            radius=320.0,
            inner_colour=(250, 250, 255),
            outer_colour=(200, 215, 235),
        ).image
    ),
}


@pytest.mark.parametrize("kind", sorted(GENTLE_GRADIENTS))
def test_a_gentle_gradient_background_is_removed(kind: str) -> None:
    image, logo = logo_over(GENTLE_GRADIENTS[kind]())
    seg = removed(jpeg(image, 85) if kind == "diagonal" else image)
    left = kept(seg)

    assert seg.background_removed
    assert left[logo].mean() >= 0.99
    assert left[~grown(logo, 2)].mean() <= 0.002


def test_a_steep_gradient_background_is_kept_and_the_result_says_so() -> None:
    # Dark blue to yellow: a colourful backdrop, not a tint; documented as kept.
    image, _ = logo_over(linear_gradient(size=(240, 180)).image)
    seg = removed(image)

    assert not seg.background_removed
    assert kept(seg).all()


# --- background_removed tells the truth ---------------------------------------------


def test_transparent_input_counts_as_removed() -> None:
    image = Image.new("RGBA", (120, 90), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse((20, 15, 100, 75), fill=(200, 30, 30, 255))
    seg = removed(image)
    assert seg.background_removed
    alpha = np.asarray(image)[..., 3]
    assert (kept(seg) == (alpha >= 128)).all()


def test_no_uniform_border_removes_nothing() -> None:
    flag = Image.new("RGB", (150, 100), (0, 85, 164))
    draw = ImageDraw.Draw(flag)
    draw.rectangle((50, 0, 99, 99), fill=(255, 255, 255))
    draw.rectangle((100, 0, 149, 99), fill=(239, 65, 53))
    seg = removed(flag)
    assert not seg.background_removed and kept(seg).all()

    rng = np.random.default_rng(5)
    noise = rng.integers(0, 256, (80, 120, 3)).astype(np.uint8)
    seg = removed(Image.fromarray(noise, "RGB"))
    assert not seg.background_removed and kept(seg).all()


def test_a_design_filling_the_canvas_removes_nothing() -> None:
    tiles = Image.new("RGB", (160, 120))
    draw = ImageDraw.Draw(tiles)
    colours = [(220, 40, 40), (40, 160, 60), (30, 60, 200), (240, 200, 40)]
    for row in range(6):
        for col in range(8):
            box = (col * 20, row * 20, col * 20 + 19, row * 20 + 19)
            draw.rectangle(box, fill=colours[(row + col) % 4])
    seg = removed(tiles)
    assert not seg.background_removed and kept(seg).all()

    single = Image.new("RGB", (64, 48), (250, 250, 250))
    seg = removed(single)
    assert not seg.background_removed and kept(seg).all()


def test_the_trace_result_and_the_file_agree_on_removal() -> None:
    image, _, _ = outlined_shirt()
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    result = trace(buffer.getvalue(), TraceOptions(format="png", background="remove"))
    assert result.background_removed
    flat = trace(buffer.getvalue(), TraceOptions(format="png", background=TraceBackground.KEEP))
    assert not flat.background_removed

    rng = np.random.default_rng(9)
    photo = Image.fromarray(rng.integers(0, 256, (60, 80, 3)).astype(np.uint8), "RGB")
    buffer = io.BytesIO()
    photo.save(buffer, "PNG")
    result = trace(buffer.getvalue(), TraceOptions(format="svg", background="remove"))
    assert not result.background_removed


# --- colors=6 on a photo: no holes in the subject -----------------------------------


def studio_portrait(seed: int, size: tuple[int, int] = (240, 300)) -> tuple[Image.Image, Mask]:
    """A photo-like subject on a light studio backdrop: a shaded head with a bright specular
    highlight and a white shirt (shaded, with near-white folds) that runs off the bottom
    edge; camera noise and JPEG. Returns the image and the subject's mask."""
    rng = np.random.default_rng(seed)
    width, height = size
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    backdrop = np.array([214.0, 216.0, 220.0]) + (ys / height)[..., None] * np.array(
        [-14.0, -14.0, -12.0]
    )
    rgb = backdrop.copy()
    cx, cy, rx, ry = width / 2, height * 0.33, width * 0.2, height * 0.2
    head = ((xs - cx) / rx) ** 2 + ((ys - cy) / ry) ** 2 <= 1.0
    shade = np.clip(1.0 - 0.5 * ((xs - cx + rx * 0.4) / rx) ** 2, 0.45, 1.0)
    skin = np.array([226.0, 178.0, 150.0]) * shade[..., None]
    rgb[head] = skin[head]
    highlight = ((xs - cx + rx * 0.3) / 9) ** 2 + ((ys - cy + ry * 0.4) / 6) ** 2 <= 1.0
    rgb[highlight] = (250.0, 246.0, 242.0)
    shirt = (ys >= height * 0.6) & (np.abs(xs - cx) <= width * 0.36 + (ys - height * 0.6) * 0.3)
    neck = (np.abs(xs - cx) <= rx * 0.45) & (ys >= cy) & (ys < height * 0.6)
    rgb[neck] = skin[neck] * 0.9
    folds = 0.5 + 0.5 * np.sin(xs / 7.0 + ys / 23.0)
    cloth = np.array([236.0, 238.0, 242.0]) + folds[..., None] * 17.0
    rgb[shirt] = cloth[shirt]
    rgb = rgb + rng.normal(0.0, 2.5, rgb.shape)
    image = Image.fromarray(np.clip(np.rint(rgb), 0, 255).astype(np.uint8), "RGB")
    return jpeg(image, 85), head | shirt | neck


@pytest.mark.parametrize("seed", [0, 1])
def test_colors_6_on_a_photo_punches_no_holes_in_the_subject(seed: int) -> None:
    image, subject = studio_portrait(seed)
    seg = removed(image, colors=6)
    left = kept(seg)

    assert seg.background_removed
    assert left[shrunk(subject, 2)].all()  # no hole anywhere inside the subject
    assert left[~grown(subject, 3)].mean() <= 0.02  # and the backdrop went
