"""The PairRank chapter's experiments (Jia et al., WWW 2021): grids, tuning, the text's and the code's
configurations, the ablation's variants, the well-specified simulation, and :data:`PROFILES`, the only copy of
their run sizes."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from ...claims import with_seeds
from ...data.ranking_data import Fold, RankingData
from ...experiments import expand_grid
from ...experiments.store import STORE_FIX, default_store_dir, write_atomically
from ...names import display_name, name_of
from ...rankers.pairwise import PairRank, pairwise_uncertainty
from .. import worlds
from ..sources import PAIRRANK, Cited, citation_rows, citation_table, plain

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
    """The chosen values that sit at an end of their grid (the optimum may lie outside it), in a reader's names:
    "ε-greedy RankNet: epsilon=0.05"."""
    out = []
    for algorithm, params in choice.items():
        for key, value in params.items():
            values = grids.get(algorithm, {}).get(key, [])
            if len(values) > 1 and value in (min(values), max(values)):
                out.append(f"{display_name(algorithm)}: {name_of(key)}={value}")
    return out


def tuning_specs(dataset: str, seeds: int, rounds: int, click_models=CLICK_MODELS):
    return grid_specs(TUNING_GRID, dataset, seeds, rounds, click_models)


def on_grid_edge(choice: dict) -> list[str]:
    return grid_edge(choice, TUNING_GRID)


def save_tuned(choice: dict) -> None:
    write_tuned(tuned_path(), choice)


def write_tuned(path: Path, choice: dict) -> None:
    """The tuning page's choice, kept in the results store: written whole or not at all (a full or read-only
    store is one line saying so)."""
    write_atomically(path, lambda tmp: tmp.write_text(json.dumps(choice, indent=2, sort_keys=True)),
                     "the tuning results", STORE_FIX)


_PINNED: dict[str, dict | None] = {}


@contextlib.contextmanager
def pinned_tuning(choices: dict[str, dict | None] | None):
    """Within the block, a tuning page's choice is ``choices[page]`` (None: that page had not run, so the
    defaults) instead of the file in the results store: how a ledger's runs are keyed again with the tuning they
    were computed with (:mod:`..ledger`), whatever this store's own tuning pages chose."""
    saved = dict(_PINNED)
    _PINNED.update(choices or {})
    try:
        yield
    finally:
        _PINNED.clear()
        _PINNED.update(saved)


def stored_choice(path: Path, page: str) -> dict | None:
    """The choice the tuning page ``page`` stored at ``path`` (None where it has not run); a file that cannot be
    read is one line naming it and the fix."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"the tuning results {path} cannot be read ({err}); run {page} again to rewrite them, or "
                         "delete the file to use the defaults") from None


def read_tuned(path: Path, defaults: dict, page: str) -> dict:
    """``defaults`` overlaid with the values a tuning page stored at ``path`` (the tuning pages of every
    chapter; each learner is tuned with its own budget), or with the choice pinned for ``page``
    (:func:`pinned_tuning`). Says so when untuned."""
    chosen = _PINNED[page] if page in _PINNED else stored_choice(path, page)
    if page not in _PINNED and chosen is None:
        print(f"olr: note: no tuning results at {path}: using the defaults {defaults} (run {page} first)",
              file=sys.stderr)
    return {k: dict(v) for k, v in {**defaults, **(chosen or {})}.items()}


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
    "newton_steps": Cited(WHOLE_HISTORY["newton_steps"], f"{_PR}:449-461 (L-BFGS-B to convergence, `ftol=1e-6`; "
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


# -- the claims' experiments and their sizes -------------------------------------------------------

# Sizes of each experiment per profile, their only copy: the claims judge main and theory; the book's pages
# take theirs from here too (notebooks/manifest.yml names the experiment; tuning, ablation and simulation, the
# Theorem 8 page's own simulated world, are pages only).
# The simulation's coverage check of Lemma 2 (:mod:`..coverage`): ``coverage_runs`` replays of ``coverage_rounds``
# rounds with every check (an exact refit each round), and ``noise_runs`` of ``noise_rounds`` with the noise step only.
# Run r is seeded by r alone, so a smaller count keeps the first runs of a larger one. Quick: 5 noise runs of 3,000
# rounds (the noise step's cost is PairRank's own refit over every pair; with shuffled pairing the first failures of
# 10 runs came at rounds 1,553 to 2,574, so the horizon stays) and 20 runs with every check (#46: the page's CPU).
PROFILES = {"tiny": {"main": {"seeds": 1, "rounds": 100}, "theory": {"seeds": 1, "rounds": 200},
                     "tuning": {"seeds": 1, "rounds": 200}, "ablation": {"seeds": 2, "rounds": 300},
                     "simulation": {"seeds": 2, "rounds": 1000, "coverage_runs": 4, "coverage_rounds": 40,
                                    "noise_runs": 2, "noise_rounds": 200}},
            "quick": {"main": {"seeds": 5, "rounds": 1000}, "theory": {"seeds": 10, "rounds": 2000},
                      "tuning": {"seeds": 1, "rounds": 1000}, "ablation": {"seeds": 5, "rounds": 500},
                      "simulation": {"seeds": 3, "rounds": 3000, "coverage_runs": 20, "coverage_rounds": 200,
                                     "noise_runs": 5, "noise_rounds": 3000}},
            "paper": {"main": {"seeds": 20, "rounds": 5000}, "theory": {"seeds": 10, "rounds": 5000},
                      "tuning": {"seeds": 5, "rounds": 5000}, "ablation": {"seeds": 20, "rounds": 5000},
                      "simulation": {"seeds": 10, "rounds": 50_000, "coverage_runs": 100, "coverage_rounds": 500,
                                     "noise_runs": 30, "noise_rounds": 10_000}}}
MAIN_DATASETS = ["synth-mslr", "mq2008", "mslr-web10k", "yahoo"]
SYNTHETIC = ("synth-mslr",)


def experiments(profile: str, config: str, datasets: list[str], seeds: int | None = None,
                **_) -> dict[str, list]:
    """The main grid; in the ``code`` configuration on the real data sets found only (the synthetic default
    when there is none), as the DSP chapter does: the code's choices are about the paper's numbers.
    ``convergence``: PairRank_C's runs under perfect users (the same runs as the main grid's) beside offline
    RankNet's on the same data, folds and seeds."""
    size = with_seeds(PROFILES[profile], seeds)["main"]
    if config == "code":
        datasets = [d for d in datasets if d not in SYNTHETIC] or list(datasets[:1])
    specs = in_config(main_grid(datasets, size["seeds"], size["rounds"], tuned_params()),
                               config)
    perfect = [s for s in specs if s.algorithm == "pairrank_c" and s.click_model == "perfect"]
    offline = main_grid(datasets, size["seeds"], size["rounds"], {}, click_models=["perfect"],
                                 algorithms=["offline_ranknet"], reference=None)
    theory = with_seeds(PROFILES[profile], seeds)["theory"]
    return {"main": specs, "convergence": perfect + offline,
            "theory": theory_grid(theory["seeds"], theory["rounds"]) if config == "text" else []}


# Our parameter -> the authors' code's name for it (yilingjia/PairRank's run_script.py), for setting our runs
# beside theirs only where both ran with the same values
AUTHORS_PARAMETER_NAMES = {"alpha": "alpha", "l2": "_lambda", "learning_rate": "learning_rate"}


def same_parameters(spec, theirs: dict) -> bool:
    """Our run ``spec`` has the values of ``theirs`` (the parameters their class was given) for every parameter
    both have (:data:`AUTHORS_PARAMETER_NAMES`; ours from the spec, else the algorithm's default)."""
    from ...rankers import algorithm_parameters

    ours = {**algorithm_parameters(spec.algorithm), **spec.params}
    return all(float(ours[mine]) == float(theirs[name]) for mine, name in AUTHORS_PARAMETER_NAMES.items()
               if mine in ours and name in theirs)


def authors_code_specs(profile: str, their_runs: pd.DataFrame, seeds: int | None = None) -> list:
    """The runs of ours to set beside the authors' code's stored runs (``their_runs``: the results file's rows,
    with their ``params``): the claims' `code` configuration on MQ2008 (:func:`experiments`), of the algorithms,
    folds and horizon their runs have, with their parameter values (PairRank's alpha and lambda, PDGD's rate)."""
    theirs = {row.algorithm: row.params for row in their_runs.itertuples() if isinstance(row.params, dict)}
    return [spec for spec in experiments(profile, "code", ["mq2008"], seeds)["main"]
            if spec.algorithm in theirs and spec.rounds in set(their_runs["impressions"])
            and spec.fold in set(their_runs["fold"]) and same_parameters(spec, theirs[spec.algorithm])]


THEORY_ALPHA = 0.1      # the theory page's tuned constant (the theoretical alpha_t keeps nearly every pair uncertain)
THEORY_PAIRING = "shuffled"     # the pairing under which assumption O can hold (adjacent pairs never form some pairs)
THEORY_CONTROL = "epsilon_greedy"   # the negative controls: constant epsilon, so linear regret
THEORY_CONTROL_EPSILONS = [None, 0.01]  # the default 0.1, and 0.01: a linear floor small beside the early regret


def theory_controls() -> list[dict]:
    """The negative controls of the theory runs: epsilon-greedy RankNet at each of ``THEORY_CONTROL_EPSILONS``
    (None: its default), its pairs formed by ``THEORY_PAIRING``."""
    return [{"name": THEORY_CONTROL, "params": {**({} if epsilon is None else {"epsilon": epsilon}),
                                                 "pairing": THEORY_PAIRING}} for epsilon in THEORY_CONTROL_EPSILONS]


def theory_grid(seeds: int, rounds: int):
    """PairRank_C (alpha = ``THEORY_ALPHA``, not Lemma 2's alpha_t) in the linear world with the logistic pair user
    (:mod:`.worlds`), its pairs formed by ``THEORY_PAIRING``, beside the negative controls epsilon-greedy RankNet
    (constant epsilon, 0.1 and 0.01) on the same pairs: the whole ranking is shown and examined (p* = 1), and the
    mis-ordered pairs are the Kendall distance to the order of theta* . x."""
    algorithms = [{"name": "pairrank_c", "params": {"alpha": THEORY_ALPHA, "pairing": THEORY_PAIRING}},
                  *theory_controls()]
    return expand_grid({"algorithms": algorithms, "datasets": worlds.LINEAR_DATA, "click_models": worlds.LINEAR_USER,
                        "seeds": seeds, "rounds": rounds})
