"""The book's figures: one readable colour per algorithm, families in small multiples, y-axes that fit
their data, captions on every figure, one display name per algorithm."""

import matplotlib

matplotlib.use("Agg")

import itertools  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from olr_core import plotting  # noqa: E402
from olr_core.names import DISPLAY_NAMES, FAMILIES, display_name  # noqa: E402
from olr_core.rankers import ALGORITHMS  # noqa: E402


def lab(colour) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    f = np.cbrt(xyz / np.array([0.95047, 1.0, 1.08883]))
    f = np.where(xyz / np.array([0.95047, 1.0, 1.08883]) > 0.008856, f,
                 7.787 * xyz / np.array([0.95047, 1.0, 1.08883]) + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def distinguishable(x: np.ndarray, y: np.ndarray) -> bool:
    """Two L*a*b* colours a reader tells apart as thin lines: hue angles at least 20 degrees apart, or lightness
    at least 20 apart, or one of them a grey (chroma below 15). Vermilion and tan (hue 13 degrees and lightness 9
    apart) fail, as do orange and vermilion (17 and 12)."""
    hue = np.degrees(np.arctan2([x[2], y[2]], [x[1], y[1]]))
    apart = abs((hue[0] - hue[1] + 180) % 360 - 180)
    chroma = min(np.hypot(*x[1:]), np.hypot(*y[1:]))
    return apart >= 20 or abs(x[0] - y[0]) >= 20 or chroma < 15


def contrast_with_white(colour) -> float:
    """WCAG contrast ratio of a colour against a white page."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return 1.05 / (linear @ [0.2126, 0.7152, 0.0722] + 0.05)


def base(name: str) -> str:
    """The method whose colour a variant shares (a DSP variant or a neural scorer)."""
    return name.removesuffix("_dsp").removeprefix("neural_")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_has_distinct_readable_hues(family):
    """Within a family (plus random, which joins most figures) the base methods' colours differ in hue or in
    lightness (see :func:`distinguishable`), every (colour, line style) pair is unique, and every colour reaches
    a 2:1 contrast on white."""
    members = list(dict.fromkeys(FAMILIES[family] + ["random"]))
    styles = {m: plotting.style_of(m) for m in members}
    assert len({(matplotlib.colors.to_hex(s["color"]), str(s["linestyle"])) for s in styles.values()}) == len(members)
    bases = {base(m): styles[m]["color"] for m in members}          # a variant shares its base's colour
    for (a, ca), (b, cb) in itertools.combinations(bases.items(), 2):
        assert distinguishable(lab(ca), lab(cb)), f"{a} and {b} look alike in {family}"
    for m, s in styles.items():
        assert contrast_with_white(s["color"]) >= 2.0, f"{m} is too pale on white"


def test_display_names_and_families_cover_every_registered_ranker():
    assert set(DISPLAY_NAMES) == set(ALGORITHMS)
    members = [m for ms in FAMILIES.values() for m in ms]
    assert sorted(members) == sorted(ALGORITHMS)              # each algorithm in exactly one family
    assert len(set(DISPLAY_NAMES.values())) == len(DISPLAY_NAMES)
    assert display_name("mgd_dsp(dsp_lambda=0.5)") == "MGD-DSP (DSP λ 0.5)"        # parameters in words (#47)
    assert display_name("my_ranker.py:Mine") == "my_ranker.py:Mine"
    assert set(plotting.ALGORITHM_STYLES) == set(ALGORITHMS)


def test_curve_groups_keep_families_whole_and_rows_small():
    assert plotting.curve_groups(["pdgd", "dbgd"]) == [("", ["pdgd", "dbgd"])]
    hues = plotting.ordered([m for ms in FAMILIES.values() for m in ms])
    rows = plotting.curve_groups(hues)
    assert all(len(members) <= plotting.MAX_CURVES for _, members in rows)
    assert sorted(m for _, ms in rows for m in ms) == sorted(hues)
    for family, members in FAMILIES.items():                  # a family of at most 6 never splits
        if len(members) <= plotting.MAX_CURVES:
            assert sum(bool(set(members) & set(ms)) for _, ms in rows) == 1, family
    packed = plotting.curve_groups(list("abcdefgh"), 6, {"one": list("abcd"), "two": ["e"], "three": list("fgh")})
    assert packed == [("one; two", list("abcde")), ("three", list("fgh"))]


def test_comparable_ranges():
    assert plotting.comparable([(0.3, 0.7), (0.35, 0.65)])
    assert not plotting.comparable([(0.3, 0.8), (0.30, 0.34)])        # the small one would be squeezed flat
    assert plotting.comparable([(0.5, 0.5)])


def frame(algorithms, scales, col="dataset", seeds=3):
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"algorithm": a, col: c, "round": r, "seed": s,
                          "value": low + (high - low) * (i + 1) / len(algorithms) * r / 90 + rng.normal(0, 0.002)}
                         for c, (low, high) in scales.items() for i, a in enumerate(algorithms)
                         for r in range(0, 100, 10) for s in range(seeds)])


def test_panels_of_different_scale_get_their_own_y_axis_and_no_curve_is_cut_off():
    algorithms = ["random", "listnet_full", "topk_kl", "topk_squared", "topk_ranksvm", "topk_smoothdcg"]
    fig = plotting.plot_curves(frame(algorithms, {"synth-mslr": (0.3, 0.8), "mq2008": (0.30, 0.34)}),
                               hue="algorithm", col="dataset", ylabel="offline NDCG@10")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert axes[0].get_ylim() != axes[1].get_ylim()
    for ax in axes:
        low, high = ax.get_ylim()
        for line in ax.get_lines():
            y = np.asarray(line.get_ydata(), float)
            assert low <= y.min() and y.max() <= high, (ax.get_title(), line.get_label())
        assert high - low < 0.2 if ax.get_title() == "mq2008" else True      # MQ2008's curves fill their panel
    same = plotting.plot_curves(frame(algorithms, {"a": (0.3, 0.7), "b": (0.32, 0.68)}), hue="algorithm",
                                col="dataset")
    assert same.axes[0].get_ylim() == same.axes[1].get_ylim()


def test_many_curves_become_rows_of_at_most_six_with_a_legend_each():
    algorithms = ["dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd", "nsgd_dsp", "pairrank_c", "pairrank_r",
                  "epsilon_greedy", "sgd_ranknet", "pdgd", "olranknet", "ollambdarank", "neural_pdgd", "neural_dbgd"]
    fig = plotting.plot_curves(frame(algorithms, {"perfect": (0.3, 0.7), "navigational": (0.3, 0.7),
                                                  "informational": (0.3, 0.7)}, col="click_model"),
                               hue="algorithm", col="click_model")
    assert len(fig.subfigs) == 3
    assert max(len(ax.get_lines()) for ax in fig.axes) <= plotting.MAX_CURVES
    legends = [t.get_text() for sub in fig.subfigs for t in sub.legends[0].get_texts()]
    assert sorted(legends) == sorted(display_name(a) for a in algorithms)
    assert len({ax.get_ylim() for ax in fig.axes if ax.get_title() == "perfect"}) == 1   # rows share a user's axis


def test_every_shown_figure_has_a_caption():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    html = plotting.figure_html(fig, "What to see: the line <rises>; `olr book` redraws it.")
    assert html.startswith('<figure class="olr-figure" data-series="[]"><img src="data:image/png;base64,')
    assert "<figcaption class=\"olr-caption\">What to see: the line &lt;rises&gt;; <code>olr book</code>" in html
    with pytest.raises(ValueError, match="caption"):
        plotting.show_figure(fig, "  ")
    plt.close(fig)


def test_display_names_rename_what_a_table_shows():
    from olr_core.names import display_names

    table = pd.DataFrame({"algorithm": ["topk_ranksvm", "pairrank_c"], "topk_kl": [1.0, 2.0], "gain": [0.1, 0.2]},
                         index=["epsilon_greedy", "perfect"])
    shown = display_names(table)
    assert list(shown.columns) == ["algorithm", "RTop-kF KL", "gain"]
    assert list(shown["algorithm"]) == ["RTop-kF RankSVM", "PairRank_C"]
    assert list(shown.index) == ["ε-greedy RankNet", "perfect"]
    assert list(table.columns) == ["algorithm", "topk_kl", "gain"]                # the input is left alone
    wide = pd.Series([1.0], index=pd.MultiIndex.from_tuples([("mq2008", "klrank_gper")]))
    assert list(display_names(wide).index) == [("mq2008", "NoRegret KLRank")]


def test_a_reference_line_stays_in_view():
    fig = plotting.plot_curves(frame(["pdgd", "dbgd"], {"a": (0.3, 0.4), "b": (0.3, 0.4)}), hue="algorithm",
                               col="dataset", reference={"offline RankNet": {"a": 0.9, "b": 0.2}})
    levels = {"a": 0.9, "b": 0.2}
    for ax in fig.axes:
        low, high = ax.get_ylim()
        assert low <= levels[ax.get_title()] <= high


# One colour-blind-safe palette with one meaning per colour (#47).

def _shared_pairs():
    """(a, b) of base methods drawn together with the same line style somewhere in the book."""
    from olr_core.plotting import SHARED_FIGURES

    pairs = set()
    for members in [*SHARED_FIGURES.values(), *([*m, "random"] for m in FAMILIES.values())]:
        for a, b in itertools.combinations(dict.fromkeys(base(m) for m in members), 2):
            if str(plotting.style_of(a)["linestyle"]) == str(plotting.style_of(b)["linestyle"]):
                pairs.add(tuple(sorted((a, b))))
    return sorted(pairs)


def test_methods_that_share_a_figure_stay_apart_under_simulated_deuteranopia_and_protanopia():
    from olr_core.colours import MIN_DISTANCE, cvd_distance

    close = [(a, b, round(cvd_distance(plotting.METHOD_COLOURS[a], plotting.METHOD_COLOURS[b]), 1))
             for a, b in _shared_pairs()
             if cvd_distance(plotting.METHOD_COLOURS[a], plotting.METHOD_COLOURS[b]) < MIN_DISTANCE]
    assert close == []
    assert cvd_distance("#8c0800", "#12711c") < MIN_DISTANCE     # the old MGD dark red and NSGD green: one olive


def test_a_colour_means_one_method_and_nothing_else():
    colours = plotting.METHOD_COLOURS
    for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2):
        assert np.linalg.norm(lab(ca) - lab(cb)) >= 20, f"{a} and {b} share a colour"
    neutral = {matplotlib.colors.to_hex(s["color"]) for s in plotting.NEUTRAL_STYLES}
    assert all(np.hypot(*lab(c)[1:]) < 1 for c in neutral)              # users, data sets: black and greys
    assert all(np.hypot(*lab(c)[1:]) >= 15 for c in colours.values())   # no method is grey
    assert {matplotlib.colors.to_hex(plotting.style_of(u)["color"]) for u in plotting.USER_STYLES} <= neutral
    assert matplotlib.colors.to_hex(plotting.style_of("synth-mq-linear")["color"]) in neutral


def test_a_figure_carries_its_series_and_a_colour_blind_clash_is_found():
    import html
    import json
    import re

    import matplotlib.pyplot as plt

    from olr_core.colours import confusable

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color="#8c0800", label="MGD")
    ax.plot([0, 1], [1, 0], color="#12711c", label="NSGD")
    ax.plot([0, 1], [0.5, 0.5], color="#12711c", ls="--", label="NSGD-DSP")
    ax.legend()
    series = json.loads(html.unescape(re.search(r'data-series="([^"]*)"', plotting.figure_html(fig, "x")).group(1)))
    plt.close(fig)
    assert [s["label"] for s in series] == ["MGD", "NSGD", "NSGD-DSP"]
    assert [(a, b) for a, b, _ in confusable(series)] == [("MGD", "NSGD")]     # dashed tells NSGD-DSP apart
    styled = [{**s, "colour": plotting.METHOD_COLOURS[{"MGD": "mgd"}.get(s["label"], "nsgd")]} for s in series]
    assert confusable(styled) == []


def test_a_scatter_of_every_method_stays_readable_to_a_colour_blind_reader():
    """The head-to-head scatter draws every method at once: its family's marker (a DSP variant its own) with the
    method's colour leaves no two methods alike under simulated deuteranopia or protanopia."""
    from olr_core.colours import confusable

    methods = [m for family, members in FAMILIES.items() if family != "growing library" for m in members]
    series = [{"label": m, "colour": matplotlib.colors.to_hex(plotting.style_of(m)["color"]),
               "marker": plotting.marker_of(m)} for m in methods]
    assert confusable(series) == []
    assert plotting.marker_of("mgd_dsp") == "P" and plotting.marker_of("mgd") == "o"
    assert plotting.marker_of("olranknet") == "^" and plotting.marker_of("mine.py:Mine") == "o"


def test_a_series_without_a_colour_of_its_own_is_black_or_grey_and_keeps_its_line_style():
    import matplotlib.pyplot as plt

    plotting.set_style()
    fig, ax = plt.subplots()
    lines = [ax.plot([0, 1], [i, i])[0] for i in range(4)]
    plt.close(fig)
    neutral = {matplotlib.colors.to_hex(s["color"]) for s in plotting.NEUTRAL_STYLES}
    assert {matplotlib.colors.to_hex(line.get_color()) for line in lines} <= neutral
    assert {line.get_linestyle() for line in lines} == {"-"}


def test_rows_of_small_multiples_are_read_each_with_its_own_legend():
    """A figure with a row per family (each row its legend) compares colours within a row only: two methods of
    different rows may look alike to a colour-blind reader (#47: the head-to-head curves), two of one row may not."""
    import matplotlib.pyplot as plt

    from olr_core.colours import confusable

    rows = {"bandits": ["nsgd"], "pairwise": ["pairrank_r", "sgd_ranknet"], "neural": ["olranknet", "ollambdarank"]}
    frame = pd.DataFrame([{"algorithm": m, "click_model": "perfect", "seed": s, "round": r, "value": 0.5}
                          for ms in rows.values() for m in ms for s in range(2) for r in (1, 2)])
    fig = plotting.plot_curves(frame, hue="algorithm", col="click_model", max_curves=2, families=rows)
    series = plotting.figure_series(fig)
    plt.close(fig)
    assert {s["group"] for s in series} == {"row 1", "row 2", "row 3"}
    assert confusable(series) == []
    assert confusable([{**s, "group": None} for s in series])           # the same colours in one legend would clash


def test_an_error_bar_series_is_read_by_its_colour():
    """A legend entry of ``errorbar`` (its handle a line collection without a face) carries the bars' colour."""
    import matplotlib.pyplot as plt

    from olr_core.colours import confusable

    plotting.set_style()
    fig, ax = plt.subplots()
    for user in ("perfect", "navigational", "informational"):
        ax.errorbar([0, 1], [1, 2], yerr=[0.1, 0.1], marker="o", capsize=3, label=user, **plotting.style_of(user))
    ax.legend()
    series = plotting.figure_series(fig)
    plt.close(fig)
    assert [s["colour"] for s in series] == ["#000000", "#5a5a5a", "#8c8c8c"]
    assert confusable(series) == []


def test_every_user_model_has_one_neutral_style_that_no_other_user_shares():
    import matplotlib

    from olr_core import plotting
    from olr_core.colours import confusable
    from olr_core.reproductions import robustness as rb

    neutral = {matplotlib.colors.to_hex(s["color"]) for s in plotting.NEUTRAL_STYLES}
    users = rb.USERS + ["sdbn", "dbn:gamma=0.5"]
    styles = {u: plotting.user_style(u) for u in users}
    assert {matplotlib.colors.to_hex(s["color"]) for s in styles.values()} <= neutral     # colours are methods'
    shapes = {(str(s["linestyle"]), s["marker"]) for u, s in styles.items() if u != "dbn:gamma=0.5"}
    assert len(shapes) == len(rb.USERS) + 1                                             # one shape per user
    assert styles["dbn:gamma=0.5"] == styles["dbn"]
    assert styles["navigational+noise=0.1"] == plotting.user_style("navigational+noise=0.2")
    for user in ("perfect", "navigational", "informational"):                            # as on the papers' pages
        assert {k: styles[user][k] for k in ("color", "linestyle")} == plotting.style_of(user)
    series = [{"label": u, "colour": s["color"], "linestyle": s["linestyle"], "marker": s["marker"]}
              for u, s in styles.items() if u != "dbn:gamma=0.5"]
    assert confusable(series) == []
    families = ["cascade", "dbn", "sdbn", "ccm", "pbm", "ubm", "trust_bias", "cascade+noise"]   # the click models page
    assert plotting.user_style("cascade") == styles["navigational"]
    assert len({(str(plotting.user_style(f)["linestyle"]), plotting.user_style(f)["marker"]) for f in families}) == 8


def test_the_click_models_page_draws_users_in_the_books_styles_not_a_colour_map():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "notebooks" / "click_models.md").read_text()
    assert "get_cmap" not in page and "tab10" not in page
    assert page.count("**user_style(") == 2
