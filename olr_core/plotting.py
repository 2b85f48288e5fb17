"""One house style for every figure of the book (matplotlib + seaborn).

- One colour and one line style per algorithm for the whole book (:data:`ALGORITHM_STYLES`,
  keyed by the command-line name; a DSP variant shares its base's colour, dashed; the
  growing-library rankers, which never share a figure with the LETOR learners, reuse
  colours with a dotted line; a neural scorer shares its linear method's colour, dash-dot-dot), and one
  per user type (:data:`USER_STYLES`). Other hue values (e.g. rank positions) take the
  palette in order of appearance.
- Bands: a 95% t-interval of the mean when every point rests on at least
  :data:`MIN_RUNS_FOR_CI` runs, otherwise +-1 standard error; the figure says which.
- Curves are bounded to the metric's range (NDCG in [0, 1], cosine in [-1, 1]); per-round
  series can be smoothed with a stated window.
- Readable at the book's content width: at most :data:`MAX_CURVES` curves a panel (more go to one
  row per family of :data:`names.FAMILIES`), at most :data:`PANELS_PER_ROW` panels a row, hues
  distinct within each family, and a y-axis per panel where the panels' data differ in scale.
- Every figure a page shows goes through :func:`show_figure`, which puts it in a ``<figure>`` with
  a caption saying what to look for (chapter pages wrap a glued figure and its caption in the
  ``olr-figure`` / ``olr-caption`` containers).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .colours import VERDICT_COLOURS, confusable, hex_colour, verdict_text_colour  # noqa: F401  (re-exported)
from .experiments.results import mean_ci
from .names import DISPLAY_NAMES, FAMILIES, FAMILY_OF, display_name  # noqa: F401  (re-exported)

MIN_RUNS_FOR_CI = 5
# Every algorithm of the book, in the order legends list them.
ALGORITHM_ORDER = ["olranknet", "ollambdarank", "ollambdarank_gt", "pairrank_c", "pairrank_r", "pdgd", "neural_pdgd",
                   "sgd_ranknet", "epsilon_greedy", "dbgd", "neural_dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd",
                   "nsgd_dsp", "topk_ranksvm", "topk_kl", "topk_squared", "topk_smoothdcg", "listnet_full",
                   "klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits", "pagerank",
                   "mcrank", "offline_ranknet", "offline_lambdarank", "oracle", "random"]
# One colour per base method, and no other meaning anywhere in the book (users, data sets and grades are drawn in
# black and greys, verdicts in :data:`colours.VERDICT_COLOURS`). Chosen so that every two methods that share a
# figure with the same line style (:data:`SHARED_FIGURES`) stay apart under simulated deuteranopia and protanopia
# (:func:`colours.confusable`), and every two methods apart in normal vision; checked by tests/test_plotting.py.
METHOD_COLOURS = {
    "dbgd": "#669248", "mgd": "#766efa", "nsgd": "#be7ecf", "pdgd": "#1074c6", "pairrank_c": "#3aa27d",
    "pairrank_r": "#ef62b5", "sgd_ranknet": "#2c5f3c", "epsilon_greedy": "#565207", "olranknet": "#1fa0d8",
    "ollambdarank": "#7d3436", "ollambdarank_gt": "#4c4595", "listnet_full": "#c15e58", "offline_ranknet": "#1f38c2",
    "offline_lambdarank": "#75268e", "oracle": "#7e3f68", "random": "#ba881d", "topk_squared": "#ff1596",
    "topk_kl": "#d26af2", "topk_ranksvm": "#115d04", "topk_smoothdcg": "#ea7601", "klrank_gper": "#8e9f16",
    "klrank_greedy": "#af0265", "online_ranknet_gper": "#8785c3", "category_ranking": "#cb7fa2", "hits": "#8c05b4",
    "pagerank": "#b30542", "mcrank": "#773b09"}
_REFERENCES = ["offline_ranknet", "offline_lambdarank", "oracle", "random"]
# The methods each figure of the book draws together: a paper's learners with the references, and each family.
SHARED_FIGURES = {
    "dsp": ["dbgd", "mgd", "nsgd"],
    "pairrank": ["pairrank_c", "pairrank_r", "pdgd", "epsilon_greedy", "sgd_ranknet", "dbgd", "mgd", *_REFERENCES],
    "neural": ["olranknet", "ollambdarank", "pairrank_c", "epsilon_greedy", "pdgd", "dbgd", *_REFERENCES],
    "topk": ["topk_squared", "topk_kl", "topk_ranksvm", "topk_smoothdcg", "listnet_full", *_REFERENCES],
    "klrank": ["klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits", "pagerank",
               "mcrank", "random"],
    **FAMILIES,
}
_LIBRARY = {"klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits", "pagerank", "mcrank"}
_NEURAL_VARIANT = (0, (5, 1.5, 1, 1.5, 1, 1.5))      # dash-dot-dot: the neural scorer of a linear method
ALGORITHM_STYLES = {     # DSP variants dashed; top-k learners dash-dotted; growing-library rankers dotted
    name: {"color": METHOD_COLOURS[name.removesuffix("_dsp").removeprefix("neural_")],
           "linestyle": "--" if name.endswith("_dsp") else "-." if name.startswith("topk_") else
           ":" if name in _LIBRARY else _NEURAL_VARIANT if name.startswith("neural_") else
           (0, (1, 1)) if name == "ollambdarank_gt" else "-"}
    for name in ALGORITHM_ORDER
}
# Whatever is not a method (users, data sets, categories): black and greys told apart by line style, never a
# method's colour.
NEUTRAL_STYLES = [{"color": "#000000", "linestyle": "-"}, {"color": "#5a5a5a", "linestyle": "--"},
                  {"color": "#8c8c8c", "linestyle": ":"}, {"color": "#000000", "linestyle": "-."},
                  {"color": "#5a5a5a", "linestyle": _NEURAL_VARIANT}, {"color": "#8c8c8c", "linestyle": "-"}]
NEUTRAL_FILLS = ["#3d3d3d", "#8c8c8c", "#cfcfcf", "#666666", "#b0b0b0"]   # non-method bars (their error bars black)
# One style per user model for the whole book: the papers' three cascade users first (their styles as above), then
# the users of the click-model literature (robustness, click models). Black and greys only, each with a line style
# and a marker of its own, so that no two users differ by colour alone (tests/test_plotting.py).
USER_STYLES = {user: NEUTRAL_STYLES[i] for i, user in enumerate(("perfect", "navigational", "informational"))}
USER_STYLES |= {"dbn": {"color": "#000000", "linestyle": "-."},
                "ccm": {"color": "#5a5a5a", "linestyle": _NEURAL_VARIANT},
                "pbm": {"color": "#8c8c8c", "linestyle": "-"},
                "ubm": {"color": "#000000", "linestyle": (0, (1, 1))},
                "sdbn": {"color": "#5a5a5a", "linestyle": "-"},
                "trust_bias": {"color": "#5a5a5a", "linestyle": (0, (8, 2))},
                "navigational+noise": {"color": "#8c8c8c", "linestyle": "-."}}
USER_MARKERS = {"perfect": "o", "navigational": "s", "informational": "^", "dbn": "D", "ccm": "v", "pbm": "P",
                "ubm": "X", "sdbn": "d", "trust_bias": "*", "navigational+noise": "h"}
# A fitted click model is drawn as the user it generalises: the cascade as the navigational user, the noisy
# cascade as the noisy user, every other family as its own user.
USER_OF_FAMILY = {"cascade": "navigational", "cascade+noise": "navigational+noise"}
BOUNDS = {"ndcg": (0.0, 1.0), "cosine": (-1.0, 1.0)}


def set_style() -> None:
    """The book's style: white grid, readable sizes; a series drawn without a colour of its own (not a method) is
    black or grey (:data:`NEUTRAL_STYLES`), never a method's colour."""
    from cycler import cycler

    sns.set_theme(context="notebook", style="whitegrid")
    neutral = cycler(color=list(dict.fromkeys(s["color"] for s in NEUTRAL_STYLES)))   # line styles stay the caller's
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.titleweight": "bold",
                         "legend.frameon": False, "axes.prop_cycle": neutral})


def style_of(name, fallback_index: int = 0) -> dict:
    """Colour and line style of an algorithm or user type (the same on every page of the book); anything else
    takes a neutral style (black or grey, with its own line style and marker)."""
    key = str(name)
    if key in ALGORITHM_STYLES:
        return dict(ALGORITHM_STYLES[key])
    if user_key(key) in USER_STYLES:
        return dict(USER_STYLES[user_key(key)])
    base = key.split("(")[0]                     # a label such as "mgd_dsp(dsp_lambda=0.5)"
    if base in ALGORITHM_STYLES:
        return dict(ALGORITHM_STYLES[base])
    return dict(NEUTRAL_STYLES[fallback_index % len(NEUTRAL_STYLES)])


# A scatter of many methods tells families apart by marker (a DSP variant by its own): with the colours, unique
# to a colour-blind reader within each marker (tests/test_plotting.py).
FAMILY_MARKERS = {"dueling bandit gradient descent": "o", "pairwise learners": "s", "neural online learners": "^",
                  "top-k feedback": "D", "growing library": "v", "references": "X"}


def user_key(name) -> str:
    """The user model of a user's name: "navigational+noise=0.1" -> "navigational+noise", "dbn:gamma=0.5" -> "dbn",
    a fitted family ("cascade") -> the user it is drawn as (:data:`USER_OF_FAMILY`)."""
    key = str(name).split(":")[0].split("=")[0]
    return USER_OF_FAMILY.get(key, key)


def user_style(name, fallback_index: int = 0) -> dict:
    """Colour, line style and marker of a user model (or of a fitted click-model family), the same on every page:
    :data:`USER_STYLES` and :data:`USER_MARKERS`; an unknown user takes a neutral style and a marker of its own."""
    key = user_key(name)
    if key in USER_STYLES:
        return {**USER_STYLES[key], "marker": USER_MARKERS[key]}
    spare = ["p", "<", ">", "d", "8"]
    return {**NEUTRAL_STYLES[fallback_index % len(NEUTRAL_STYLES)], "marker": spare[fallback_index % len(spare)]}


def marker_of(name) -> str:
    """The scatter marker of a method: its family's, a DSP variant's own ("P")."""
    key = str(name).split("(")[0]
    return "P" if key.endswith("_dsp") else FAMILY_MARKERS.get(FAMILY_OF.get(key, ""), "o")


def ordered(values) -> list:
    """Hue values in the book's legend order: algorithms by :data:`ALGORITHM_ORDER`, users by
    perfect, navigational, informational, anything else as it first appears."""
    seen = list(dict.fromkeys(values))
    rank = {n: i for i, n in enumerate(ALGORITHM_ORDER + list(USER_STYLES))}
    return sorted(seen, key=lambda v: (rank.get(str(v).split("(")[0], len(rank)), seen.index(v)))


def band(stats: pd.DataFrame) -> tuple[np.ndarray, str]:
    """Half-widths of the band for ``mean_ci`` rows, and its description for the caption."""
    if len(stats) and stats["n"].min() >= MIN_RUNS_FOR_CI:
        return stats["ci"].fillna(0).to_numpy(), f"95% t-interval of the mean over {int(stats['n'].min())} runs"
    se = (stats["std"] / np.sqrt(stats["n"])).fillna(0).to_numpy()
    runs = int(stats["n"].min()) if len(stats) else 0
    return se, f"±1 standard error over {runs} run{'s' if runs != 1 else ''} (fewer than {MIN_RUNS_FOR_CI})"


def bounds_for(ylabel: str):
    """The metric's range for a per-round metric (NDCG in [0, 1], cosine in [-1, 1]); none for a cumulative
    one, whose sum over rounds runs far beyond the per-round range."""
    text = ylabel.lower()
    if "cumulative" in text:
        return None
    return next((b for key, b in BOUNDS.items() if key in text), None)


MAX_CURVES = 6          # more curves than this in one panel tangle: the families go to rows of small multiples
PANELS_PER_ROW = 3      # at the book's content width (about 750 px) a panel stays about 240 px wide
FIGURE_WIDTH = 9.5      # inches: the whole figure, so the book scales every figure alike


def curve_groups(hues: list, max_curves: int = MAX_CURVES, families: dict | None = None) -> list[tuple[str, list]]:
    """Hue values split into rows of at most ``max_curves``: whole families (``families``, by default
    :data:`names.FAMILIES`) packed in order, a family larger than the limit cut into parts. One row
    titled "" when everything fits."""
    if len(hues) <= max_curves:
        return [("", list(hues))]
    families = FAMILIES if families is None else families
    family_of = {n: f for f, members in families.items() for n in members}
    by_family: dict[str, list] = {f: [] for f in families}
    for name in hues:
        by_family.setdefault(family_of.get(str(name).split("(")[0], "others"), []).append(name)
    parts = [(f, members[i:i + max_curves]) for f, members in by_family.items() if members
             for i in range(0, len(members), max_curves)]
    rows: list[tuple[str, list]] = []
    for family, members in parts:
        if rows and len(rows[-1][1]) + len(members) <= max_curves:
            rows[-1] = (rows[-1][0] + "; " + family, rows[-1][1] + members)
        else:
            rows.append((family, list(members)))
    return rows


def comparable(ranges: list[tuple[float, float]], share: float = 0.5) -> bool:
    """Whether panels with these (low, high) data ranges can share one y-axis: each range covers at
    least ``share`` of their union (else the smaller ones are squeezed flat or cut off)."""
    ranges = [r for r in ranges if np.isfinite(r).all()]
    if len(ranges) < 2:
        return True
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
    return high <= low or all((r[1] - r[0]) >= share * (high - low) for r in ranges)


def _draw_curve(ax, line: pd.DataFrame, x: str, name, style: dict, smooth: int, limits) -> str:
    """One mean curve with its band (see :func:`band`); returns the band's description."""
    half, note = band(line)
    mean = line["mean"].to_numpy()
    if smooth > 1:
        mean = pd.Series(mean).rolling(smooth, min_periods=1).mean().to_numpy()
        half = pd.Series(half).rolling(smooth, min_periods=1).mean().to_numpy()
    low, high = mean - half, mean + half
    if limits is not None:
        low, high = np.clip(low, *limits), np.clip(high, *limits)
    ax.plot(line[x], mean, label=display_name(name), lw=1.6, **style)
    ax.fill_between(line[x], low, high, color=style["color"], alpha=0.15, lw=0)
    return note


def _draw_reference(ax, reference: dict | None, panel) -> None:
    """Horizontal reference lines (a height, or {panel value: height}), labelled at the left."""
    for ref_name, height_ in (reference or {}).items():
        level = height_.get(panel) if isinstance(height_, dict) else height_
        if level is not None:
            ax.axhline(level, ls=":", color="grey", lw=1)
            ax.annotate(ref_name, (ax.get_xlim()[0], level), xytext=(4, 3), textcoords="offset points",
                        fontsize=8, color="grey")


def plot_curves(frame: pd.DataFrame, hue: str = "label", col: str | None = "click_model", x: str = "round",
                ylabel: str = "NDCG@10", reference: dict | None = None, height: float = 2.6, sharey="auto",
                smooth: int = 1, max_curves: int = MAX_CURVES, families: dict | None = None):
    """Mean curve per ``hue`` with a band over runs (see :func:`band`), one panel per ``col`` value.

    At most ``max_curves`` curves share a panel: with more, each family (``families``, by default
    :data:`names.FAMILIES`) gets its own row of panels. Panels wrap at :data:`PANELS_PER_ROW`.
    ``sharey``: True, False, or "auto" (one y-axis for all panels unless their data ranges differ
    in scale, see :func:`comparable`; rows of the same ``col`` value always share theirs).
    ``reference`` maps a name to a horizontal line's height or to {panel value: height}.
    ``smooth`` > 1 averages each mean curve over a moving window of that many points (stated under
    the figure). The figure's ``band_note`` attribute holds the caption text for the bands.
    """
    panels = list(dict.fromkeys(frame[col])) if col else [None]
    if col in ("click_model",):
        panels = ordered(panels)
    hues = ordered(frame[hue])
    styles = {name: style_of(name, i) for i, name in enumerate(hues)}
    groups = curve_groups(hues, max_curves, families)
    ncols = min(len(panels), PANELS_PER_ROW)
    wraps = -(-len(panels) // ncols)
    fig = plt.figure(figsize=(FIGURE_WIDTH if len(panels) > 1 else 6.0, (height + 0.9) * wraps * len(groups)),
                     layout="constrained")
    subfigs = np.atleast_1d(fig.subfigures(len(groups), 1, squeeze=False).ravel())
    limits, notes, by_panel = bounds_for(ylabel), set(), {}
    stats = {panel: mean_ci(frame if panel is None else frame[frame[col] == panel], [hue, x]) for panel in panels}
    for sub, (title, members) in zip(subfigs, groups):
        axes = sub.subplots(wraps, ncols, squeeze=False).ravel()
        for ax in axes[len(panels):]:
            ax.set_visible(False)
        for ax, panel in zip(axes, panels):
            for name in members:
                line = stats[panel][stats[panel][hue] == name]
                if not line.empty:
                    notes.add(_draw_curve(ax, line, x, name, styles[name], smooth, limits))
            by_panel.setdefault(panel, []).append(ax)
            ax.set_title(display_name(panel) if panel is not None else "", fontsize=10)
            ax.set_xlabel(x)
        for ax in axes[::ncols]:
            ax.set_ylabel(ylabel)
        seen = {}
        for ax in axes[:len(panels)]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        sub.legend(list(seen.values()), list(seen), loc="outside lower center", ncol=min(len(seen), 3), fontsize=9)
        if title:
            sub.suptitle(title, fontsize=10, x=0.0, ha="left", style="italic")
    for panel, axes in by_panel.items():            # before the y-ranges, so a reference line stays in view
        for ax in axes:
            _draw_reference(ax, reference, panel)
    _set_ylims(by_panel, sharey, limits)
    note = "Bands: " + "; ".join(sorted(notes)) + (f". Curves smoothed over {smooth} points." if smooth > 1 else ".")
    fig.band_note = note
    fig.text(0.0, 0.0, note, fontsize=8, color="dimgrey", ha="left", va="top", transform=fig.transFigure)
    return fig



def _set_ylims(by_panel: dict, sharey, limits) -> None:
    """One y-range per panel value (over its rows), one for all when ``sharey`` says so, clipped to the metric."""
    ranges = {panel: (min(ax.get_ylim()[0] for ax in axes), max(ax.get_ylim()[1] for ax in axes))
              for panel, axes in by_panel.items()}
    if sharey is True or (sharey == "auto" and comparable(list(_data_ranges(by_panel).values()))):
        union = (min(r[0] for r in ranges.values()), max(r[1] for r in ranges.values()))
        ranges = dict.fromkeys(ranges, union)
    for panel, axes in by_panel.items():
        low, high = ranges[panel]
        if limits is not None:
            low, high = max(limits[0], low), min(limits[1], high)
        for ax in axes:
            ax.set_ylim(low, high)


def _data_ranges(by_panel: dict) -> dict:
    """(lowest, highest) mean plotted in each panel value's axes."""
    out = {}
    for panel, axes in by_panel.items():
        ys = np.concatenate([np.asarray(line.get_ydata(), float) for ax in axes for line in ax.get_lines()] or
                            [np.array([np.nan])])
        ys = ys[np.isfinite(ys)]
        out[panel] = (ys.min(), ys.max()) if len(ys) else (np.nan, np.nan)
    return out


def _png_source(fig) -> str:
    """The figure as a ``data:`` URI of its PNG (a page that pastes it needs no image file)."""
    import base64
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def figure_series(fig) -> list[dict]:
    """What tells a figure's series apart, from its legends (the figure's, its subfigures' and its axes'; without
    a legend, the axes' labelled artists): per label its colour, line style, marker and hatch. A subfigure with a
    legend of its own (a row of small multiples, :func:`plot_curves`) is read on its own: its series carry the
    ``group`` "row N", and only series of one group need colours a colour-blind reader tells apart."""
    subfigs = [sub for sub in getattr(fig, "subfigs", []) if sub.legends]
    groups = [(None, lg) for lg in fig.legends] + [(f"row {i + 1}", lg) for i, sub in enumerate(subfigs)
                                                    for lg in sub.legends]
    groups += [(None, ax.get_legend()) for ax in fig.axes if ax.get_legend() is not None]
    pairs = [(group, h, t.get_text()) for group, lg in groups for h, t in zip(lg.legend_handles, lg.get_texts())]
    if not groups:
        pairs = [(None, *p) for ax in fig.axes for p in zip(*ax.get_legend_handles_labels())]
    series = {}
    for group, handle, label in pairs:
        if label and not label.startswith("_") and handle is not None:
            series.setdefault((group, label), {"label": label, **_appearance(handle)} | ({"group": group} if group
                                                                                       else {}))
    return list(series.values())


def _appearance(handle) -> dict:
    """Colour (hex), line style, marker and hatch of a legend handle (a line, a patch or a scatter)."""
    from matplotlib.collections import Collection
    from matplotlib.colors import to_rgb
    from matplotlib.lines import Line2D

    if isinstance(handle, Line2D):
        dashes = getattr(handle, "_unscaled_dash_pattern", None)
        style = handle.get_linestyle() if dashes is None or dashes[1] is None else str(dashes)
        marker = handle.get_marker()
        return {"colour": hex_colour(to_rgb(handle.get_color())), "linestyle": style,
                "marker": "" if marker in (None, "None", "") else str(marker)}
    if isinstance(handle, Collection):
        faces = handle.get_facecolor()
        if not len(faces) or not np.any(np.asarray(faces)[:, 3]):     # lines only (an error bar's): their colour
            faces = handle.get_edgecolor()
        paths = handle.get_paths()
        marker = str(np.round(paths[0].vertices, 2).tolist()) if len(paths) else ""
        return {"colour": hex_colour(faces[0] if len(faces) else (0, 0, 0)), "marker": marker,
                "hatch": handle.get_hatch() or ""}
    colour = handle.get_facecolor() if hasattr(handle, "get_facecolor") else (0, 0, 0)
    return {"colour": hex_colour(colour), "hatch": getattr(handle, "get_hatch", lambda: "")() or ""}


def figure_html(fig, caption: str) -> str:
    """The figure as an HTML ``<figure>`` (PNG inline) with ``caption`` as its ``<figcaption>``; `code` spans
    in the caption render as code. The ``<figure>`` carries its series (:func:`figure_series`) in ``data-series``
    for the browser check's colour-vision test."""
    import html
    import json
    import re

    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(caption.strip()))
    alt = html.escape(re.sub(r"[`*]", "", caption.strip().split(". ")[0]), quote=True)
    series = html.escape(json.dumps(figure_series(fig)), quote=True)
    return (f'<figure class="olr-figure" data-series="{series}"><img src="{_png_source(fig)}" alt="{alt}" '
            f'style="max-width: 100%"><figcaption class="olr-caption">{text}</figcaption></figure>')


def inline_image(fig, alt: str):
    """The figure as an inline PNG ``<img>`` (IPython HTML) to glue for a chapter page, which adds the caption:
    a glued matplotlib figure is pasted as an image file that only the page showing the same PNG would write,
    while :func:`show_figure` shows figures inline. The image carries the figure's series in ``data-series``."""
    import html
    import json

    from IPython.display import HTML

    series = html.escape(json.dumps(figure_series(fig)), quote=True)
    return HTML(f'<img src="{_png_source(fig)}" alt="{html.escape(alt, quote=True)}" data-series="{series}" '
                'style="max-width: 100%">')


def show_figure(fig, caption: str) -> None:
    """Show ``fig`` with its caption (what to look for) on the page and close it. Every figure a page shows goes
    through here, so none appears without a caption (glue the figure first when a chapter pastes it)."""
    from IPython.display import HTML, display

    if not caption or not caption.strip():
        raise ValueError("show_figure needs a caption saying what the figure shows and what to look for")
    display(HTML(figure_html(fig, caption)))
    plt.close(fig)
