"""The growing-library chapter's experiments (Delage, KDD 2009): Table 2's eight rankers over a whole stream
(Cora when the data directory has it, the synthetic library otherwise), GPER's runs for the regret check, and
:data:`PROFILES`, the only copy of their run sizes."""

from __future__ import annotations

from ...claims import with_seeds
from ...data.registry import load_library
from ...experiments import RunSpec
from ...rankers import LIBRARY_ALGORITHMS

ALGORITHMS = list(LIBRARY_ALGORITHMS)


def table2_grid(datasets, seeds: int, rounds: int | None = None, data_dir=None) -> list[RunSpec]:
    """Every algorithm over each stream (whole, or its first ``rounds`` queries), ``seeds`` runs each
    (the random policies differ by seed; deterministic rankers only through tie-breaking)."""
    specs = []
    for name in datasets:
        length = load_library(name, data_dir).n_queries if rounds is None else rounds
        specs += [RunSpec(a, name, 1, "choice", int(length), seed) for a in ALGORITHMS for seed in range(seeds)]
    return specs


# -- the claims' experiments and their sizes -------------------------------------------------------

# Sizes of each experiment per profile, their only copy (rounds None: the whole stream); the book's pages take
# theirs from here too (notebooks/manifest.yml names the experiment; the regret page's adversarial and growth
# horizons are its own).
PROFILES = {"tiny": {"table2": {"seeds": 1, "rounds": 300},
                     "regret": {"seeds": 1, "rounds": 255, "adversarial_rounds": 255, "growth_rounds": 300}},
            "quick": {"table2": {"seeds": 5, "rounds": None},
                      "regret": {"seeds": 5, "rounds": 8191, "adversarial_rounds": 4095, "growth_rounds": 20000}},
            "paper": {"table2": {"seeds": 10, "rounds": None},
                      "regret": {"seeds": 10, "rounds": 16383, "adversarial_rounds": 16383, "growth_rounds": 20000}}}
MAIN_DATASETS = ["cora", "synth-library"]
REGRET_DATASET = "synth-library-slow"


def experiments(profile: str, config: str, datasets: list[str], data_dir=None, seeds: int | None = None,
                **_) -> dict[str, list]:
    sizes = with_seeds(PROFILES[profile], seeds)
    table, reg = sizes["table2"], sizes["regret"]
    return {"table2": table2_grid(datasets, table["seeds"], table["rounds"], data_dir),
            "regret": regret_specs(reg["seeds"], reg["rounds"])}


def regret_specs(seeds: int, rounds: int) -> list[RunSpec]:
    return [RunSpec("klrank_gper", REGRET_DATASET, 1, "choice", rounds, seed) for seed in range(seeds)]
