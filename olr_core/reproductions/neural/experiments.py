"""The neural chapter's experiments (Jia & Wang, WWW 2022): grids, tuning, the ablation's variants, the theory
check's world, and :data:`PROFILES`, the only copy of their run sizes."""

from __future__ import annotations

from pathlib import Path

from ...claims import with_seeds
from ...data.registry import available
from ...experiments import expand_grid
from ...experiments.store import default_store_dir
from .. import worlds
from ..pairrank import experiments as pairrank

ALGORITHMS = ["olranknet", "ollambdarank", "ollambdarank_gt", "pairrank_c", "epsilon_greedy", "pdgd", "neural_pdgd",
              "dbgd", "neural_dbgd"]
NEURAL = ["olranknet", "ollambdarank", "ollambdarank_gt", "neural_pdgd", "neural_dbgd"]
CLICK_MODELS = pairrank.CLICK_MODELS
DEFAULTS = {"olranknet": {"alpha": 0.1, "l2": 0.01, "learning_rate": 0.01},
            "ollambdarank": {"alpha": 0.1, "l2": 0.01, "learning_rate": 0.01},
            "ollambdarank_gt": {"learning_rate": 0.01}, "neural_pdgd": {"learning_rate": 0.01},
            "neural_dbgd": {"learning_rate": 0.1}}
# The paper's grid (Sec. 5.1): lambda and alpha over 10^-1..10^-4 and the learning rate over 10^-1..10^-3 for
# olRankNet and olLambdaRank (48 settings), the learning rate alone (3) for PDGD and DBGD: a budget that favours
# the proposed methods. Here every learner a claim of the chapter compares (ALGORITHMS, the linear ones too) is
# tuned on this chapter's tuning page with the same number of settings and the same seeds: four each at
# "quick", nine each at "paper" (the linear methods' nine are the PairRank chapter's grids). olRankNet and
# olLambdaRank are tuned each on its own (olLambdaRank's gradient is weighted by |Delta NDCG|, so the
# regularisation that suits one need not suit the other).
_NET_RATES_9 = [1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001]
_OL_PAPER = {"alpha": [0.1, 0.01, 0.001], "l2": [0.1, 0.01, 0.001], "learning_rate": [0.01]}
_OL_QUICK = {"alpha": [0.1, 0.01], "l2": [0.1, 0.001], "learning_rate": [0.01]}
TUNING_GRIDS = {
    "paper": {"olranknet": _OL_PAPER, "ollambdarank": _OL_PAPER,
              "ollambdarank_gt": {"learning_rate": _NET_RATES_9}, "neural_pdgd": {"learning_rate": _NET_RATES_9},
              "neural_dbgd": {"learning_rate": _NET_RATES_9},
              **{name: pairrank.TUNING_GRID[name] for name in ("pairrank_c", "epsilon_greedy", "pdgd", "dbgd")}},
    "quick": {"olranknet": _OL_QUICK, "ollambdarank": _OL_QUICK,
              "ollambdarank_gt": {"learning_rate": [0.1, 0.03, 0.01, 0.001]},
              "neural_pdgd": {"learning_rate": [0.1, 0.03, 0.01, 0.001]},
              "neural_dbgd": {"learning_rate": [0.3, 0.1, 0.01, 0.001]},
              "pairrank_c": {"alpha": [0.01, 0.1], "l2": [0.1, 10.0]},
              "epsilon_greedy": {"epsilon": [0.05, 0.2], "l2": [0.1, 10.0]},
              "pdgd": {"learning_rate": [0.01, 0.1, 1.0, 10.0]},
              "dbgd": {"learning_rate": [0.01, 0.1], "step": [1.0, 3.0]}},
}


def tuned_path() -> Path:
    return default_store_dir() / "neural_tuned.json"


def tuning_specs(dataset: str, seeds: int, rounds: int, grid_name: str = "quick", click_models=CLICK_MODELS):
    """Every setting of every tuned method under every user, scored on the validation split."""
    return pairrank.grid_specs(TUNING_GRIDS[grid_name], dataset, seeds, rounds, click_models)


def on_grid_edge(choice: dict, grid_name: str) -> list[str]:
    return pairrank.grid_edge(choice, TUNING_GRIDS[grid_name])


def save_tuned(choice: dict) -> None:
    pairrank.write_tuned(tuned_path(), choice)


def tuned_params() -> dict:
    """Every algorithm's parameters from this chapter's tuning page, which tunes all of them (the linear
    ones' fallback before it ran: the PairRank chapter's choices; the neural ones': :data:`DEFAULTS`)."""
    linear = {k: dict(v) for k, v in pairrank.tuned_params().items() if k in ALGORITHMS}
    return pairrank.read_tuned(tuned_path(), {**linear, **DEFAULTS}, "neural_tuning")


def main_grid(datasets, seeds: int, rounds: int, params: dict, click_models=CLICK_MODELS, algorithms=ALGORITHMS):
    """Figures 4-6: every algorithm, data set, user and seed (one set of runs for all three figures)."""
    return pairrank.main_grid(datasets, seeds, rounds, params, click_models, algorithms, reference=None)






# -- the ablation: the paper's text, the authors' code, and our bounded training -------------------

def ablation_variants(tuned: dict, width: int) -> dict[str, dict]:
    """Label -> olRankNet parameters: as the chapter runs it, each choice the text and the code
    differ on, the whole-history refit, the full A (at a width where it fits), and no exploration."""
    base = {**tuned.get("olranknet", {}), "width": int(width)}
    return {"olRankNet (bounded replay, diagonal A)": base,
            "whole-history refit (the code's training)": {**base, "training": "history", "epochs": 1, "batch": 256},
            "full A": {**base, "uncertainty": "full"},
            "plain gradient descent (the text's optimiser)": {**base, "optimizer": "sgd", "learning_rate": 0.1},
            "weight decay on theta (the code's regulariser)": {**base, "regularizer": "code"},
            "no exploration (greedy network)": {**base, "explore": False}}


def ablation_grid(dataset: str, seeds: int, rounds: int, variants: dict, click_models=("navigational",)):
    specs = []
    for params in variants.values():
        specs += expand_grid({"algorithms": [{"name": "olranknet", "params": params}], "datasets": dataset,
                              "click_models": list(click_models), "seeds": seeds, "rounds": rounds})
    return specs


def variant_of(spec, variants: dict) -> str:
    for label, params in variants.items():
        if spec.params == dict(sorted(params.items())):
            return label
    raise KeyError(f"{spec.label()} is not a run of the neural ablation")


# -- the claims' experiments and their sizes -------------------------------------------------------

QUICK_DATA = {"datasets": [], "real_datasets": ["mq2008"], "fallback": "synth-mq-5g"}

PAPER_DATA = {"datasets": ["synth-mslr"], "real_datasets": ["mq2008", "mslr-web10k", "yahoo"],
              "fallback": "synth-mslr"}

# Sizes of each experiment per profile, their only copy: the claims judge main and theory; the book's pages
# take theirs from here too (notebooks/manifest.yml names the experiment; tuning, ablation and lda, Figure 3's
# data sample: pages only). The theory page's coverage check of Lemma 3.3 (:mod:`..coverage`): ``coverage_runs``
# replays of ``coverage_rounds`` rounds; run r is seeded by r alone, so a smaller count keeps the first runs of a larger
# one (quick: 12, was 20, #46; of 20, every run in scope held every lemma check and none the constant alpha).
PROFILES = {"tiny": {"main": {"seeds": 1, "rounds": 60, **QUICK_DATA}, "theory": {"seeds": 1, "rounds": 200,
                                                                   "coverage_runs": 2, "coverage_rounds": 30},
                     "tuning": {"seeds": 1, "rounds": 60}, "ablation": {"seeds": 1, "rounds": 60},
                     "lda": {"sample": 500}},
            "quick": {"main": {"seeds": 5, "rounds": 1000, **QUICK_DATA}, "theory": {"seeds": 5, "rounds": 2000,
                                                                    "coverage_runs": 12, "coverage_rounds": 150},
                      "tuning": {"seeds": 1, "rounds": 500}, "ablation": {"seeds": 5, "rounds": 500},
                      "lda": {"sample": 500}},
            "paper": {"main": {"seeds": 10, "rounds": 5000, **PAPER_DATA}, "theory": {"seeds": 5, "rounds": 10000,
                                                                    "coverage_runs": 50, "coverage_rounds": 500},
                      "tuning": {"seeds": 1, "rounds": 2000}, "ablation": {"seeds": 5, "rounds": 2000},
                      "lda": {"sample": 2000}}}
MAIN_DATASETS = ["synth-mslr", "synth-mq-5g", "mq2008", "mslr-web10k", "yahoo"]
THEORY_DATASET, THEORY_USER = worlds.NETWORK_DATA, worlds.NETWORK_USER
THEORY_PAIRING = "shuffled"     # the pairing under which assumption O can hold (adjacent pairs never form some pairs)
THEORY_CONTROL = "epsilon_greedy"   # the negative controls: constant epsilon, so linear regret
THEORY_CONTROL_EPSILONS = [None, 0.01]  # the default 0.1, and 0.01: a linear floor small beside the early regret


def experiments(profile: str, config: str, datasets: list[str], data_dir=None, seeds: int | None = None,
                **_) -> dict[str, list]:
    """The profile's own data sets (the figure pages', so that both share runs), not ``datasets``."""
    sizes = with_seeds(PROFILES[profile], seeds)
    main, theory = sizes["main"], sizes["theory"]
    params = tuned_params()
    chosen = available(main["datasets"], main["real_datasets"], data_dir, fallback=main["fallback"])
    return {"main": main_grid(chosen, main["seeds"], main["rounds"], params),
            "theory": theory_grid(theory["seeds"], theory["rounds"], params)}


def theory_controls() -> list[dict]:
    """The negative controls of the theory runs: epsilon-greedy RankNet at each of ``THEORY_CONTROL_EPSILONS``
    (None: its default), its pairs formed by ``THEORY_PAIRING``."""
    return [{"name": THEORY_CONTROL, "params": {**({} if epsilon is None else {"epsilon": epsilon}),
                                                 "pairing": THEORY_PAIRING}} for epsilon in THEORY_CONTROL_EPSILONS]


def theory_grid(seeds: int, rounds: int, params: dict):
    """olRankNet (its tuned constant alpha, not alpha_t) in the network world with the logistic pair user
    (:mod:`.worlds`; regret = mis-ordered pairs, the Kendall distance to the true order, since the whole ranking is
    shown), its pairs formed by ``THEORY_PAIRING``, beside the negative controls epsilon-greedy RankNet (constant
    epsilon, 0.1 and 0.01) on the same pairs."""
    algorithms = [{"name": "olranknet", "params": {**params.get("olranknet", {}), "pairing": THEORY_PAIRING}},
                  *theory_controls()]
    return expand_grid({"algorithms": algorithms, "datasets": THEORY_DATASET, "click_models": THEORY_USER,
                        "seeds": seeds, "rounds": rounds})
