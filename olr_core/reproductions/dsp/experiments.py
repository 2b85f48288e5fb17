"""The DSP chapter's experiments (Wang et al., SIGIR 2019): the text's and the code's configurations, the grids
of Tables 2-3 and Figures 2-4, and :data:`PROFILES`, the only copy of their run sizes."""

from __future__ import annotations

import dataclasses

import pandas as pd

from ...claims import with_seeds
from ...data import get_spec
from ...experiments import expand_grid
from ..sources import HCDM, Cited, citation_rows, citation_table, plain

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


def config_caption(config: str, names, folds, seeds, rounds: int) -> str:
    """A table's caption in words: "As the code ran: MQ2008, folds 1 to 5, 1 seed per fold, 10,000 rounds"."""
    from ...formatting import count_text
    from ...names import name_of

    folds = sorted(folds)
    span = (f"folds {folds[0]} to {folds[-1]}" if len(folds) > 2 and folds == list(range(folds[0], folds[-1] + 1))
            else f"fold{'s' * (len(folds) != 1)} {', '.join(map(str, folds))}")
    return (f"{CONFIG_TITLES.get(config, config).capitalize()}: "
            f"{', '.join(name_of(d) for d in config_datasets(config, names))}, {span}, "
            f"{count_text(seeds, 'seed')} per fold, {count_text(rounds, 'round')}")


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


# Sizes of each experiment per profile, their only copy: the claims judge main and figures; the book's pages
# take theirs from here too (notebooks/manifest.yml names the experiment; ablation: the DSP ablation page only;
# theory: the Monte Carlo sizes of the dsp_theory page).
PROFILES = {
    "tiny": {"main": {"folds": [1, 2, 3, 4, 5], "seeds": 1, "rounds": 200, "datasets": []},
             "figures": {"fold": 1, "seeds": 1, "rounds": 100, "cosine_rounds": 100, "lambdas": [0.0, 0.5, 1.0],
                         "ks": [0, 3], "rs": [0, 20]},
             "ablation": {"folds": [1], "seeds": 1, "rounds": 200},
             "theory": {"samples": 2000, "queries": 20, "moment_samples": 200, "regret_rounds": 200}},
    "quick": {"main": {"folds": [1, 2, 3, 4, 5], "seeds": 1, "rounds": 10_000, "datasets": []},
              "figures": {"fold": 1, "seeds": 5, "rounds": 2000, "cosine_rounds": 2000,
                          "lambdas": [0.0, 0.25, 0.5, 0.75, 1.0], "ks": [0, 1, 2, 3, 4, 5, 6, 7],
                          "rs": [0, 5, 10, 20, 50]},
              "ablation": {"folds": [1, 2, 3, 4, 5], "seeds": 1, "rounds": 10_000},
              "theory": {"samples": 20_000, "queries": 100, "moment_samples": 300, "regret_rounds": 2000}},
    "paper": {"main": {"folds": [1, 2, 3, 4, 5], "seeds": 3, "rounds": 10_000, "datasets": ["synth-mq"]},
              "figures": {"fold": 1, "seeds": 15, "rounds": 10_000, "cosine_rounds": 5000,
                          "lambdas": [0.0, 0.25, 0.5, 0.75, 1.0], "ks": [0, 1, 2, 3, 4, 5, 6, 7],
                          "rs": [0, 5, 10, 20, 50]},
              "ablation": {"folds": [1, 2, 3, 4, 5], "seeds": 3, "rounds": 10_000},
              "theory": {"samples": 200_000, "queries": 300, "moment_samples": 2000, "regret_rounds": 10_000}},
}
MAIN_DATASETS = ["synth-mq", "mq2008"]
SYNTHETIC_DATASETS = ("synth-mq",)
FIGURE_DATASET = "synth-mslr"


def experiments(profile: str, config: str, datasets: list[str], seeds: int | None = None,
                **_) -> dict[str, list]:
    """The run specs of each experiment for ``profile``; ``datasets``: the main data sets available.

    The main grid runs the real sets found plus the profile's synthetic ``datasets`` (the quick
    profile: none, so that its cost stays bounded), or the synthetic default when that leaves
    none; the code's configuration is about the paper's numbers and runs the real sets only."""
    sizes = with_seeds(PROFILES[profile], seeds)
    main, fig = sizes["main"], sizes["figures"]
    real = [d for d in datasets if d not in SYNTHETIC_DATASETS]
    names = [*main["datasets"], *real] or list(SYNTHETIC_DATASETS)
    out = {"main": main_grid(config_datasets(config, names), main["folds"], main["seeds"], main["rounds"],
                                 config=config)}
    where = (FIGURE_DATASET, fig["fold"], fig["seeds"])
    out["lambda"] = lambda_grid(*where, fig["rounds"], fig["lambdas"], config)
    out["cosine"] = cosine_grid(*where, fig["cosine_rounds"], config)
    out["gt"] = gt_grid(*where, fig["rounds"], config)
    out["k"] = sweep_grid(*where, fig["rounds"], "dsp_k", fig["ks"], config)
    out["r"] = sweep_grid(*where, fig["rounds"], "dsp_r", fig["rs"], config)
    return out
