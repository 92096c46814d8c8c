"""Colour-space conversions for the segmentation stage, vectorised over any leading shape.

sRGB values are floats on 0..255 (the scale of the decoded image and of the palette).
OKLab is returned scaled by 100 so that one unit is roughly one just-noticeable
difference, the same order as CIELAB's ΔE; tolerances in this package use that scale.
CIELAB (D65) and CIEDE2000 are here for measuring palette accuracy against a reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.floating[Any]]

#: OKLab is scaled by this so one unit ~ one just-noticeable difference.
OKLAB_SCALE = 100.0

_M1 = np.array(
    [
        [0.4122214708, 0.5363325363, 0.0514459929],
        [0.2119034982, 0.6806995451, 0.1073969566],
        [0.0883024619, 0.2817188376, 0.6299787005],
    ]
)
_M2 = np.array(
    [
        [0.2104542553, 0.7936177850, -0.0040720468],
        [1.9779984951, -2.4285922050, 0.4505937099],
        [0.0259040371, 0.7827717662, -0.8086757660],
    ]
)
_M1_INV = np.linalg.inv(_M1)
_M2_INV = np.linalg.inv(_M2)

_RGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883])

#: sRGB byte -> linear light, so uint8 images convert with one table look-up.
_LINEAR_LUT = np.where(
    np.arange(256) / 255.0 <= 0.04045,
    np.arange(256) / 255.0 / 12.92,
    ((np.arange(256) / 255.0 + 0.055) / 1.055) ** 2.4,
)


def srgb_to_linear(rgb: npt.ArrayLike) -> FloatArray:
    """sRGB 0..255 (uint8 or float) -> linear light 0..1 (float64, or float32 for uint8)."""
    arr = np.asarray(rgb)
    if arr.dtype == np.uint8:
        lut: FloatArray = _LINEAR_LUT.astype(np.float32)[arr]
        return lut
    c = np.clip(arr.astype(np.float64) / 255.0, 0.0, 1.0)
    out: FloatArray = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return out


def linear_to_srgb(linear: npt.ArrayLike) -> FloatArray:
    """Linear light 0..1 -> sRGB 0..255 floats (clipped to the gamut)."""
    c = np.clip(np.asarray(linear, dtype=np.float64), 0.0, 1.0)
    out: FloatArray = 255.0 * np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)
    return out


def linear_to_oklab(linear: npt.ArrayLike) -> FloatArray:
    """Linear sRGB 0..1 -> OKLab scaled by `OKLAB_SCALE` (keeps float32 input float32)."""
    lin = np.asarray(linear)
    dtype = np.float32 if lin.dtype == np.float32 else np.float64
    lms = lin.astype(dtype) @ _M1.T.astype(dtype)
    out: FloatArray = (np.cbrt(lms) @ (_M2.T * OKLAB_SCALE).astype(dtype)).astype(dtype)
    return out


def srgb_to_oklab(rgb: npt.ArrayLike) -> FloatArray:
    """sRGB 0..255 -> OKLab scaled by `OKLAB_SCALE`."""
    return linear_to_oklab(srgb_to_linear(rgb))


def oklab_to_srgb(lab: npt.ArrayLike) -> FloatArray:
    """Scaled OKLab -> sRGB 0..255 floats (clipped to the gamut)."""
    lms = (np.asarray(lab, dtype=np.float64) / OKLAB_SCALE) @ _M2_INV.T
    return linear_to_srgb((lms**3) @ _M1_INV.T)


def srgb_to_lab(rgb: npt.ArrayLike) -> FloatArray:
    """sRGB 0..255 -> CIELAB (D65, 2° observer)."""
    xyz = np.asarray(srgb_to_linear(np.asarray(rgb, dtype=np.float64))) @ _RGB_TO_XYZ.T
    t = xyz / _WHITE_D65
    eps = 216 / 24389
    f = np.where(t > eps, np.cbrt(t), (24389 / 27 * t + 16) / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])],
        axis=-1,
    )


def ciede2000(lab1: npt.ArrayLike, lab2: npt.ArrayLike) -> FloatArray:
    """CIEDE2000 colour difference between CIELAB colours (broadcasting over leading axes)."""
    a1 = np.asarray(lab1, dtype=np.float64)
    a2 = np.asarray(lab2, dtype=np.float64)
    l1, x1, y1 = a1[..., 0], a1[..., 1], a1[..., 2]
    l2, x2, y2 = a2[..., 0], a2[..., 1], a2[..., 2]
    c_bar = (np.hypot(x1, y1) + np.hypot(x2, y2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    x1p, x2p = (1 + g) * x1, (1 + g) * x2
    c1p, c2p = np.hypot(x1p, y1), np.hypot(x2p, y2)
    h1p = np.degrees(np.arctan2(y1, x1p)) % 360
    h2p = np.degrees(np.arctan2(y2, x2p)) % 360
    dl = l2 - l1
    dc = c2p - c1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(c1p * c2p == 0, 0.0, dh)
    d_big_h = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_bar = (l1 + l2) / 2
    cp_bar = (c1p + c2p) / 2
    h_sum = h1p + h2p
    hp_bar = np.where(
        c1p * c2p == 0,
        h_sum,
        np.where(
            np.abs(h1p - h2p) <= 180,
            h_sum / 2,
            np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2),
        ),
    )
    t = (
        1
        - 0.17 * np.cos(np.radians(hp_bar - 30))
        + 0.24 * np.cos(np.radians(2 * hp_bar))
        + 0.32 * np.cos(np.radians(3 * hp_bar + 6))
        - 0.20 * np.cos(np.radians(4 * hp_bar - 63))
    )
    d_theta = 30 * np.exp(-(((hp_bar - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_bar**7 / (cp_bar**7 + 25.0**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    out: FloatArray = np.sqrt(
        (dl / s_l) ** 2
        + (dc / s_c) ** 2
        + (d_big_h / s_h) ** 2
        + r_t * (dc / s_c) * (d_big_h / s_h)
    )
    return out


def delta_e2000_srgb(rgb1: npt.ArrayLike, rgb2: npt.ArrayLike) -> FloatArray:
    """CIEDE2000 between sRGB 0..255 colours."""
    return ciede2000(srgb_to_lab(rgb1), srgb_to_lab(rgb2))


def lab_to_srgb(lab: npt.ArrayLike) -> FloatArray:
    """CIELAB (D65) -> sRGB 0..255 floats (clipped to the gamut)."""
    arr = np.asarray(lab, dtype=np.float64)
    fy = (arr[..., 0] + 16) / 116
    f = np.stack([fy + arr[..., 1] / 500, fy, fy - arr[..., 2] / 200], axis=-1)
    eps = 6 / 29
    t = np.where(f > eps, f**3, (116 * f - 16) * 27 / 24389)
    return linear_to_srgb((t * _WHITE_D65) @ np.linalg.inv(_RGB_TO_XYZ).T)
