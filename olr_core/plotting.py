"""One house style for every figure of the book (matplotlib + seaborn)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from .experiments.results import mean_ci


def set_style() -> None:
    """The book's style: white grid, colour-blind palette, readable sizes."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.titleweight": "bold",
                         "legend.frameon": False})


def plot_curves(frame: pd.DataFrame, hue: str = "label", col: str | None = "click_model", x: str = "round",
                ylabel: str = "NDCG@10", reference: dict | None = None, height: float = 3.2, sharey: bool = True):
    """Mean curve per ``hue`` with a 95% confidence band over seeds, one panel per ``col`` value.

    ``reference`` maps a name to a horizontal line's height (e.g. an offline upper bound)
    or, for per-panel values, to a dict {panel value: height}.
    """
    panels = list(dict.fromkeys(frame[col])) if col else [None]
    fig, axes = plt.subplots(1, len(panels), figsize=(height * 1.35 * len(panels), height), sharey=sharey,
                             squeeze=False)
    colours = dict(zip(dict.fromkeys(frame[hue]), sns.color_palette("colorblind", frame[hue].nunique())))
    for ax, panel in zip(axes[0], panels):
        part = frame if panel is None else frame[frame[col] == panel]
        stats = mean_ci(part, [hue, x])
        for name, line in stats.groupby(hue, sort=False):
            ax.plot(line[x], line["mean"], label=name, color=colours[name], lw=1.6)
            ax.fill_between(line[x], line["mean"] - line["ci"].fillna(0), line["mean"] + line["ci"].fillna(0),
                            color=colours[name], alpha=0.2, lw=0)
        for ref_name, height_ in (reference or {}).items():
            level = height_.get(panel) if isinstance(height_, dict) else height_
            if level is not None:
                ax.axhline(level, ls="--", color="grey", lw=1)
                ax.annotate(ref_name, (ax.get_xlim()[0], level), xytext=(4, 3), textcoords="offset points",
                            fontsize=8, color="grey")
        ax.set_title(str(panel) if panel is not None else "")
        ax.set_xlabel(x)
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig
