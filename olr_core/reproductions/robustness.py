"""Which learner survives which user: every click learner of the book against every click model.

The head-to-head page sets the learners against the papers' three cascade users; here the same
learners, with the same settings (each chapter's own choice, see :mod:`.head_to_head`), on the same
data, queries and seeds, meet the users of the click-model literature (:mod:`..click_models`): the
DBN, the click chain model, the position-based model, the user browsing model, trust bias and a
noisy cascade. The three cascade users' runs are the head-to-head page's runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..claims import MIN_PAIRS
from . import head_to_head as h2h

PAPERS_USERS = ["perfect", "navigational", "informational"]
LITERATURE_USERS = ["dbn", "ccm", "pbm", "ubm", "trust_bias", "navigational+noise=0.1"]
USERS = PAPERS_USERS + LITERATURE_USERS


def rank_table(standings: pd.DataFrame, users=USERS) -> pd.DataFrame:
    """Learners (rows) x users (columns) of the first data set: each learner's rank under that user."""
    first = standings[standings.dataset == standings.dataset.iloc[0]]
    ranks = first.pivot_table(index="algorithm", columns="click_model", values="rank")
    return ranks[[u for u in users if u in ranks.columns]]


def rank_intervals(standings: pd.DataFrame, users=USERS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ranks each learner's runs allow under each user (first data set), as :func:`rank_table`'s best and worst:
    from the 95 % t-interval of each mean, a learner ranks below every learner whose interval lies wholly above
    its own and above every one wholly below it; the ranks between are what the runs cannot order. A learner
    with a single run has an unbounded interval (every rank)."""
    from scipy import stats

    first = standings[standings.dataset == standings.dataset.iloc[0]]
    best, worst = {}, {}
    for user, cell in first.groupby("click_model", sort=False):
        half = stats.t.ppf(0.975, np.maximum(cell["runs"] - 1, 1)) * cell["se"].fillna(np.inf)
        low, high = (cell["mean"] - half).to_numpy(), (cell["mean"] + half).to_numpy()
        above = (low[None, :] > high[:, None]).sum(axis=1)        # learners surely better than each
        below = (high[None, :] < low[:, None]).sum(axis=1)        # learners surely worse
        best[user] = pd.Series(1 + above, index=cell["algorithm"].to_numpy())
        worst[user] = pd.Series(len(cell) - below, index=cell["algorithm"].to_numpy())
    order = [u for u in users if u in best]
    return pd.DataFrame(best)[order], pd.DataFrame(worst)[order]


def survivors(standings: pd.DataFrame, reference: str = "navigational") -> pd.DataFrame:
    """Per learner (first data set): whether it is among the best (``tied`` with the best) under the
    reference user, and under which of the other users it is and is not."""
    first = standings[standings.dataset == standings.dataset.iloc[0]]
    rows = []
    for algorithm, runs in first.groupby("algorithm"):
        tied = dict(zip(runs.click_model, runs.tied))
        others = [u for u in tied if u != reference]
        rows.append({"algorithm": algorithm, "best_under_reference": bool(tied.get(reference, False)),
                     "best_under": [u for u in others if tied[u]],
                     "not_best_under": [u for u in others if not tied[u]]})
    return pd.DataFrame(rows).set_index("algorithm")


def rank_spread(ranks: pd.DataFrame) -> pd.DataFrame:
    """Per learner: best, worst and median rank across the users, and the users where each extreme is met."""
    out = pd.DataFrame({"best": ranks.min(axis=1), "worst": ranks.max(axis=1), "median": ranks.median(axis=1)})
    out["best_at"] = [", ".join(ranks.columns[ranks.loc[a] == out.loc[a, "best"]]) for a in ranks.index]
    out["worst_at"] = [", ".join(ranks.columns[ranks.loc[a] == out.loc[a, "worst"]]) for a in ranks.index]
    return out.sort_values("median")


BEST = "best (by the mean)"
TIED = "tied with it (paired t-tests, Holm-corrected)"


def leader_table(standings: pd.DataFrame, users=USERS) -> pd.DataFrame:
    """Users (rows named ``user``, in the order of ``users``) of the first data set: the learner of rank 1 by the
    mean and the learners ``tied`` with it (the paired tests of :func:`.head_to_head.standings` cannot tell them
    apart, Holm-corrected over the user's learners); "none" when the tests separate every
    other, "not tested" below ``MIN_PAIRS`` runs in the cell."""
    first = standings[standings.dataset == standings.dataset.iloc[0]]
    rows = {}
    for leader in h2h.leaders(first):
        untested = f"not tested (fewer than {MIN_PAIRS} paired runs)"
        rows[leader.user] = {BEST: leader.best,
                             TIED: ", ".join(leader.tied) or ("none" if leader.tested else untested)}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=[BEST, TIED])
    return table.reindex([u for u in users if u in table.index]).rename_axis(index="user")


def rank_correlation(ranks: pd.DataFrame, reference: str = "navigational") -> pd.Series:
    """Spearman correlation of each user's ranking of the learners with the reference user's ranking."""
    from scipy.stats import spearmanr

    return pd.Series({u: float(spearmanr(ranks[reference], ranks[u]).statistic) if u != reference else 1.0
                      for u in ranks.columns}).replace(np.nan, 0.0)
