"""The DSP chapter's experiments (Wang et al., SIGIR 2019): grids, comparison tables, paper numbers."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..claims import paired_test
from ..data import get_spec
from ..experiments import expand_grid
from .sources import HCDM, Cited, citation_rows, citation_table, plain

ALGORITHMS = ["dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd", "nsgd_dsp"]
BASES = ["dbgd", "mgd", "nsgd"]
CLICK_MODELS = ["perfect", "navigational", "informational"]


# "As the text says" and "as the code ran": the choices where the paper's text and the authors'
# public code differ (shared/REFERENCE_NOTES.md). Each entry: a switch of the code, applied on top of the
# text's configuration ("code" applies all of them): (description, {scope: {param: Cited(value, where the
# authors' code sets it)}}, stop rule or None). A scope is a base algorithm (it covers the X-DSP variant
# too), "dsp" (the X-DSP variants) or "all". The code's run script is scripts/SIGIR2019.py; it sets only
# the decay (and NSGD's and DSP's sizes), so the rates and samples are the classes' defaults.
_SCRIPT = f"{HCDM}/scripts/SIGIR2019.py"
_DBGD = f"{HCDM}/algorithms/DBGD"
CODE_CHOICES = {
    "learning_rate": ("learning rate 0.01 (text: 0.1)",
                      {"dbgd": {"learning_rate": Cited(0.01, f"{_DBGD}/pdbgd.py:24, pdbgd_dsp.py:37")},
                       "mgd": {"learning_rate": Cited(0.01, f"{_DBGD}/pdbgd.py:24 (P_MGD and P_MGD_DSP inherit "
                                                            "P_DBGD's: pmgd.py:23, pmgd_dsp.py:35)")},
                       "nsgd": {"learning_rate": Cited(0.01, f"{_DBGD}/tddbgd.py:31 (TD_NSGD and TD_NSGD_DSP "
                                                             "inherit TD_DBGD's: tdNSGD.py:39, tdNSGD_dsp.py:47)")}},
                      None),
    "multileave": ("probabilistic interleaving in DBGD, probabilistic multileaving with 49 candidates in MGD "
                   "(text: MGD team draft with 9; DBGD's method not stated)",
                   {"dbgd": {"multileave": Cited("probabilistic", f"{_SCRIPT}:32, :58 (P_DBGD, P_DBGD_DSP)")},
                    "mgd": {"multileave": Cited("probabilistic", f"{_SCRIPT}:35, :61 (P_MGD, P_MGD_DSP; 49 "
                                                                 f"candidates: {_DBGD}/pmgd.py:25, pmgd_dsp.py:37)")}},
                   None),
    "credit": ("probabilistic credit estimated from 10,000 sampled team assignments (else exact)",
               {"dbgd": {"credit_samples": Cited(10_000, f"{_DBGD}/pdbgd.py:26, pdbgd_dsp.py:39 (used at "
                                                         f"{HCDM}/multileaving/ProbabilisticMultileave.py:55)")},
                "mgd": {"credit_samples": Cited(10_000, f"{_DBGD}/pdbgd.py:26 (inherited by P_MGD, P_MGD_DSP)")}},
               None),
    "decay": ("no learning-rate decay in MGD and NSGD",
              {"mgd": {"decay": Cited(1.0, f"{_DBGD}/pmgd.py:16-18, pmgd_dsp.py:19-21 (the model is built without "
                                           f"the decay of {_SCRIPT}:28, so {HCDM}/models/linearmodel.py:15's 1.0)")},
               "nsgd": {"decay": Cited(1.0, f"{_DBGD}/tdNSGD.py:18-20, tdNSGD_dsp.py:18-20 (likewise: "
                                            f"{HCDM}/models/linearmodel.py:15)")}},
              None),
    "nsgd_winners": ("NSGD steps to the mean of all winners (text: the best one, ties broken on difficult queries)",
                     {"nsgd": {"winners": Cited("mean", f"{_DBGD}/tdNSGD.py:52-55, tdNSGD_dsp.py:61-62, :86 (the "
                                                        "tie-break runs only while the queue of difficult queries "
                                                        "is not full)")}},
                     None),
    "stop_rule": ("stop draw at every examined position (text: only after a click)", {},
                  Cited("every_position", f"{HCDM}/utils/clicks.py:38-42")),
    "renormalize": ("projected DSP direction renormalised to unit length",
                    {"dsp": {"dsp_renormalize": Cited(True, f"{HCDM}/models/linearmodel.py:81-84")}}, None),
}
# A choice that acts only together with another: the sampled credit needs probabilistic multileaving.
NEEDS = {"credit": "multileave"}
ADD_ONE = tuple(f"text+{name}" for name in CODE_CHOICES if name not in NEEDS)  # the text with one code choice
DROP_ONE = tuple(f"code-{name}" for name in CODE_CHOICES)     # the code without one of its choices
CONFIGS = ("text", "code", *ADD_ONE, *DROP_ONE)


def config_choices(config: str) -> list[str]:
    """The code choices a configuration applies: none for "text", all for "code", one for
    "text+NAME", all but one (and what needs it) for "code-NAME"."""
    if config == "text":
        return []
    if config == "code":
        return list(CODE_CHOICES)
    if config in ADD_ONE:
        return [config.removeprefix("text+")]
    if config in DROP_ONE:
        kept = [name for name in CODE_CHOICES if name != config.removeprefix("code-")]
        return [name for name in kept if NEEDS.get(name, name) in kept]
    raise ValueError(f"unknown DSP configuration {config!r}; valid: {', '.join(CONFIGS)}")


def config_params(config: str, algorithm: str) -> tuple[dict, str]:
    """Parameters of ``algorithm`` and the users' stop rule in configuration ``config``."""
    params, stop_rule = {}, "after_click"
    base = algorithm.removesuffix("_dsp")
    for name in config_choices(config):
        _, per_algorithm, rule = CODE_CHOICES[name]
        for scope in ("all", base, "dsp" if algorithm.endswith("_dsp") else None):
            params.update(plain(per_algorithm.get(scope, {})))
        stop_rule = rule.value if rule else stop_rule
    return params, stop_rule


def code_sources(config: str = "code") -> pd.DataFrame:
    """Every parameter ``config`` sets, with the file and line of the authors' code it comes from
    (the reproduction-choices table of the chapter)."""
    rows = []
    for name in config_choices(config):
        _, per_algorithm, rule = CODE_CHOICES[name]
        for scope, params in per_algorithm.items():
            rows += citation_rows(config, scope, params, name)
        if rule:
            rows += citation_rows(config, "every user", {"stop_rule": rule}, name)
    return citation_table(rows)


def main_grid(datasets, folds, seeds, rounds: int = 10_000, algorithms=ALGORITHMS, click_models=CLICK_MODELS,
              params: dict | None = None, config: str = "text", **extra):
    """Every algorithm x data set x fold x click model x seed of Tables 2-3 and Figure 2, in ``config``."""
    return in_config(expand_grid({"algorithms": [{"name": a, "params": dict(params or {})} for a in algorithms],
                                  "datasets": list(datasets), "folds": list(folds),
                                  "click_models": list(click_models), "seeds": seeds, "rounds": rounds, **extra}),
                     config)


CONFIG_TITLES = {"text": "as the text says", "code": "as the code ran"}


def config_datasets(config: str, names) -> list[str]:
    """The data sets ``config`` runs of ``names``: the code's configuration is about the paper's
    numbers, so it runs the real sets only (the synthetic ones when there are none)."""
    real = [n for n in names if not get_spec(n).synthetic]
    return (real or list(names)) if config == "code" else list(names)


def config_grids(names, folds, seeds, rounds: int, configs=("text", "code")) -> dict[str, list]:
    """Tables 2-3 and Figure 2 for each configuration: config -> its :func:`main_grid`."""
    return {config: main_grid(config_datasets(config, names), folds, seeds, rounds, config=config)
            for config in configs}


def within_paper_sd(table: pd.DataFrame, k: float = 1.0) -> tuple[int, int]:
    """(cells within ``k`` paper s.d. of the paper's mean, cells with a paper number) of a
    :func:`with_paper` table: point estimates, not a verdict (claims T2-cells and T3-cells judge the intervals;
    the pages state their records, :mod:`.prose`)."""
    z = table["z"].dropna()
    return int((z.abs() <= k).sum()), len(z)


def config_caption(config: str, names, folds, seeds, rounds: int) -> str:
    """'**As the code ran** (`code`): mq2008; folds [...]; 1 seed(s) per fold; 10000 rounds'."""
    return (f"**{CONFIG_TITLES.get(config, config).capitalize()}** (`{config}`): "
            f"{', '.join(config_datasets(config, names))}; folds {folds}; {seeds} seed(s) per fold; {rounds} rounds")


def in_config(specs, config: str = "text") -> list:
    """The runs of a grid in ``config``: the configuration's parameters and stop rule under each
    run's own parameters (a figure's swept parameter wins). ``dsp=True`` on DBGD or MGD counts as X-DSP."""
    out = []
    for spec in specs:
        projected = spec.params.get("dsp", False) and not spec.algorithm.endswith("_dsp")
        chosen, stop_rule = config_params(config, spec.algorithm + ("_dsp" if projected else ""))
        out.append(dataclasses.replace(spec, params={**chosen, **spec.params}, stop_rule=stop_rule))
    return out


def lambda_grid(dataset, fold, seeds, rounds, lambdas, config: str = "text"):
    """Figure 3 (a, b): MGD-DSP with the update lambda A u + (1 - lambda) u. The figure reads the online sum
    and the final offline NDCG only, so the test split is evaluated once, after the last round (evaluation
    draws from its own random stream: the learning is the same with any ``eval_every``)."""
    return in_config(expand_grid({"datasets": dataset, "folds": fold, "seeds": seeds, "click_models": CLICK_MODELS,
                                  "rounds": rounds, "eval_every": max(1, rounds), "algorithms": [{"name": "mgd_dsp",
                                                                    "params": {"dsp_lambda": float(lam)}}
                                                                   for lam in lambdas]}), config)


def cosine_grid(dataset, fold, seeds, rounds, config: str = "text"):
    """Figure 3 (c): MGD and MGD-DSP with the cosine to the offline LambdaRank weights recorded."""
    return in_config(expand_grid({"datasets": dataset, "folds": fold, "seeds": seeds, "click_models": CLICK_MODELS,
                                  "rounds": rounds, "algorithms": ["mgd", "mgd_dsp"],
                                  "reference": "offline_lambdarank"}), config)


GT_VARIANTS = {"": {"dsp": False}, "-DSP": {"dsp": True}, "-DSP-GT": {"dsp": True, "dsp_oracle": True}}


def gt_grid(dataset, fold, seeds, rounds, config: str = "text"):
    """Figure 3 (d): DBGD and MGD without DSP, with DSP, and with the true document space, perfect user."""
    algos = [{"name": n, "params": p} for n in ("dbgd", "mgd") for p in GT_VARIANTS.values()]
    return in_config(expand_grid({"datasets": dataset, "folds": fold, "seeds": seeds, "click_models": "perfect",
                                  "rounds": rounds, "algorithms": algos}), config)


def gt_variant(spec) -> str:
    """'DBGD', 'DBGD-DSP' or 'DBGD-DSP-GT' (likewise MGD) for a run of :func:`gt_grid`."""
    flags = {key: spec.params.get(key, False) for key in ("dsp", "dsp_oracle")}
    suffix = next(k for k, v in GT_VARIANTS.items() if flags == {"dsp": False, "dsp_oracle": False, **v})
    return spec.algorithm.upper() + suffix


def sweep_grid(dataset, fold, seeds, rounds, parameter: str, values, config: str = "text"):
    """Figure 4: MGD-DSP over the document-space parameter ``dsp_k`` or ``dsp_r`` (final values only: the
    test split is evaluated once, after the last round, as in :func:`lambda_grid`)."""
    return in_config(expand_grid({"datasets": dataset, "folds": fold, "seeds": seeds, "click_models": CLICK_MODELS,
                                  "rounds": rounds, "eval_every": max(1, rounds),
                                  "algorithms": [{"name": "mgd_dsp", "params": {parameter: int(v)}} for v in values]}),
                     config)


def paper_numbers() -> dict:
    return yaml.safe_load((Path(__file__).with_name("dsp_sigir2019.yml")).read_text())


def paper_frame(metric: str) -> pd.DataFrame:
    """The paper's Table 2 (``online``) or Table 3 (``offline``) as a tidy frame."""
    numbers = paper_numbers()
    rows = []
    for click, algos in numbers[metric].items():
        for algo, values in algos.items():
            for dataset, (mean, sd) in zip(numbers["datasets"], values):
                rows.append({"click_model": click, "algorithm": algo, "dataset": dataset,
                             "paper_mean": mean, "paper_sd": sd})
    return pd.DataFrame(rows)


def comparison_table(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, sd, relative improvement of X-DSP over X and a paired t-test over (fold, seed).

    Pairs are the runs of X and X-DSP with the same data set, fold, click model and seed,
    which share queries and users. No test (p = NaN) with fewer than 5 pairs.
    """
    keys = ["dataset", "click_model", "fold", "seed"]
    rows = []
    for (dataset, click), part in summary.groupby(["dataset", "click_model"], sort=False):
        wide = part.pivot_table(index=keys[2:], columns="algorithm", values=metric)
        for base in BASES:
            for algo in (base, f"{base}_dsp"):
                if algo not in wide:
                    continue
                row = {"dataset": dataset, "click_model": click, "algorithm": algo,
                       "mean": wide[algo].mean(), "sd": wide[algo].std(ddof=1), "runs": wide[algo].count()}
                if algo.endswith("_dsp") and base in wide:
                    row["improvement_%"] = 100 * (wide[algo].mean() / wide[base].mean() - 1)
                    paired = wide[[base, algo]].dropna()
                    row["p_value"] = paired_test(paired[algo], paired[base])     # NaN below 5 pairs
                rows.append(row)
    return pd.DataFrame(rows)


def with_paper(table: pd.DataFrame, metric: str, comparable: bool = True) -> pd.DataFrame:
    """Join our table with the paper's numbers where the data set is one the paper used, with the
    difference and z = difference / paper s.d.; none at all unless ``comparable`` (the paper's horizon)."""
    out = table.merge(paper_frame(metric), on=["dataset", "click_model", "algorithm"], how="left")
    if not comparable:
        out[["paper_mean", "paper_sd"]] = np.nan
    out["difference"] = out["mean"] - out["paper_mean"]
    out["z"] = out["difference"] / out["paper_sd"]
    return out


def format_table(table: pd.DataFrame, digits: int) -> pd.DataFrame:
    """The paper's layout: 'mean (sd) (+x.xx%)' per algorithm row and data set column."""
    def cell(row):
        text = f"{row['mean']:.{digits}f} ({row['sd']:.{digits}f})"
        if "improvement_%" in row and np.isfinite(row.get("improvement_%", np.nan)):
            star = "*" if row.get("p_value", 1.0) < 0.05 else ""
            text += f" ({row['improvement_%']:+.2f}%{star})"
        if "paper_mean" in row and np.isfinite(row.get("paper_mean", np.nan)):
            text += f" | paper {row['paper_mean']:.{digits}f}"
        return text

    shown = table.assign(cell=table.apply(cell, axis=1))
    order = {a: i for i, a in enumerate(ALGORITHMS)}
    shown = shown.assign(_o=shown["algorithm"].map(order)).sort_values(["click_model", "_o"])
    return shown.pivot_table(index=["click_model", "algorithm"], columns="dataset", values="cell",
                             aggfunc="first", sort=False)


def duel_samples(query, theta, user, n_samples: int, rng, k: int = 3, oracle: bool = False, step: float = 1.0,
                 cutoff: int = 10):
    """Monte Carlo of one DBGD comparison on a fixed query and ranker (for Theorem 3.1 / Lemma 3.2).

    For each of ``n_samples`` directions u (uniform on the sphere): interleave theta with
    theta + step u, let ``user`` click, and record Z (the candidate wins), u, A u with A the
    projector on the document space (inferred with ``k``, or the true one if ``oracle``) and
    the rank of A. Returns a dict of arrays.
    """
    from ..metrics import rank_by_scores
    from ..rankers.interleaving import team_draft, team_draft_credit
    from ..rankers.projection import DocumentSpace
    from ..rankers.scorers import unit_sphere

    space = DocumentSpace(len(theta), k=k, r=0, oracle=oracle)
    directions = unit_sphere(rng, n_samples, len(theta))
    wins = np.zeros(n_samples)
    projected = np.zeros_like(directions)
    ranks = np.zeros(n_samples)
    for i, u in enumerate(directions):
        scores = np.vstack([theta, theta + step * u]) @ query.features.T
        shown, team = team_draft(rank_by_scores(scores, rng), cutoff, rng)
        feedback = user(query, shown, rng)
        credit = team_draft_credit(team, feedback.clicks, 2)
        wins[i] = float(credit[1] > credit[0])
        if feedback.clicks.any() or oracle:
            projected[i], ranks[i] = space.project(u, space.examined(query.features, shown, feedback))
        # else: no click, examination unknown, nothing shown counts as examined: A = 0
    return {"u": directions, "Au": projected, "win": wins, "rank": ranks}


# -- Theorem 3.1's reflection invariance for each proposal scheme (issue #36) ------------------------------------

@functools.cache          # one check per scheme, data set, fold and seed, whatever the configuration or user
def reflection_defect(algorithm: str, dataset: str, fold: int = 1, seed: int = 0, data_dir=None, draws: int = 200,
                      examined: int = 10) -> float:
    """How far the proposals of ``algorithm``'s candidate scheme leave their own support under the reflection
    M = 2A - I of Theorem 3.1's proof, A the projector onto the span of a query's first ``examined`` documents:
    the mean of ||(I - P) M u|| over ``draws`` rounds of candidates u, P the projector onto the span the scheme
    draws from (NSGD: the null space of its losing directions, here 25 random ones; DBGD, MGD: all of R^d, so 0).
    0 is necessary for the reflection invariance the proof needs; above 0 the invariance fails."""
    from ..data.registry import load_fold
    from ..rankers import make_ranker
    from ..rankers.projection import orthonormal_basis

    rng = np.random.default_rng(seed)
    train = load_fold(dataset, fold, data_dir).train
    ranker = make_ranker(algorithm)
    ranker.start(train, np.random.default_rng(seed))
    d = train.n_features
    span = np.zeros((0, d))
    if hasattr(ranker, "losers"):
        for u in rng.standard_normal((ranker.n_null, d)):
            ranker.losers.append((-float(rng.random()), u / np.linalg.norm(u)))
        ranker._span = None
        span = ranker.losing_span()
    queries = rng.integers(0, train.n_queries, draws)
    defects = []
    for q in queries:
        query = train.query(int(q))
        basis = orthonormal_basis(query.features[:examined])
        reflect = 2 * basis.T @ basis - np.eye(d)
        reflected = ranker.propose(query) @ reflect.T
        defects.append(np.linalg.norm(reflected @ span.T, axis=1))
    return float(np.mean(np.concatenate(defects)))
