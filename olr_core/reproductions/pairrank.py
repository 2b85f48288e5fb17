"""The PairRank chapter's experiments (Jia et al., WWW 2021): grids, tuning, the well-specified simulation."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from ..claims import MIN_PAIRS, current_level, mean_interval
from ..data.ranking_data import Fold, RankingData
from ..experiments import expand_grid
from ..experiments.store import default_store_dir
from ..rankers.pairwise import PairRank, pairwise_uncertainty
from .sources import PAIRRANK, Cited, citation_rows, citation_table, plain

ALGORITHMS = ["pairrank_c", "pairrank_r", "pdgd", "epsilon_greedy", "sgd_ranknet", "dbgd", "mgd"]
CLICK_MODELS = ["perfect", "navigational", "informational"]
DEFAULTS = {"pairrank_c": {"alpha": 0.1, "l2": 0.1}, "pairrank_r": {"alpha": 0.1, "l2": 0.1},
            "epsilon_greedy": {"epsilon": 0.1, "l2": 0.1}, "sgd_ranknet": {"learning_rate": 0.1},
            "pdgd": {"learning_rate": 0.1}, "dbgd": {}, "mgd": {}}
# An equal budget of nine settings and the same seeds for every online learner a claim of the chapter compares
# (ALGORITHMS: PairRank_R is tuned on its own, and so are DBGD and MGD). The l2 range of the model-based methods
# reaches the effective strength of the authors' mean-form objective (2 * lambda * n with n in the hundreds to
# thousands of pairs), so that the optimum can lie inside the grid; the dueling methods' two constants are the
# step to the winner (learning rate) and the exploration radius (step).
_PAIRRANK_GRID = {"alpha": [0.01, 0.1, 0.5], "l2": [0.1, 10.0, 100.0]}
_RATES = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
_DUELING_GRID = {"learning_rate": [0.001, 0.01, 0.1], "step": [0.3, 1.0, 3.0]}
TUNING_GRID = {"pairrank_c": _PAIRRANK_GRID, "pairrank_r": _PAIRRANK_GRID,
               "epsilon_greedy": {"epsilon": [0.05, 0.1, 0.2], "l2": [0.1, 10.0, 100.0]},
               "sgd_ranknet": {"learning_rate": _RATES}, "pdgd": {"learning_rate": _RATES},
               "dbgd": _DUELING_GRID, "mgd": _DUELING_GRID}


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


def tuned_path() -> Path:
    return default_store_dir() / "pairrank_tuned.json"


TUNING_SEED_BASE = 1000     # tuning runs use seeds 1000, 1001, ...: never the seeds of the runs that judge claims


def tuning_seeds(seeds: int) -> list[int]:
    return list(range(TUNING_SEED_BASE, TUNING_SEED_BASE + seeds))


def grid_specs(grids: dict, dataset: str, seeds: int, rounds: int, click_models=CLICK_MODELS):
    """Every setting of every method in ``grids`` ({algorithm: {param: values}}) under every user,
    evaluated on the validation split with seeds of their own (:func:`tuning_seeds`), so that no
    parameter is chosen on the queries, clicks or test documents of the runs that judge a claim
    (the tuning runs of every chapter)."""
    import itertools

    algos = []
    for name, grid in grids.items():
        keys = sorted(grid)
        for values in itertools.product(*(grid[k] for k in keys)):
            algos.append({"name": name, "params": dict(zip(keys, values))})
    return expand_grid({"algorithms": algos, "datasets": dataset, "click_models": list(click_models),
                        "seeds": tuning_seeds(seeds), "rounds": rounds, "eval_split": "vali"})


def grid_edge(choice: dict, grids: dict) -> list[str]:
    """The chosen values that sit at an end of their grid (the optimum may lie outside it)."""
    out = []
    for algorithm, params in choice.items():
        for key, value in params.items():
            values = grids.get(algorithm, {}).get(key, [])
            if len(values) > 1 and value in (min(values), max(values)):
                out.append(f"{algorithm}.{key}={value}")
    return out


def tuning_specs(dataset: str, seeds: int, rounds: int, click_models=CLICK_MODELS):
    return grid_specs(TUNING_GRID, dataset, seeds, rounds, click_models)


def on_grid_edge(choice: dict) -> list[str]:
    return grid_edge(choice, TUNING_GRID)


def save_tuned(choice: dict) -> None:
    path = tuned_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(choice, indent=2, sort_keys=True))


def read_tuned(path: Path, defaults: dict, page: str) -> dict:
    """``defaults`` overlaid with the values a tuning page stored at ``path`` (the tuning pages of every
    chapter; each learner is tuned with its own budget). Says so when untuned."""
    params = {k: dict(v) for k, v in defaults.items()}
    if not path.exists():
        print(f"olr: note: no tuning results at {path}: using the defaults {defaults} (run {page} first)",
              file=sys.stderr)
        return params
    chosen = json.loads(path.read_text())
    params.update({k: dict(v) for k, v in chosen.items()})
    return params


def tuned_params() -> dict:
    """Parameters chosen by the tuning notebook, each learner its own; defaults if not tuned yet."""
    return read_tuned(tuned_path(), DEFAULTS, "pairrank_tuning")


def main_grid(datasets, seeds: int, rounds: int, params: dict, click_models=CLICK_MODELS, algorithms=ALGORITHMS,
              reference: str | None = "offline_ranknet"):
    """The main figures' runs: every algorithm (with its tuned ``params``), data set, user and seed;
    ``reference``: the offline learner whose weights the cosine is measured against (None: no cosine)."""
    algos = [{"name": a, "params": params.get(a, {})} for a in algorithms]
    return expand_grid({"algorithms": algos, "datasets": list(datasets), "click_models": list(click_models),
                        "seeds": seeds, "rounds": rounds, "reference": reference})


def well_specified_fold(n_features: int = 10, n_queries: int = 300, docs: int = 20, seed: int = 0):
    """Queries of Gaussian documents whose true order is theta* . x (labels: within-query rank, best highest).

    With :class:`olr_core.users.LogisticClickUser` the clicks follow PairRank's logistic
    pairwise model exactly, and the loop's mis-ordered pairs are the Kendall distance to the
    true order. Returns the fold (train = test = the same queries) and theta*.
    """
    rng = np.random.default_rng(seed)
    theta_star = rng.standard_normal(n_features)
    theta_star *= 2.0 / np.linalg.norm(theta_star)
    X = rng.standard_normal((n_queries * docs, n_features)) / np.sqrt(n_features)
    utility = (X @ theta_star).reshape(n_queries, docs)
    labels = np.argsort(np.argsort(utility, axis=1), axis=1).ravel()
    offsets = np.arange(0, n_queries * docs + 1, docs)
    data = RankingData(X, labels, offsets, np.array([f"w{q}" for q in range(n_queries)]), docs - 1, "well-specified")
    return Fold("well-specified", 1, data, data, data), theta_star


class CoverageProbe(PairRank):
    """PairRank that also reports how often the true preference sigma(theta* . x_ij) lies outside
    the confidence interval of the current round's pairs (``ci_miss_rate``) and how often a pair
    declared certain is in fact ordered the wrong way (``certain_wrong_rate``)."""

    def __init__(self, theta_star, **kwargs):
        super().__init__(**kwargs)
        self.theta_star = np.asarray(theta_star)

    def rank(self, query):
        display = super().rank(query)
        prob, norms, _ = pairwise_uncertainty(query.features, self.model.theta, self.Minv)
        s = query.features @ self.theta_star
        truth = expit(s[:, None] - s[None, :])
        off_diagonal = ~np.eye(len(s), dtype=bool)
        width = self.width() * norms
        miss = np.abs(prob - truth) > width
        display.stats["ci_miss_rate"] = float(miss[off_diagonal].mean())
        certain = prob - width > 0.5
        if certain.any():
            display.stats["certain_wrong_rate"] = float((truth[certain] < 0.5).mean())
        return display


# -- the ablation: which of the authors' code's choices move PairRank against PDGD ------------------

CODE_STOP_RULE = "every_position"
WHOLE_HISTORY = {"window": 100_000, "newton_steps": 5}


# The authors' code's choices for PairRank_C and PairRank_R together (REFERENCE_NOTES), each with the line of
# the authors' release (yilingjia/PairRank) it is read from: the README's example run (README.md:18-19:
# --lambda 0.1 --update gd --ind --refine) and the code those options select. The mean-form objective with
# its l2, shuffled disjoint pairs, the transitive closure, a (near) whole-history refit; users that may stop
# at every position. PDGD runs at the rate of the framework's PDGD run script. The `code` configuration of
# the claims runs every method under these users. alpha stays tuned (the authors tuned it: REFERENCE_NOTES).
_PR = f"{PAIRRANK}/algorithms/Pairwise/PairRank.py"
CODE_PAIRRANK = {
    "objective": Cited("mean", f"{_PR}:103-104, :110-111 (mean pair loss + lambda ||theta||^2)"),
    "l2": Cited(0.1, f"{PAIRRANK}/README.md:18 (--lambda 0.1; the option's default is 0.5: "
                     f"{PAIRRANK}/utils/argparsers/simulationargparser.py:185)"),
    "pairing": Cited("shuffled", f"{PAIRRANK}/README.md:19 (--ind) -> {_PR}:321-324"),
    "refine": Cited(True, f"{PAIRRANK}/README.md:19 (--refine) -> {_PR}:165-170"),
    "window": Cited(WHOLE_HISTORY["window"], f"{PAIRRANK}/README.md:19 (--update gd) -> {_PR}:362-372 (every "
                                             "round of the history; ours: a window longer than any run)"),
    "newton_steps": Cited(WHOLE_HISTORY["newton_steps"], f"{_PR}:449-461 (L-BFGS-B to convergence, ftol 1e-6; "
                                                         "ours: 5 damped Newton steps per round)"),
}
CODE_PDGD = {"learning_rate": Cited(0.1, f"{PAIRRANK}/scripts/CIKM2018.py:50 (its decay, :51, is our default "
                                         "0.9999977)")}
CODE_STOP = Cited(CODE_STOP_RULE, f"{PAIRRANK}/utils/clicks.py:37-43")
CODE_PARAMS = {"pairrank_c": CODE_PAIRRANK, "pairrank_r": CODE_PAIRRANK, "pdgd": CODE_PDGD}
CONFIG_TITLES = {"text": "as the paper's text describes it", "code": "as the authors' code runs it"}


def code_sources() -> pd.DataFrame:
    """Every parameter the `code` configuration sets, with the file and line of the authors' code."""
    rows = [row for name, params in CODE_PARAMS.items() for row in citation_rows("code", name, params)]
    return citation_table(rows + citation_rows("code", "every user", {"stop_rule": CODE_STOP}))


def in_config(specs, config: str = "text") -> list:
    """The runs of a grid in ``config``: ``text`` leaves them as they are; ``code`` gives PairRank_C, PairRank_R
    and PDGD the code's choices (:data:`CODE_PARAMS`, over their tuned values: PairRank keeps its tuned alpha)
    and every run the code's stop rule."""
    import dataclasses

    if config == "text":
        return list(specs)
    if config != "code":
        raise ValueError(f"unknown PairRank configuration {config!r}; valid: {', '.join(CONFIG_TITLES)}")
    return [dataclasses.replace(spec, stop_rule=CODE_STOP.value,
                                params={**spec.params, **plain(CODE_PARAMS.get(spec.algorithm, {}))})
            for spec in specs]


def ablation_variants(tuned: dict, l2_mean=(0.01, 0.1)) -> dict[str, dict]:
    """Label -> {algorithm, params, stop_rule, baseline}: PairRank_C as the paper describes it, each
    choice of the authors' code alone, all of them together, and PDGD under both stop rules."""
    base = dict(tuned.get("pairrank_c", {}))
    pdgd = dict(tuned.get("pdgd", {}))

    def variant(params=None, stop_rule="after_click", algorithm="pairrank_c"):
        baseline = "PDGD" if stop_rule == "after_click" else "PDGD (every position)"
        return {"algorithm": algorithm, "params": {**base, **(params or {})} if algorithm == "pairrank_c" else params,
                "stop_rule": stop_rule, "baseline": baseline}

    out = {"PDGD": variant(pdgd, algorithm="pdgd"),
           "PDGD (every position)": variant(pdgd, CODE_STOP_RULE, algorithm="pdgd"),
           "PairRank_C (paper)": variant()}
    for l2 in l2_mean:
        out[f"mean objective, l2={l2:g}"] = variant({"objective": "mean", "l2": float(l2)})
    out["shuffled pairs"] = variant({"pairing": "shuffled"})
    out["near whole-history refit"] = variant(WHOLE_HISTORY)
    out["refine (transitive closure)"] = variant({"refine": True})
    out["stop at every position"] = variant(stop_rule=CODE_STOP_RULE)
    out["all code choices"] = variant({**plain(CODE_PAIRRANK), "l2": float(max(l2_mean))}, CODE_STOP_RULE)
    return out


def ablation_grid(datasets, seeds: int, rounds: int, variants: dict, click_models=CLICK_MODELS):
    """The runs of every variant on every data set, user and seed."""
    specs = []
    for v in variants.values():
        grid = {"algorithms": [{"name": v["algorithm"], "params": v["params"]}], "datasets": list(datasets),
                "click_models": list(click_models), "seeds": seeds, "rounds": rounds}
        if v["stop_rule"] != "after_click":
            grid["stop_rule"] = v["stop_rule"]
        specs += expand_grid(grid)
    return specs


def variant_of(spec, variants: dict) -> str:
    """The label of the ablation variant a run belongs to."""
    for label, v in variants.items():
        if (spec.algorithm == v["algorithm"] and spec.params == dict(sorted(v["params"].items()))
                and spec.stop_rule == v["stop_rule"]):
            return label
    raise KeyError(f"{spec.label()} ({spec.stop_rule}) is not a run of the ablation")


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
                         "vs PDGD": f"{versus.diff:+.3f}{'*' if versus.sign else ''}"})
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
