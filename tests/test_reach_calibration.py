"""Reach that is honest (#46): rerun at the advertised ``runs_needed``, an inconclusive claim is decided in at least
the advertised share of cases, across true effects drawn from a spread (not the observed effect taken as true)."""

import numpy as np
import pytest

from olr_core.claims import POWER, Cell, decide, mean_interval

FIRST_RUNS = 10


def _judge(samples) -> object:
    return decide([Cell(f"c{i}", *mean_interval(x)) for i, x in enumerate(samples)], "", "")


def _rerun_share(cells: int, spread: tuple, seed: int, claims: int = 300) -> tuple[float, int]:
    """Claims of ``cells`` cells, each cell's true standardised effect drawn from N(spread); judged on
    FIRST_RUNS runs per cell; each inconclusive one is rerun with its runs extended to the advertised count and
    counted decided when the verdict is no longer inconclusive. Returns (decided share, claims rerun)."""
    rng = np.random.default_rng(seed)
    decided = rerun = 0
    for _ in range(claims):
        effects = rng.normal(*spread, cells)
        first = [e + rng.standard_normal(FIRST_RUNS) for e in effects]
        outcome = _judge(first)
        if outcome.verdict != "inconclusive" or not outcome.runs_needed:
            continue
        more = outcome.runs_needed - FIRST_RUNS
        later = [np.concatenate([x, e + rng.standard_normal(more)]) for x, e in zip(first, effects)]
        rerun += 1
        decided += _judge(later).verdict != "inconclusive"
    return decided / rerun, rerun


@pytest.mark.parametrize("spread", [(0.3, 0.3), (0.0, 0.5)], ids=["around-0.3", "around-0"])
@pytest.mark.parametrize("cells", [1, 3])
def test_rerunning_at_the_advertised_count_decides_in_the_advertised_share(cells, spread):
    """The advertised share is POWER (80 %); the estimate's s.e. is about 0.027 at 200 reruns, so 3 points of
    slack. Before #46 (the observed effect taken as true, every cell to be decided) one cell around 0.3 was
    decided in 69 %; a flat-prior assurance in 56-76 %."""
    share, rerun = _rerun_share(cells, spread, seed=46 + cells)
    assert rerun >= 100
    assert share >= POWER - 0.03, (share, rerun)
