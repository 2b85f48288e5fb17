"""The book's colours as a reader with a colour-vision deficiency sees them.

- :data:`VERDICT_COLOURS`: one colour per verdict (a blue-to-red diverging scheme with greys for the undecided),
  used for the verdict badges, the summary figure and the forest plots, and nowhere else.
- :func:`simulate`: a colour as seen under deuteranopia or protanopia (Machado, Oliveira and Fernandes 2009,
  severity 1, applied in linear RGB).
- :func:`confusable`: the pairs of a figure's series (legend entries: colour, line style, marker, hatch; within one
  group, a row of small multiples with its own legend) that differ in colour only and whose colours come closer
  than :data:`MIN_DISTANCE` (CIE76 in CIELAB) under either simulation. The browser check reads every figure's
  series from its ``data-series`` attribute (:func:`olr_core.plotting.figure_html`) and fails on such a pair.

numpy only, so that the HTML of the verdicts needs no plotting library.
"""

from __future__ import annotations

import itertools

import numpy as np

MACHADO = {   # linear-RGB matrices of severity 1.0
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
}
MIN_DISTANCE = 15.0           # CIE76 units: below this two thin lines of a figure read as one colour
_SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
_WHITE = np.array([0.95047, 1.0, 1.08883])

VERDICT_COLOURS = {"reproduced": "#2166ac", "partly": "#67a9cf", "smaller than reported": "#f4a261",
                   "not reproduced": "#b2182b", "inconclusive": "#8c8c8c", "not testable here": "#dddddd"}


def rgb(colour) -> np.ndarray:
    """sRGB in [0, 1] of a ``#rrggbb`` string or an (r, g, b[, a]) tuple in [0, 1]."""
    if isinstance(colour, str):
        text = colour.lstrip("#")
        if len(text) != 6:
            raise ValueError(f"colour {colour!r} is not #rrggbb")
        return np.array([int(text[i:i + 2], 16) / 255 for i in (0, 2, 4)])
    return np.asarray(colour, float)[:3]


def hex_colour(colour) -> str:
    return "#" + "".join(f"{round(v * 255):02x}" for v in np.clip(rgb(colour), 0, 1))


def _linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _gamma(c: np.ndarray) -> np.ndarray:
    c = np.clip(c, 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)


def simulate(colours, deficiency: str) -> np.ndarray:
    """sRGB (rows) as seen under ``deficiency`` ("deuteranopia" or "protanopia")."""
    return _gamma(_linear(np.atleast_2d(colours)) @ MACHADO[deficiency].T)


def lab(colours) -> np.ndarray:
    """CIELAB (D65) of sRGB rows."""
    xyz = _linear(np.atleast_2d(colours)) @ _SRGB_TO_XYZ.T / _WHITE
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def cvd_distance(first, second) -> float:
    """The smaller CIE76 distance of two colours under deuteranopia and under protanopia."""
    pair = np.stack([rgb(first), rgb(second)])
    return float(min(np.linalg.norm(np.diff(lab(simulate(pair, kind)), axis=0)) for kind in MACHADO))


def confusable(series: list[dict], min_distance: float = MIN_DISTANCE) -> list[tuple[str, str, float]]:
    """(label, label, distance) of the series pairs a colour-blind reader cannot tell apart: the same line style,
    marker and hatch, and colours closer than ``min_distance`` under deuteranopia or protanopia. A series:
    {label, colour, linestyle?, marker?, hatch?, group?}; series of different groups (rows of small multiples, each
    with its own legend) are never told apart by colour, so only series of one group are compared."""
    def shape(s):
        return tuple(str(s.get(k) or "") for k in ("linestyle", "marker", "hatch"))

    out = []
    for a, b in itertools.combinations(series, 2):
        if a["label"] != b["label"] and a.get("group") == b.get("group") and shape(a) == shape(b):
            distance = cvd_distance(a["colour"], b["colour"])
            if distance < min_distance:
                out.append((a["label"], b["label"], round(distance, 1)))
    return out


def verdict_text_colour(verdict: str) -> str:
    """Black or white, whichever reads better on the verdict's colour (WCAG relative luminance)."""
    luminance = float(_linear(rgb(VERDICT_COLOURS[verdict])) @ np.array([0.2126, 0.7152, 0.0722]))
    return "#000000" if luminance > 0.179 else "#ffffff"
