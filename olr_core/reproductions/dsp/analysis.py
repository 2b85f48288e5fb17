"""The DSP chapter's analysis (Wang et al., SIGIR 2019): the paper's Tables 2-3 beside ours, X-DSP against X on
paired runs, the Monte Carlo of one comparison (Theorem 3.1, Lemma 3.2), NSGD-DSP's update component outside the
document space, and the columns the claims read beyond the run frame."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ...claims import paired_test
from ...formatting import decimals_for, fixed, number_text
from .experiments import ALGORITHMS, BASES, CLICK_MODELS, gt_variant

# The measurement of E[Z (I - A) g] (Theorem 3.1) in each main run's world: NSGD-DSP learns OUTSIDE_WARMUP rounds,
# then OUTSIDE_QUERIES states (its frozen state and a query) are each played OUTSIDE_SAMPLES times.
OUTSIDE_WARMUP, OUTSIDE_QUERIES, OUTSIDE_SAMPLES = 200, 20, 200
TRUE_SPACE = {"dsp_oracle": True, "dsp_r": 0, "dsp_lambda": 1.0, "dsp_renormalize": False}   # S, A u as the theorem


def within_paper_sd(table: pd.DataFrame, k: float = 1.0) -> tuple[int, int]:
    """(cells within ``k`` paper s.d. of the paper's mean, cells with a paper number) of a
    :func:`with_paper` table: point estimates, not a verdict (claims T2-cells and T3-cells judge the intervals;
    the pages state their records, :mod:`.prose`)."""
    z = table["z"].dropna()
    return int((z.abs() <= k).sum()), len(z)


def paper_numbers() -> dict:
    return yaml.safe_load((Path(__file__).with_name("paper_numbers.yml")).read_text())


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
                    row["gain_se"] = _gain_se(paired[algo] - paired[base], wide[base].mean())
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
    """The paper's layout, one number a column: per data set, user and method in the paper's order (users perfect,
    navigational, informational; methods DBGD, DBGD-DSP, MGD, ...), our mean and s.d. (both to two significant digits
    of the s.d., :func:`olr_core.formatting.decimals_for`; ``digits`` decimals without one), X-DSP's gain over X in %
    to the precision of its standard error (``*``: significant at 5 % in the paired t-test), then the paper's mean
    and s.d. as it prints them. The data set column is left out when there is one data set, the paper's columns
    when the paper has no number for any row."""
    order = [*CLICK_MODELS, *sorted(set(table["click_model"]) - set(CLICK_MODELS))]
    datasets = [*paper_numbers()["datasets"], *sorted(set(table["dataset"]) - set(paper_numbers()["datasets"]))]
    rank = {"dataset": datasets, "click_model": order, "algorithm": ALGORITHMS}
    shown = table.sort_values(["dataset", "click_model", "algorithm"],
                              key=lambda column: column.map({v: i for i, v in enumerate(rank[column.name])}))
    rows = [{"dataset": row["dataset"], "click_model": row["click_model"], "algorithm": row["algorithm"],
             **_ours_columns(row, digits), **_paper_columns(row, digits)} for _, row in shown.iterrows()]
    out = pd.DataFrame(rows, columns=["dataset", "click_model", "algorithm", "ours", "s.d.", "gain over the base %",
                                      "paper", "paper s.d."])
    if out["dataset"].nunique() <= 1:
        out = out.drop(columns="dataset")
    if (out["paper"] == "").all():
        out = out.drop(columns=["paper", "paper s.d."])
    return out.reset_index(drop=True)


def _ours_columns(row, digits: int) -> dict:
    places = decimals_for(row["sd"])
    places = digits if places is None else places
    gain = row.get("improvement_%", np.nan)
    text = ""
    if np.isfinite(gain):
        text = number_text(gain, row.get("gain_se"), sign=True, digits=2) + ("*" if row.get("p_value", 1.0) < 0.05
                                                                               else "")
    return {"ours": fixed(row["mean"], places), "s.d.": fixed(row["sd"], places) if np.isfinite(row["sd"]) else "",
            "gain over the base %": text}


def _paper_columns(row, digits: int) -> dict:
    if not np.isfinite(row.get("paper_mean", np.nan)):
        return {"paper": "", "paper s.d.": ""}
    return {"paper": fixed(row["paper_mean"], digits), "paper s.d.": fixed(row["paper_sd"], digits)}


def duel_samples(query, theta, user, n_samples: int, rng, k: int = 3, oracle: bool = False, step: float = 1.0,
                 cutoff: int = 10):
    """Monte Carlo of one DBGD comparison on a fixed query and ranker (for Theorem 3.1 / Lemma 3.2).

    For each of ``n_samples`` directions u (uniform on the sphere): interleave theta with
    theta + step u, let ``user`` click, and record Z (the candidate wins), u, A u with A the
    projector on the document space (inferred with ``k``, or the true one if ``oracle``) and
    the rank of A. Returns a dict of arrays.
    """
    from ...metrics import rank_by_scores
    from ...rankers.interleaving import team_draft, team_draft_credit
    from ...rankers.projection import DocumentSpace
    from ...rankers.scorers import unit_sphere

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


def outside_updates(dataset: str, fold: int = 1, seed: int = 0, click_model: str = "perfect",
                    queries: int = OUTSIDE_QUERIES, samples: int = OUTSIDE_SAMPLES, warmup: int = OUTSIDE_WARMUP,
                    stop_rule: str = "after_click", params: tuple = (), data_dir=None) -> list[dict]:
    """Monte Carlo of NSGD-DSP's update with the true examined set (``dsp_oracle``, no remembered documents:
    ``dsp_r=0``, so S is exactly the span of the round's examined documents), state by state.

    NSGD-DSP learns for ``warmup`` rounds; then, with its state frozen (weights, losing directions, difficult
    queries), each of ``queries`` random queries is played ``samples`` times: NSGD proposes its candidates,
    they are multileaved with the current ranker, ``click_model`` clicks, and the round's update is recorded
    without being taken: Z g (g the direction NSGD would step along, Z = 1 when a candidate wins, else 0), and
    Z A g (A the projector onto the examined documents). Theorem 3.1, for a scheme whose input direction is
    unbiased, says E[Z (I - A) g] = 0 in every state. Returns one dict per query: ``update`` and ``projected``,
    (samples x d) arrays."""
    from ...data.registry import load_fold
    from ...rankers import make_ranker
    from ...rankers.interleaving import team_draft_credit
    from ...users import make_user

    data = load_fold(dataset, fold, data_dir)
    train = data.train
    ranker = make_ranker("nsgd_dsp", **{**dict(params), **TRUE_SPACE})
    rng = np.random.default_rng([seed, fold])
    ranker.start(train, np.random.default_rng(seed))
    user = make_user(click_model, data.max_grade, stop_rule)
    for q in rng.integers(0, train.n_queries, warmup):
        query = train.query(int(q))
        display = ranker.rank(query)
        ranker.learn(query, display, user(query, display.ranking, rng))
    states = []
    for q in rng.integers(0, train.n_queries, queries):
        query = train.query(int(q))
        update, projected = np.zeros((samples, train.n_features)), np.zeros((samples, train.n_features))
        for i in range(samples):
            display = ranker.rank(query)
            directions, team, _ = display.info
            feedback = user(query, display.ranking, rng)
            credit = team_draft_credit(team, feedback.clicks, len(directions) + 1)
            margins = (credit[1:] - credit[0]).astype(float)
            if (margins > 0).any():
                update[i] = ranker.combine(directions, margins)
                examined = ranker.space.examined(query.features, display.ranking, feedback)
                projected[i] = ranker.space.project(update[i], examined)[0]
        states.append({"update": update, "projected": projected})
    return states


def squared_mean_norm(x: np.ndarray) -> float:
    """An unbiased estimate of ||E[x]||^2 from rows x_1..x_n whose conditional means given the earlier rows are
    equal (i.i.d. or a martingale difference plus a constant): the mean of x_s . x_t over pairs s != t,
    (||sum x||^2 - sum ||x||^2) / (n (n - 1)). Unlike ||mean x||^2 it carries no noise floor (it is 0 on average
    when E[x] = 0, and can then be negative)."""
    n = len(x)
    total = x.sum(axis=0)
    return float((total @ total - (x * x).sum()) / (n * (n - 1)))


@functools.cache          # one measurement per data set, fold, seed, user and configuration
def outside_share(dataset: str, fold: int = 1, seed: int = 0, click_model: str = "perfect",
                  stop_rule: str = "after_click", params: tuple = (), data_dir=None, **sizes) -> float:
    """The squared norm of the update's mean component outside the document space, as a share of the squared
    norm of the update's mean, over the states of :func:`outside_updates`:
    sum_states ||E[Z (I - A) g]||^2 / sum_states ||E[Z g]||^2, each term by :func:`squared_mean_norm`. 0 when
    Theorem 3.1 holds; 1 when the projection removed as much systematic movement as the update has."""
    states = outside_updates(dataset, fold, seed, click_model, stop_rule=stop_rule, params=params,
                             data_dir=data_dir, **sizes)
    outside = sum(squared_mean_norm(s["update"] - s["projected"]) for s in states)
    return float(outside / sum(squared_mean_norm(s["update"]) for s in states))


def preference(query, a: np.ndarray, b: np.ndarray, user, rng, duels: int, cutoff: int = 10) -> float:
    """f(a, b) = P(a beats b) - 1/2 under team-draft interleaving and ``user``, a tie (equal credit) counted as
    half a win (Yue & Joachims' distinguishability, ties broken by a fair coin): (wins - losses) / (2 duels) over
    ``duels`` simulated comparisons on ``query``."""
    from ...metrics import rank_by_scores
    from ...rankers.interleaving import team_draft, team_draft_credit

    scores = np.vstack([a, b]) @ query.features.T
    balance = 0
    for _ in range(duels):
        shown, team = team_draft(rank_by_scores(scores, rng), cutoff, rng)
        credit = team_draft_credit(team, user(query, shown, rng).clicks, 2)
        balance += int(np.sign(credit[0] - credit[1]))
    return balance / (2 * duels)


def dueling_regret(dataset: str, fold: int = 1, seed: int = 0, click_model: str = "navigational", rounds: int = 200,
                   duels: int = 10, data_dir=None) -> dict:
    """The regret Theorem 3.3 bounds, Eq. (1) of Wang et al. with Yue & Joachims' offset:
    sum_t f_t(w*, w_t) + f_t(w*, w'_t), f_t(a, b) = P(a beats b on the round's query) - 1/2 (:func:`preference`,
    estimated from ``duels`` comparisons per ranker and round), for DBGD-DSP (the text's defaults) over ``rounds``
    rounds; w* the offline RankNet weights (the best ranker we have, standing in for the unknown best one).
    Returns per-round ``regret`` (the two terms summed) and ``rank``, rank(A_t) on the rounds DSP projected."""
    from ...data.registry import load_fold
    from ...experiments import reference_weights
    from ...rankers import make_ranker
    from ...users import make_user

    data = load_fold(dataset, fold, data_dir)
    best = reference_weights("offline_ranknet", dataset, fold, data_dir)
    ranker = make_ranker("dbgd_dsp")
    rng = np.random.default_rng([seed, fold, 48])
    ranker.start(data.train, np.random.default_rng(seed))
    user = make_user(click_model, data.max_grade)
    regret, ranks = np.zeros(rounds), []
    for t, q in enumerate(rng.integers(0, data.train.n_queries, rounds)):
        query = data.train.query(int(q))
        current = ranker.theta.copy()
        display = ranker.rank(query)
        candidate = current + ranker.step * display.info[0][0]
        regret[t] = (preference(query, best, current, user, rng, duels)
                     + preference(query, best, candidate, user, rng, duels))
        stats = ranker.learn(query, display, user(query, display.ranking, rng))
        if "doc_space_rank" in stats:
            ranks.append(stats["doc_space_rank"])
    return {"regret": regret, "rank": np.array(ranks)}


def theorem33_bound(rounds, m: float, radius: float = 1.0, lipschitz: float = 1.0, lam: float = 1.0):
    """Theorem 3.3's bound 2 lambda_T T^(3/4) sqrt(26 R m L) at horizons ``rounds`` (lambda_T >= 1 whenever it is
    positive, so ``lam=1`` gives the smallest value the theorem allows for these R, m, L)."""
    return 2 * lam * np.asarray(rounds, float) ** 0.75 * np.sqrt(26 * radius * m * lipschitz)


def decorate(name: str, specs, frame: pd.DataFrame, data_dir=None, **_) -> pd.DataFrame:
    """Columns a claim needs beyond the run frame (the Figure 3d variant; on the main runs of NSGD-DSP,
    ``outside_share``: :func:`outside_share` in the run's world: data set, fold, seed, user, stop rule and the
    configuration's parameters)."""
    if name == "gt":
        frame = frame.assign(variant=[gt_variant(s) for s in specs])
    if name == "main":
        frame = frame.assign(outside_share=[
            outside_share(s.dataset, s.fold, s.seed, s.click_model, s.stop_rule, tuple(sorted(s.params.items())),
                          data_dir) if s.algorithm == "nsgd_dsp" else float("nan") for s in specs])
    return frame


# -- the ablation page: the MGD-DSP gain in each configuration, and which code choices it needs ------------------

def ablation_gains(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per configuration, data set and user: the gain of MGD-DSP over MGD in % of MGD's mean ``metric``
    over the runs both have (same fold and seed), the paired t-test's p (NaN below 5 pairs, :func:`paired_test`),
    the pairs, the gain's standard error (the paired differences' s.e. in % of MGD's mean) and the cell's text
    ('+6.2%*': to the decimals that s.e. supports, one without a spread; * where p < 0.05)."""
    rows = []
    for (config, dataset, click), part in runs.groupby(["config", "dataset", "click_model"], sort=False):
        wide = part.pivot_table(index=["fold", "seed"], columns="algorithm", values=metric).dropna()
        if not {"mgd", "mgd_dsp"} <= set(wide):
            continue
        rows.append({"config": config, "dataset": dataset, "click_model": click,
                     "gain_%": 100 * (wide["mgd_dsp"].mean() / wide["mgd"].mean() - 1),
                     "p": paired_test(wide["mgd_dsp"], wide["mgd"]), "pairs": len(wide),
                     "se_%": _gain_se(wide["mgd_dsp"] - wide["mgd"], wide["mgd"].mean())})
    gains = pd.DataFrame(rows, columns=["config", "dataset", "click_model", "gain_%", "p", "pairs", "se_%"])
    marks = ["*" if p < 0.05 else "" for p in gains["p"].fillna(1.0)]
    places = [1 if decimals_for(se) is None else decimals_for(se) for se in gains["se_%"]]
    return gains.assign(cell=[f"{g:+.{d}f}%{m}" for g, d, m in zip(gains["gain_%"], places, marks)])


def _gain_se(differences: pd.Series, base_mean: float) -> float:
    """The standard error of the mean paired difference in % of the base's mean (NaN below two pairs)."""
    n = len(differences)
    return float(100 * differences.std(ddof=1) / np.sqrt(n) / abs(base_mean)) if n >= 2 and base_mean else np.nan


def ablation_effects(gains: pd.DataFrame) -> dict:
    """What the ablation's gains (:func:`ablation_gains`, mean over cells per configuration) say about the code's
    choices: ``text`` and ``code`` gains; ``dropped``, the choices dropped one at a time in these runs; ``needed``,
    those whose drop leaves less than half the code's gain; ``change``, each choice's change of the text's gain
    when switched on alone; ``top``, the largest such change (None without single switches); ``interaction``, the
    code's change over the text minus the sum of the single changes."""
    mean_gain = gains.groupby("config")["gain_%"].mean()
    text_gain, code_gain = float(mean_gain.get("text", np.nan)), float(mean_gain.get("code", np.nan))
    dropped = mean_gain[mean_gain.index.str.startswith("code-")]
    single = mean_gain[mean_gain.index.str.startswith("text+")]
    change = (single - text_gain).rename(lambda c: c.removeprefix("text+"))
    return {"text": text_gain, "code": code_gain, "dropped": [c.removeprefix("code-") for c in dropped.index],
            "needed": [c.removeprefix("code-") for c, g in dropped.items() if g < code_gain / 2],
            "change": change, "top": change.abs().idxmax() if len(change) else None,
            "interaction": (code_gain - text_gain) - float(change.sum())}


# Lines for the cells where ours and the authors' code run here differ beyond their noise
# (olr_core.reproductions.authors_code.gap_lines): metric -> {(click model, algorithm): what was found, and the run
# that shows it}. A flagged cell without a line is printed as open, with AUTHORS_CODE_OPEN.
AUTHORS_CODE_NOTES: dict[str, dict[tuple[str, str], str]] = {"online": {}, "offline": {}}
AUTHORS_CODE_OPEN = ("not yet traced. Same protocol on both sides (MQ2008 folds, 3-grade users with the stop drawn at "
                     "every examined position, 10,000 queries, the code's learning rate, decay, probabilistic "
                     "interleaving with 10,000 sampled credits and DSP sizes); the remaining differences are their "
                     "reader's feature handling (40 features after dropping constant ones, per-query min-max) "
                     "against ours (46), and random streams")
