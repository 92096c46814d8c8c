"""printjob's own hard images: several of every kind issue #12 names, made here at run time.

    .venv/bin/python bench/hard_images.py [--out bench/out/hard]

writes the images, their 4x ground truth where one exists (`gt4x/`) and `manifest.json`
in the format of `shared/corpus-hard/manifest.json` (plus `kind` and, where the words are
known, `words`). `bench/engine_bench.py --set own` calls `build` itself.

Everything is drawn from packages installed for the tests and the benchmark, so nothing is
committed and a fresh clone makes byte-identical images: DejaVu fonts (Debian
fonts-dejavu-core, Bitstream Vera licence), scikit-image's bundled sample photographs
(in the wheel, no download; licences in skimage/data/README.txt), Pillow's drawing and
JPEG encoder, numpy with fixed seeds. Drawn artwork is drawn at 4x and box-reduced to 1x,
so its 4x ground truth is the drawing itself.

Kinds (several images each, none copied from the public hard set):

- ui-text: screenshot-like UI with 8-14 px text (dialogs, a dark status bar, badges);
- hairline: 1-px outline icons on transparency (a pin with its centre dot, a calendar
  with 2-px dots, a crosshair with a thin ring);
- pixel-jpeg: pixel art upscaled nearest and saved as JPEG at quality 55-85;
- stamp / scan: two-tone stamps with ink speckle and uneven light; an unevenly lit scan
  of a printed page; scikit-image's `text` photograph;
- gradient-bg: flat logos with a dark outline on linear and radial gradient backgrounds;
- photo: scikit-image's astronaut, coffee, rocket, immunohistochemistry and
  hubble_deep_field, saved as JPEG;
- logo-jpeg: flat logos saved as low-quality JPEG (quality 35-55);
- emoji-up: small (64 px) emoji-like art blown up 4x bicubic (blurry) on transparency.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.unit.engine import hard_synthetic as synthetic  # noqa: E402

OUT = ROOT / "bench" / "out" / "hard"
FONTS = synthetic.FONT_DIR
SUPERSAMPLE = 4
DEJAVU_LICENCE = "own work for this benchmark; DejaVu fonts: Bitstream Vera licence"
OWN_WORK = "own work for this benchmark (drawn with Pillow)"
RGB = tuple[int, int, int]


def face(pixel_size: int, name: str = "DejaVuSans.ttf") -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONTS / name), pixel_size)


def jpeg_bytes(image: Image.Image, quality: int) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def reduced(big: Image.Image) -> Image.Image:
    """The 4x drawing box-filtered to 1x (anti-aliased edges, as a renderer gives them)."""
    return big.reduce(SUPERSAMPLE)


# --------------------------------------------------------------------------- ui text


class Screen:
    """A drawing surface for screenshot-like UI, at 1x as a screen draws text."""

    def __init__(self, size: tuple[int, int], background: RGB) -> None:
        self.image = Image.new("RGB", size, background)
        self.draw = ImageDraw.Draw(self.image)
        self.words: list[str] = []

    def text(
        self, xy: tuple[int, int], text: str, size: int, fill: RGB, font: str = "DejaVuSans.ttf"
    ) -> None:
        self.draw.text(xy, text, fill=fill, font=face(size, font))
        self.words += text.split()

    def button(self, box: tuple[int, int, int, int], label: str, fill: RGB, ink: RGB) -> None:
        self.draw.rounded_rectangle(box, radius=4, fill=fill)
        font = face(12, "DejaVuSans-Bold.ttf")
        left, top, right, bottom = self.draw.textbbox((0, 0), label, font=font)
        x = (box[0] + box[2] - (right - left)) // 2 - left
        y = (box[1] + box[3] - (bottom - top)) // 2 - top
        self.draw.text((x, y), label, fill=ink, font=font)
        self.words += label.split()

    def checkbox(self, xy: tuple[int, int], label: str, checked: bool) -> None:
        x, y = xy
        self.draw.rectangle((x, y, x + 11, y + 11), outline=(90, 90, 100), width=1)
        if checked:
            self.draw.line(
                (x + 2, y + 6, x + 5, y + 9, x + 10, y + 2), fill=(30, 110, 220), width=2
            )
        self.text((x + 18, y - 1), label, 11, (40, 40, 48))


def ui_settings_dialog() -> tuple[Image.Image, list[str]]:
    screen = Screen((440, 280), (246, 246, 248))
    draw = screen.draw
    draw.rectangle((0, 0, 439, 27), fill=(52, 58, 70))
    screen.text((12, 7), "Print settings", 13, (255, 255, 255), "DejaVuSans-Bold.ttf")
    screen.text((16, 42), "Paper size", 11, (40, 40, 48))
    draw.rectangle((110, 38, 300, 58), fill=(255, 255, 255), outline=(170, 170, 180))
    screen.text((116, 42), "Letter portrait", 11, (20, 20, 24))
    screen.text((16, 72), "Copies", 11, (40, 40, 48))
    draw.rectangle((110, 68, 160, 88), fill=(255, 255, 255), outline=(170, 170, 180))
    screen.text((116, 72), "12", 11, (20, 20, 24))
    screen.checkbox((16, 104), "Print both sides", True)
    screen.checkbox((16, 126), "Collate pages", False)
    screen.checkbox((16, 148), "Black and white only", True)
    screen.text((16, 178), "Colour profile applies to photos only", 9, (110, 110, 120))
    screen.text((16, 194), "Last saved yesterday at noon", 8, (110, 110, 120))
    screen.button((230, 232, 320, 262), "Cancel", (225, 225, 230), (30, 30, 36))
    screen.button((330, 232, 426, 262), "Print", (30, 110, 220), (255, 255, 255))
    return screen.image, screen.words


def ui_dark_status_bar() -> tuple[Image.Image, list[str]]:
    screen = Screen((480, 120), (32, 34, 40))
    draw = screen.draw
    draw.rectangle((0, 0, 479, 22), fill=(22, 23, 28))
    for x, label in ((10, "File"), (48, "Edit"), (88, "View"), (132, "Window"), (192, "Help")):
        screen.text((x, 5), label, 10, (220, 220, 225))
    screen.text((12, 36), "Exporting order", 12, (240, 240, 244), "DejaVuSans-Bold.ttf")
    draw.rectangle((12, 58, 467, 66), fill=(60, 62, 70))
    draw.rectangle((12, 58, 300, 66), fill=(80, 200, 120))
    screen.text((12, 76), "Remaining time about three minutes", 9, (170, 172, 180))
    draw.rectangle((0, 98, 479, 119), fill=(0, 110, 190))
    screen.text((8, 103), "Ready", 10, (255, 255, 255))
    screen.text((380, 104), "Spaces width", 8, (230, 240, 255))
    return screen.image, screen.words


def ui_badges() -> tuple[Image.Image, list[str]]:
    screen = Screen((400, 150), (255, 255, 255))
    draw = screen.draw
    badges = (
        ("Shipped", (34, 139, 34)),
        ("Pending", (230, 150, 0)),
        ("Refund", (200, 40, 40)),
        ("Draft", (110, 110, 120)),
    )
    x = 12
    for label, colour in badges:
        font = face(10, "DejaVuSans-Bold.ttf")
        width = int(font.getlength(label)) + 14
        draw.rounded_rectangle((x, 14, x + width, 32), radius=9, fill=colour)
        draw.text((x + 7, 17), label, fill=(255, 255, 255), font=font)
        screen.words.append(label)
        x += width + 10
    screen.text((12, 48), "Order number 4821 contains three items", 13, (30, 30, 30))
    screen.text((12, 70), "Delivery address changed by customer", 11, (90, 90, 90))
    screen.text((12, 90), "Invoice sent to accounting department", 10, (90, 90, 90))
    screen.text((12, 110), "Tracking code available tomorrow morning", 9, (120, 120, 120))
    screen.text((12, 128), "Terms and conditions apply", 8, (120, 120, 120))
    return screen.image, screen.words


# --------------------------------------------------------------------------- hairlines


def _centres(s: int, *coordinates: int) -> list[float]:
    """1x pixel coordinates as 4x drawing coordinates through the pixels' centres, so a
    line `s` wide covers exactly one 1x pixel across (a crisp 1-px hairline)."""
    return [v * s + s / 2 for v in coordinates]


def hairline_pin(s: int) -> Image.Image:
    """A map pin in 1-px outline with a ring and a 2-px centre dot, 96 px at s = 1."""
    image = Image.new("RGBA", (96 * s, 96 * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    ink = (30, 30, 34, 255)
    draw.ellipse((28 * s, 12 * s, 68 * s, 52 * s), outline=ink, width=s)
    draw.line(_centres(s, 30, 40, 48, 80, 66, 40), fill=ink, width=s)
    draw.ellipse((40 * s, 24 * s, 56 * s, 40 * s), outline=ink, width=s)
    draw.rectangle((47 * s, 31 * s, 49 * s - 1, 33 * s - 1), fill=ink)
    draw.line(_centres(s, 12, 86, 84, 86), fill=ink, width=s)
    return image


def hairline_calendar(s: int) -> Image.Image:
    """A calendar: 1-px frame and grid lines, 2-px dots for the days, a red 1-px ring."""
    image = Image.new("RGBA", (112 * s, 104 * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    ink = (40, 44, 52, 255)
    draw.rounded_rectangle((8 * s, 14 * s, 104 * s, 96 * s), radius=6 * s, outline=ink, width=s)
    draw.line(_centres(s, 8, 30, 104, 30), fill=ink, width=s)
    for x in (30, 82):
        draw.line(_centres(s, x, 6, x, 20), fill=ink, width=s)
    for row in range(4):
        for column in range(6):
            x, y = 18 + column * 15, 40 + row * 14
            draw.rectangle((x * s, y * s, (x + 2) * s - 1, (y + 2) * s - 1), fill=ink)
    red = (210, 40, 40, 255)
    draw.ellipse((59 * s, 67 * s, 73 * s, 81 * s), outline=red, width=s)
    return image


def hairline_crosshair(s: int) -> Image.Image:
    """A blue crosshair: two thin rings, cross lines with a gap, a 2-px dot."""
    image = Image.new("RGBA", (100 * s, 100 * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    ink = (20, 80, 200, 255)
    draw.ellipse((14 * s, 14 * s, 86 * s, 86 * s), outline=ink, width=s)
    draw.ellipse((34 * s, 34 * s, 66 * s, 66 * s), outline=ink, width=s)
    for a, b in ((4, 44), (56, 96)):
        draw.line(_centres(s, a, 50, b, 50), fill=ink, width=s)
        draw.line(_centres(s, 50, a, 50, b), fill=ink, width=s)
    draw.rectangle((49 * s, 49 * s, 51 * s - 1, 51 * s - 1), fill=ink)
    return image


# --------------------------------------------------------------------------- gradients, logos


def _gradient(size: tuple[int, int], radial: bool, start: RGB, end: RGB) -> Image.Image:
    if radial:
        return synthetic.radial_gradient(
            size=size,
            centre=(size[0] * 0.35, size[1] * 0.3),
            radius=max(size) * 0.8,
            inner_colour=start,
            outer_colour=end,
        ).image
    return synthetic.linear_gradient(
        size=size, start_colour=start, end_colour=end, angle_degrees=-60.0
    ).image


def logo(s: int, background: Image.Image | None = None, palette: int = 0) -> Image.Image:
    """A flat badge logo (shield, star, bar, word) with a dark outline, 200 x 160 at s = 1."""
    colours = (
        ((30, 60, 140), (250, 200, 30), (220, 50, 40)),
        ((20, 120, 90), (255, 255, 255), (240, 120, 30)),
    )[palette]
    size = (200 * s, 160 * s)
    image = background.copy() if background is not None else Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    outline = (20, 20, 24)
    shield = [(40 * s, 20 * s), (160 * s, 20 * s), (160 * s, 90 * s), (100 * s, 140 * s)]
    shield.append((40 * s, 90 * s))
    draw.polygon(shield, fill=colours[0], outline=outline, width=3 * s)
    star = []
    for k in range(10):
        radius = (34 if k % 2 == 0 else 14) * s
        angle = np.pi / 2 + k * np.pi / 5
        star.append((100 * s + radius * np.cos(angle), 64 * s - radius * np.sin(angle)))
    draw.polygon(star, fill=colours[1], outline=outline, width=2 * s)
    draw.rectangle((56 * s, 104 * s, 144 * s, 112 * s), fill=colours[2])
    return image


def gradient_logo(s: int, radial: bool) -> Image.Image:
    size = (200 * s, 160 * s)
    if radial:
        background = _gradient(size, True, (255, 248, 225), (200, 120, 60))
    else:
        background = _gradient(size, False, (210, 235, 255), (70, 110, 190))
    return logo(s, background, palette=1 if radial else 0)


# --------------------------------------------------------------------------- emoji


def emoji_face(s: int) -> Image.Image:
    """A 64-px smiley with a rainbow hat band: small colour detail on transparency."""
    image = Image.new("RGBA", (64 * s, 64 * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((6 * s, 10 * s, 58 * s, 62 * s), fill=(255, 204, 51, 255))
    draw.ellipse((20 * s, 28 * s, 27 * s, 38 * s), fill=(70, 40, 20, 255))
    draw.ellipse((37 * s, 28 * s, 44 * s, 38 * s), fill=(70, 40, 20, 255))
    draw.arc((18 * s, 30 * s, 46 * s, 54 * s), 20, 160, fill=(70, 40, 20, 255), width=3 * s)
    bands = ((230, 40, 40), (245, 140, 20), (250, 220, 40), (60, 180, 70), (40, 110, 220))
    for k, colour in enumerate(bands):
        y = (4 + 2 * k) * s
        draw.rectangle((14 * s, y, 50 * s, y + 2 * s - 1), fill=(*colour, 255))
    return image


def emoji_planet(s: int) -> Image.Image:
    """A 64-px planet with a ring and three small coloured moons."""
    image = Image.new("RGBA", (64 * s, 64 * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((16 * s, 16 * s, 48 * s, 48 * s), fill=(150, 90, 200, 255))
    draw.ellipse((4 * s, 27 * s, 60 * s, 37 * s), outline=(240, 170, 60, 255), width=2 * s)
    for (x, y), colour in (
        ((8, 8), (80, 200, 240)),
        ((52, 12), (240, 80, 120)),
        ((50, 52), (90, 200, 90)),
    ):
        draw.ellipse(((x - 3) * s, (y - 3) * s, (x + 3) * s, (y + 3) * s), fill=(*colour, 255))
    return image


# --------------------------------------------------------------------------- scans


def page_scan(seed: int = 0) -> tuple[Image.Image, list[str]]:
    """A printed page photographed under a lamp: 12-px serif text, light falling off to one
    side, a shadow band, slight blur and sensor noise."""
    lines = (
        "The printer must receive the order before noon",
        "so that every proof can be checked by hand.",
        "Colour samples are sent with the first delivery",
        "and the paper weight is written on each box.",
        "Please return signed proofs within two days.",
    )
    image = Image.new("L", (440, 150), 238)
    draw = ImageDraw.Draw(image)
    font = face(12, "DejaVuSerif.ttf")
    for number, line in enumerate(lines):
        draw.text((16, 14 + number * 24), line, fill=30, font=font)
    rng = np.random.default_rng(seed)
    pixels = np.asarray(image.filter(ImageFilter.GaussianBlur(0.6)), np.float64)
    ys, xs = np.mgrid[0 : image.height, 0 : image.width].astype(np.float64)
    light = 1.0 - 0.42 * (xs / image.width) ** 1.5 - 0.12 * np.exp(-(((ys - 110) / 18) ** 2))
    pixels = pixels * light + rng.normal(0.0, 5.0, pixels.shape)
    grey = np.clip(np.round(pixels), 0, 255).astype(np.uint8)
    words = [word.strip(".,") for line in lines for word in line.split()]
    return Image.fromarray(grey, "L").convert("RGB"), words


# --------------------------------------------------------------------------- the set


class Builder:
    """Writes images, ground truths and manifest entries into one folder."""

    def __init__(self, out: Path) -> None:
        self.out = out
        (out / "gt4x").mkdir(parents=True, exist_ok=True)
        self.items: list[dict[str, Any]] = []

    def add(
        self,
        ident: str,
        kind: str,
        klass: str,
        variant: str,
        image: Image.Image | bytes,
        *,
        gt4x: Image.Image | None = None,
        colors: int | None = None,
        colors_exact: bool = False,
        words: list[str] | None = None,
        text: bool = False,
        source: tuple[str, str] = (OWN_WORK, "bench/hard_images.py"),
        licence: str = OWN_WORK,
    ) -> None:
        suffix = ".jpg" if variant == "jpeg" else ".png"
        path = self.out / f"{ident}{suffix}"
        if isinstance(image, bytes):
            path.write_bytes(image)
            with Image.open(path) as decoded:
                width, height = decoded.size
        else:
            image.save(path, optimize=False, compress_level=6)
            width, height = image.size
        entry: dict[str, Any] = {
            "id": ident,
            "kind": kind,
            "class": klass,
            "variant": variant,
            "file": path.name,
            "width": width,
            "height": height,
            "gt4x": None,
            "source": {"package": source[0], "path": source[1]},
            "license": licence,
            "colors": colors,
        }
        if gt4x is not None:
            if gt4x.size != (width * SUPERSAMPLE, height * SUPERSAMPLE):
                raise ValueError(f"{ident}: ground truth {gt4x.size} is not 4x {width}x{height}")
            gt4x.save(self.out / "gt4x" / f"{ident}.png", compress_level=6)
            entry["gt4x"] = f"gt4x/{ident}.png"
        if colors_exact:
            entry["colors_exact"] = True
        if text or words:
            entry["text"] = True
        if words:
            entry["words"] = words
        self.items.append(entry)

    def drawn(
        self,
        ident: str,
        kind: str,
        klass: str,
        variant: str,
        draw: Callable[[int], Image.Image],
        **extra: Any,
    ) -> None:
        """Artwork drawn at 4x (its ground truth) and reduced to 1x for the input."""
        big = draw(SUPERSAMPLE)
        small = reduced(big)
        quality = extra.pop("jpeg_quality", None)
        data: Image.Image | bytes = small if quality is None else jpeg_bytes(small, quality)
        self.add(ident, kind, klass, variant, data, gt4x=big, **extra)

    def write_manifest(self) -> Path:
        manifest = {
            "renderer": "Pillow (drawn at 4x, box-reduced to 1x)",
            "generator": "bench/hard_images.py",
            "items": self.items,
        }
        path = self.out / "manifest.json"
        path.write_text(json.dumps(manifest, indent=1) + "\n")
        return path


def _skimage_photo(name: str) -> Image.Image:
    from skimage import data

    return Image.fromarray(getattr(data, name)())


def build(out: Path = OUT) -> Path:
    """Make the whole set in `out`; returns the manifest's path."""
    b = Builder(out)

    for ident, screen in (
        ("ui-settings-dialog", ui_settings_dialog),
        ("ui-dark-status-bar", ui_dark_status_bar),
        ("ui-badges", ui_badges),
    ):
        image, words = screen()
        b.add(ident, "ui-text", "flat", "white", image, words=words, licence=DEJAVU_LICENCE)

    for ident, icon, colours in (
        ("hairline-pin", hairline_pin, 1),
        ("hairline-calendar", hairline_calendar, 2),
        ("hairline-crosshair", hairline_crosshair, 1),
    ):
        b.drawn(ident, "hairline", "mono", "alpha", icon, colors=colours, colors_exact=True)

    sprites = (
        ("pixel-jpeg-q55", 10, (14, 12), 55, 1, ((24, 24, 32), (250, 250, 245), (230, 60, 50))),
        ("pixel-jpeg-q70", 12, (16, 16), 70, 2, synthetic.pixel_grid().palette),
        (
            "pixel-jpeg-q85",
            8,
            (20, 24),
            85,
            3,
            ((40, 30, 60), (120, 200, 90), (250, 210, 60), (90, 160, 230), (240, 240, 240)),
        ),
    )
    for ident, cell, grid, quality, seed, palette in sprites:
        clean = synthetic.pixel_grid(
            cell=cell, grid=grid, palette=palette, jpeg_quality=None, seed=seed
        )
        gt = clean.image.resize(
            (clean.image.width * SUPERSAMPLE, clean.image.height * SUPERSAMPLE),
            Image.Resampling.NEAREST,
        )
        b.add(
            ident,
            "pixel-jpeg",
            "flat",
            "jpeg",
            jpeg_bytes(clean.image, quality),
            gt4x=gt,
            colors=len(palette),
            colors_exact=True,
        )

    for ident, text, ink, paper, seed in (
        ("stamp-paid-red", "PAID", (190, 30, 40), (246, 238, 220), 4),
        ("stamp-copy-blue", "COPY", (30, 60, 160), (250, 250, 246), 5),
    ):
        stamp = synthetic.stamp(size=(300, 190), ink=ink, paper=paper, text=text, seed=seed)
        b.add(ident, "stamp", "mono", "white", stamp.image, colors=2, colors_exact=True)
    page, words = page_scan()
    b.add("scan-page-uneven", "scan", "mono", "jpeg", jpeg_bytes(page, 80), colors=2, words=words)
    b.add(
        "sk-text-photo",
        "scan",
        "mono",
        "white",
        _skimage_photo("text").convert("RGB"),
        text=True,
        source=("scikit-image (PyPI), skimage/data", "text.png"),
        licence="public domain (scikit-image sample data, see skimage/data/README.txt)",
    )

    b.drawn(
        "gradient-bg-linear", "gradient-bg", "gradient", "white", lambda s: gradient_logo(s, False)
    )
    b.drawn(
        "gradient-bg-radial", "gradient-bg", "gradient", "white", lambda s: gradient_logo(s, True)
    )

    for ident, name, quality in (
        ("sk-astronaut-jpeg90", "astronaut", 90),
        ("sk-coffee-jpeg85", "coffee", 85),
        ("sk-rocket-jpeg85", "rocket", 85),
    ):
        b.add(
            ident,
            "photo",
            "photo",
            "jpeg",
            jpeg_bytes(_skimage_photo(name), quality),
            source=("scikit-image (PyPI), skimage/data", f"{name} sample image"),
            licence="public domain / CC0 (scikit-image sample data, see skimage/data/README.txt)",
        )
    # Two photos vtracer's default traced closer than printjob (session 5): fine texture in
    # two stains, and small galaxies on a black sky (its longest side reduced to 512 px).
    for ident, name, licence in (
        (
            "sk-immunohistochemistry-jpeg90",
            "immunohistochemistry",
            "no known copyright restrictions (CMMI; scikit-image sample data)",
        ),
        (
            "sk-hubble-deep-field-jpeg90",
            "hubble_deep_field",
            "public domain (NASA/HubbleSite; scikit-image sample data)",
        ),
    ):
        photo = _skimage_photo(name)
        photo.thumbnail((512, 512), Image.Resampling.LANCZOS)
        b.add(
            ident,
            "photo",
            "photo",
            "jpeg",
            jpeg_bytes(photo, 90),
            source=("scikit-image (PyPI), skimage/data", f"{name} sample image"),
            licence=licence,
        )

    b.drawn(
        "logo-jpeg-q35",
        "logo-jpeg",
        "flat",
        "jpeg",
        lambda s: logo(s),
        jpeg_quality=35,
        colors=4,
        colors_exact=True,
    )
    b.drawn(
        "logo-jpeg-q50",
        "logo-jpeg",
        "flat",
        "jpeg",
        lambda s: logo(s, palette=1),
        jpeg_quality=50,
        colors=4,
        colors_exact=True,
    )

    for ident, emoji, colours in (
        ("emoji-face-64up4", emoji_face, 7),
        ("emoji-planet-64up4", emoji_planet, 5),
    ):
        small = reduced(emoji(SUPERSAMPLE))  # the 64-px emoji
        blurry = small.resize((small.width * 4, small.height * 4), Image.Resampling.BICUBIC)
        b.add(
            ident, "emoji-up", "flat", "alpha", blurry, gt4x=emoji(4 * SUPERSAMPLE), colors=colours
        )

    return b.write_manifest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=OUT, help="folder to write (default %(default)s)"
    )
    args = parser.parse_args()
    manifest = build(args.out)
    count = len(json.loads(manifest.read_text())["items"])
    print(f"wrote {count} images and {manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
