"""The PairRank chapter's analysis (Jia et al., WWW 2021): the tuning budget's table, the ablation's reading
(each variant against PDGD on paired intervals), and the columns the claims read beyond the run frame."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...claims import MIN_PAIRS, current_level, mean_interval
from ...experiments import ResultStore
from ...tables import noise_decimals
from ..neural.analysis import misordered_shares, misordered_slopes


def tuning_budget(specs) -> dict[str, tuple[int, int]]:
    """{algorithm: (settings tried, seeds per setting)} of a tuning grid's runs."""
    settings, seeds = {}, {}
    for spec in specs:
        settings.setdefault(spec.algorithm, set()).add(spec.label())
        seeds.setdefault(spec.algorithm, set()).add(spec.seed)
    return {name: (len(settings[name]), len(seeds[name])) for name in settings}


def budget_table(specs, choice: dict, display=str) -> pd.DataFrame:
    """The tuning page's table: learner, settings tried, seeds, chosen setting (one row per tuned learner)."""
    rows = [{"learner": display(name), "settings tried": n_settings, "seeds": n_seeds,
             "chosen setting": ", ".join(f"{k}={v}" for k, v in choice.get(name, {}).items()) or "none finished"}
            for name, (n_settings, n_seeds) in tuning_budget(specs).items()]
    return pd.DataFrame(rows)


# -- the ablation's reading: each variant against PDGD on paired intervals ---------------------------

PAPER_VARIANT = "PairRank_C (paper)"

ABLATION_PAIR_KEYS = ["dataset", "fold", "click_model", "seed"]     # a pair: the same data, user and seed


@dataclass(frozen=True)
class VersusPDGD:
    """A variant minus its PDGD baseline: the mean paired difference, its interval at the claims' level
    (:func:`olr_core.claims.current_level`, 95 % by default) and the number of pairs."""

    diff: float
    low: float
    high: float
    pairs: int

    @property
    def sign(self) -> int:
        """+1 (beats) or -1 (loses) where the interval excludes 0 and there are at least ``MIN_PAIRS`` pairs (the
        pages' rule for a significance mark); 0: not decided at these runs."""
        if self.pairs < MIN_PAIRS or not self.low > 0 and not self.high < 0:
            return 0
        return 1 if self.low > 0 else -1

    def cell(self) -> str:
        """The table's text: the difference to the decimals its interval supports (a quarter of the interval's
        width, about one standard error, :func:`olr_core.tables.noise_decimals`; 3 without a finite interval) and
        * where the interval decides ('+0.012*')."""
        places = noise_decimals((self.high - self.low) / 4)
        return f"{self.diff:+.{3 if places is None else places}f}{'*' if self.sign else ''}"

    def text(self) -> str:
        """'+0.012, 95 % interval -0.004 to +0.028, 15 pairs'."""
        return (f"{self.diff:+.3f}, {100 * (1 - current_level()):.3g} % interval {self.low:+.3f} to {self.high:+.3f}, "
                f"{self.pairs} pairs")


def versus_pdgd(runs: pd.DataFrame, variant: str, baseline: str, metric: str) -> VersusPDGD | None:
    """The paired difference variant - baseline of ``metric`` over the runs of ``runs`` (a ``variant`` column),
    paired by data set, fold, user and seed, with the Student-t interval of :func:`olr_core.claims.mean_interval`;
    None without a pair. Two runs of one variant under the same keys are refused."""
    keys = [k for k in ABLATION_PAIR_KEYS if k in runs]
    rows = runs[runs.variant.isin([variant, baseline])]
    repeated = rows[rows.duplicated([*keys, "variant"], keep=False)]
    if not repeated.empty:
        first = repeated.iloc[0]
        raise ValueError(f"two runs of ablation variant {first.variant!r} share "
                         f"{', '.join(f'{k}={first[k]}' for k in keys)}; give each run its own seed")
    wide = rows.pivot_table(index=keys, columns="variant", values=metric)
    if variant not in wide or baseline not in wide:
        return None
    both = wide[[variant, baseline]].dropna()
    if both.empty:
        return None
    diff, interval, pairs = mean_interval(both[variant].to_numpy(float) - both[baseline].to_numpy(float))
    low, high = interval(current_level())
    return VersusPDGD(diff, float(low), float(high), pairs)


def ablation_versus(runs: pd.DataFrame, variants: dict, metric: str) -> pd.DataFrame:
    """One row per PairRank_C variant and data set: its paired difference to its own PDGD baseline (same stop
    rule) with interval, pairs, ``sign`` and the table's text ('+0.012*': * where the interval decides)."""
    rows = []
    for (variant, dataset), _ in runs.groupby(["variant", "dataset"], sort=False):
        baseline = variants[variant]["baseline"]
        versus = None if variant == baseline else versus_pdgd(runs[runs.dataset == dataset], variant, baseline, metric)
        if versus is not None:
            rows.append({"variant": variant, "dataset": dataset, "diff": versus.diff, "low": versus.low,
                         "high": versus.high, "pairs": versus.pairs, "sign": versus.sign,
                         "vs PDGD": versus.cell()})
    return pd.DataFrame(rows, columns=["variant", "dataset", "diff", "low", "high", "pairs", "sign", "vs PDGD"])


def ablation_overall(runs: pd.DataFrame, variants: dict, metric: str) -> dict[str, VersusPDGD]:
    """{variant: its paired difference to its PDGD baseline pooled over every data set} (variants with pairs)."""
    out = {}
    for variant, spec in variants.items():
        if variant != spec["baseline"]:
            versus = versus_pdgd(runs, variant, spec["baseline"], metric)
            if versus is not None:
                out[variant] = versus
    return out


def _against_pdgd(versus: VersusPDGD) -> str:
    """The verb phrase the interval allows: beats / loses to / is not decided against PDGD."""
    return {1: "beats PDGD", -1: "loses to PDGD", 0: "is not decided against PDGD at these runs"}[versus.sign]


def ablation_reading(overall: dict[str, VersusPDGD], linear: VersusPDGD | None = None,
                     nonlinear: VersusPDGD | None = None) -> str:
    """The page's one-sentence reading of the ablation. ``overall``: :func:`ablation_overall`; ``linear`` /
    ``nonlinear``: the paper's PairRank_C against PDGD on the linear preset and on the non-linear default.
    Every "beats" or "loses" rests on an interval that excludes 0 (:attr:`VersusPDGD.sign`)."""
    base = overall.get(PAPER_VARIANT)
    if base is None:
        return "PairRank_C as the paper describes it has no run paired with PDGD in this build."
    if linear is not None and nonlinear is not None and linear.sign > 0 > nonlinear.sign:
        return (f"PairRank_C beats PDGD where relevance is linear in the features ({linear.text()}) and loses where "
                f"it is not ({nonlinear.text()}): the data's non-linearity, not an implementation choice, decides "
                "the comparison here.")
    if base.sign > 0:
        return f"PairRank_C as the paper describes it already beats PDGD over this build's data sets ({base.text()})."
    winners = {label: v for label, v in overall.items() if label != PAPER_VARIANT and v.sign > 0}
    if winners:
        label = max(winners, key=lambda name: winners[name].diff)
        return (f"The paper's PairRank_C {_against_pdgd(base)} ({base.text()}), but the code's choice '{label}' "
                f"makes it beat PDGD ({winners[label].text()}): the published comparison depends on that choice.")
    if linear is not None and nonlinear is not None and linear.sign > 0:
        return (f"PairRank_C beats PDGD where relevance is linear in the features ({linear.text()}) and "
                f"{_against_pdgd(nonlinear)} where it is not ({nonlinear.text()}); no code choice is decided ahead "
                "of PDGD over all data sets.")
    if base.sign < 0:
        return (f"PairRank_C as the paper describes it loses to PDGD ({base.text()}) and no variant tried here is "
                "decided ahead of PDGD over all data sets: the paper's advantage is not reproduced by any of them.")
    return (f"Whether PairRank_C as the paper describes it beats or loses to PDGD is not decided at these runs "
            f"({base.text()}), and no variant tried here is decided ahead of PDGD; more runs per cell would decide it.")


def closest_to_beating(overall: dict[str, VersusPDGD]) -> str:
    """Which variant comes closest to beating PDGD, as the intervals allow (``overall``: :func:`ablation_overall`):
    the variant with the largest mean difference is named as closest only when it has at least ``MIN_PAIRS`` pairs
    and its interval lies above every other variant's; otherwise the sentence names the variants whose intervals
    overlap its own as not separable at these runs."""
    if not overall:
        return "no variant has a run paired with PDGD in this build"
    leader = max(overall, key=lambda name: overall[name].diff)
    best = overall[leader]
    tied = [name for name, v in overall.items()
            if name != leader and (v.high >= best.low or v.pairs < MIN_PAIRS)]
    if best.pairs >= MIN_PAIRS and not tied:
        return (f"the variant that comes closest to beating it is '{leader}' ({best.text()}), its interval above "
                "every other variant's")
    if best.pairs < MIN_PAIRS:
        return (f"no variant can be called closest to beating it at these runs: '{leader}' has the largest mean "
                f"difference ({best.text()}), from fewer than {MIN_PAIRS} pairs")
    names = ", ".join(f"'{name}' ({overall[name].diff:+.3f})" for name in tied)
    return (f"no variant can be called closest to beating it at these runs: '{leader}' has the largest mean "
            f"difference ({best.text()}), but its interval overlaps those of {names}, so these cannot be separated")


def on_dataset(runs: pd.DataFrame, variants: dict, metric: str, dataset: str | None,
               variant: str = PAPER_VARIANT) -> VersusPDGD | None:
    """``variant`` against its PDGD baseline on one data set; None without that data set or a pair."""
    if dataset is None:
        return None
    return versus_pdgd(runs[runs.dataset == dataset], variant, variants[variant]["baseline"], metric)


def block_excess(frame: pd.DataFrame, deepest: int = 10) -> pd.Series:
    """Per run: the mean block size over the run at rank ``deepest`` minus the average of the mean sizes at the
    ranks above it (positive: the deepest block stays larger, i.e. shrinks slower); NaN for runs without
    block statistics (every method but PairRank)."""
    columns = [f"mean:block_size_at_{r}" for r in range(1, deepest + 1)]
    if not set(columns) <= set(frame):
        return pd.Series(np.nan, index=frame.index)
    return frame[columns[-1]] - frame[columns[:-1]].mean(axis=1, skipna=False)


def decorate(name: str, specs, frame: pd.DataFrame, store=None, data_dir=None, **_) -> pd.DataFrame:
    """The main experiment's runs get ``block10_excess`` (:func:`block_excess`), the theory runs
    ``regret_slope`` (the log-log slope of the cumulative mis-ordered pairs over the second half of the run) and
    ``lasting_regret`` (the share of the per-round regret that does not vanish, :func:`lasting_share`)."""
    if name == "theory":
        store = store or ResultStore()
        return frame.assign(regret_slope=misordered_slopes(specs, store, data_dir),
                            lasting_regret=misordered_shares(specs, store, data_dir))
    return frame.assign(block10_excess=block_excess(frame)) if name == "main" else frame


# -- the authors' code run here, beside ours (olr_core.reproductions.authors_code) ------------------------------

# Lines for the cells where ours and yilingjia/PairRank run here differ beyond their noise
# (olr_core.reproductions.authors_code.gap_lines): metric -> {(click model, algorithm): what was found, and the run
# that shows it}. A flagged cell without a line is printed as open, with AUTHORS_CODE_OPEN.
AUTHORS_CODE_NOTES: dict[str, dict[tuple[str, str], str]] = {"online": {}, "offline": {}}
AUTHORS_CODE_OPEN = ("not yet traced. Same protocol on both sides (MQ2008 fold 1, the three 3-grade users with the "
                     "stop drawn at every examined position, 5,000 rounds, the mean-form objective with lambda 0.1, "
                     "the same alpha, shuffled disjoint pairs, the transitive closure); the remaining differences "
                     "are the refit (theirs: L-BFGS-B to convergence on the whole history from a random start every "
                     "round with pairs; ours: 5 damped Newton steps), their reader's features (40 after dropping "
                     "constant ones, min-max per query) against ours, tie-breaking and random streams")
PAPER_ON_MQ2008 = "none (the paper ran MSLR-WEB10K and Yahoo!, figures only)"


@dataclass
class AuthorsCodeView:
    """The authors' code beside ours on a page: every cell their code ran (:func:`authors_code.all_cells`), the
    page's three columns, the lines for cells that need one, and where each side's numbers come from."""
    cells: pd.DataFrame
    shown: pd.DataFrame
    lines: list
    source: str


def authors_code_specs(profile: str, seeds: int | None, data_dir=None, results=None) -> list:
    """Our runs to set beside yilingjia/PairRank's stored runs (``results``, default the chapter's file): the
    claims' `code` configuration on MQ2008 with their horizon, folds and parameters
    (:func:`experiments.authors_code_specs`); [] without MQ2008 or without such runs in ``profile``."""
    from ...data import available
    from .. import authors_code
    from .experiments import authors_code_specs as specs_beside

    _, theirs = authors_code.load_runs(results or authors_code.PAIRRANK_RESULTS)
    return specs_beside(profile, theirs, seeds) if available([], ["mq2008"], data_dir) else []


def authors_code_view(metric: str, profile: str, seeds: int | None, store: ResultStore, data_dir=None,
                      results=None) -> AuthorsCodeView:
    """yilingjia/PairRank's stored runs (``results``, default the chapter's file) beside those of ours in
    :func:`authors_code_specs` that ``store`` holds (nothing is computed); ``metric``: ``online`` or ``offline``."""
    from .. import authors_code

    provenance, theirs = authors_code.load_runs(results or authors_code.PAIRRANK_RESULTS)
    ours = authors_code.stored_runs(authors_code_specs(profile, seeds, data_dir, results), store, data_dir)
    paper = pd.DataFrame(columns=["algorithm", "click_model", "paper_mean", "paper_sd"])
    cells = authors_code.all_cells(ours, theirs, paper, metric)
    lines = authors_code.gap_lines(cells, AUTHORS_CODE_NOTES.get(metric, {}), AUTHORS_CODE_OPEN)
    compared = int(cells["ours_runs"].sum()) if "ours_runs" in cells else 0
    horizons = ", ".join(f"{h:,}" for h in sorted(set(theirs["impressions"])))
    ours_text = (f"Ours: the claims' `code` configuration in this build's profile ({profile}); {compared} of its "
                 f"runs match their runs' cells, horizon ({horizons} rounds), fold and parameters."
                 + ("" if compared else " A profile with another horizon (or another tuned alpha) has none to set "
                                         "beside theirs; the paper profile runs them.")
                 if len(theirs) else "No run of their code is stored yet, so nothing of ours is set beside it.")
    return AuthorsCodeView(cells, authors_code.shown_cells(cells, PAPER_ON_MQ2008), lines,
                           ours_text + " " + authors_code.provenance_text(provenance, len(theirs)))
