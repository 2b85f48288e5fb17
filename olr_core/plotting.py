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
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .experiments.results import mean_ci
from .names import DISPLAY_NAMES, display_name  # noqa: F401  (re-exported for the pages)

MIN_RUNS_FOR_CI = 5
_PALETTE = sns.color_palette("colorblind", 10) + sns.color_palette("dark", 10)
# Every algorithm of the book, in the order legends list them.
ALGORITHM_ORDER = ["olranknet", "ollambdarank", "ollambdarank_gt", "pairrank_c", "pairrank_r", "pdgd", "neural_pdgd",
                   "sgd_ranknet", "epsilon_greedy", "dbgd", "neural_dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd",
                   "nsgd_dsp", "topk_ranksvm", "topk_kl", "topk_squared", "topk_smoothdcg", "listnet_full",
                   "klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits", "pagerank",
                   "mcrank", "offline_ranknet", "offline_lambdarank", "oracle", "random"]
_BASE_COLOUR = {"pairrank_c": 0, "pairrank_r": 9, "pdgd": 2, "sgd_ranknet": 4, "epsilon_greedy": 5, "dbgd": 1,
                "mgd": 3, "nsgd": 8, "offline_ranknet": 7, "offline_lambdarank": 17, "oracle": 6, "random": 14,
                "topk_squared": 18, "topk_kl": 16, "topk_ranksvm": 13, "topk_smoothdcg": 19, "listnet_full": 15,
                "klrank_gper": 0, "klrank_greedy": 3, "online_ranknet_gper": 2, "category_ranking": 4, "hits": 8,
                "pagerank": 9, "mcrank": 5, "olranknet": 10, "ollambdarank": 16, "ollambdarank_gt": 12}
_LIBRARY = {"klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits", "pagerank", "mcrank"}
_NEURAL_VARIANT = (0, (5, 1.5, 1, 1.5, 1, 1.5))      # dash-dot-dot: the neural scorer of a linear method
ALGORITHM_STYLES = {     # DSP variants dashed; top-k learners dash-dotted; growing-library rankers dotted
    name: {"color": _PALETTE[_BASE_COLOUR[name.removesuffix("_dsp").removeprefix("neural_")]],
           "linestyle": "--" if name.endswith("_dsp") else "-." if name.startswith("topk_") else
           ":" if name in _LIBRARY else _NEURAL_VARIANT if name.startswith("neural_") else
           (0, (1, 1)) if name == "ollambdarank_gt" else "-"}
    for name in ALGORITHM_ORDER
}
USER_STYLES = {"perfect": {"color": _PALETTE[0], "linestyle": "-"},
               "navigational": {"color": _PALETTE[1], "linestyle": "-"},
               "informational": {"color": _PALETTE[2], "linestyle": "-"}}
BOUNDS = {"ndcg": (0.0, 1.0), "cosine": (-1.0, 1.0)}


def set_style() -> None:
    """The book's style: white grid, colour-blind palette, readable sizes."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.titleweight": "bold",
                         "legend.frameon": False})


def style_of(name, fallback_index: int = 0) -> dict:
    """Colour and line style of an algorithm or user type (the same on every page of the book)."""
    key = str(name)
    if key in ALGORITHM_STYLES:
        return dict(ALGORITHM_STYLES[key])
    if key in USER_STYLES:
        return dict(USER_STYLES[key])
    base = key.split("(")[0]                     # a label such as "mgd_dsp(dsp_lambda=0.5)"
    if base in ALGORITHM_STYLES:
        return dict(ALGORITHM_STYLES[base])
    return {"color": _PALETTE[fallback_index % len(_PALETTE)], "linestyle": "-"}


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


def plot_curves(frame: pd.DataFrame, hue: str = "label", col: str | None = "click_model", x: str = "round",
                ylabel: str = "NDCG@10", reference: dict | None = None, height: float = 3.2, sharey: bool = True,
                smooth: int = 1):
    """Mean curve per ``hue`` with a band over runs (see :func:`band`), one panel per ``col`` value.

    ``reference`` maps a name to a horizontal line's height (e.g. an offline upper bound)
    or, for per-panel values, to a dict {panel value: height}. ``smooth`` > 1 averages each
    mean curve over a moving window of that many points (stated under the figure). The
    figure's ``band_note`` attribute holds the caption text for the bands.
    """
    panels = list(dict.fromkeys(frame[col])) if col else [None]
    if col in ("click_model",):
        panels = ordered(panels)
    width = max(height * 1.35 * len(panels), 8.0)
    fig, axes = plt.subplots(1, len(panels), figsize=(width, height), sharey=sharey, squeeze=False)
    hues = ordered(frame[hue])
    styles = {name: style_of(name, i) for i, name in enumerate(hues)}
    limits, notes = bounds_for(ylabel), set()
    for ax, panel in zip(axes[0], panels):
        part = frame if panel is None else frame[frame[col] == panel]
        stats = mean_ci(part, [hue, x])
        for name in hues:
            line = stats[stats[hue] == name]
            if line.empty:
                continue
            half, note = band(line)
            notes.add(note)
            mean = line["mean"].to_numpy()
            if smooth > 1:
                mean = pd.Series(mean).rolling(smooth, min_periods=1).mean().to_numpy()
                half = pd.Series(half).rolling(smooth, min_periods=1).mean().to_numpy()
            low, high = mean - half, mean + half
            if limits is not None:
                low, high = np.clip(low, *limits), np.clip(high, *limits)
            ax.plot(line[x], mean, label=display_name(name), lw=1.6, **styles[name])
            ax.fill_between(line[x], low, high, color=styles[name]["color"], alpha=0.15, lw=0)
        for ref_name, height_ in (reference or {}).items():
            level = height_.get(panel) if isinstance(height_, dict) else height_
            if level is not None:
                ax.axhline(level, ls=":", color="grey", lw=1)
                ax.annotate(ref_name, (ax.get_xlim()[0], level), xytext=(4, 3), textcoords="offset points",
                            fontsize=8, color="grey")
        ax.set_title(str(panel) if panel is not None else "")
        ax.set_xlabel(x)
        if limits is not None:
            ax.set_ylim(max(limits[0], ax.get_ylim()[0]), min(limits[1], ax.get_ylim()[1]))
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:                              # a shared legend: every hue of every panel
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    axes[0][-1].legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5))
    note = "Bands: " + "; ".join(sorted(notes)) + (f". Curves smoothed over {smooth} points." if smooth > 1 else ".")
    fig.band_note = note
    fig.text(0.0, -0.04, note, fontsize=8, color="dimgrey", ha="left", va="top", transform=fig.transFigure)
    return fig


VERDICT_COLOURS = {"reproduced": "#2e7d32", "partly": "#b8860b", "smaller than reported": "#e65100",
                   "not reproduced": "#c62828",
                   "inconclusive": "#757575", "not testable here": "#bdbdbd"}
