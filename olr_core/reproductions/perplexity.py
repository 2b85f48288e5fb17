"""The two click perplexities of the click-model literature, side by side.

:func:`olr_core.click_fitting.evaluate` reports the *conditional* perplexity: at position i it scores
P(c_i | the clicks above i) (PyClick's ``PerplexityCond``). Chuklin, Markov and de Rijke (*Click Models for
Web Search*, 2015) and PyClick's ``Perplexity`` score the model's *marginal* click probability
q_i = P(C_i = 1) given the shown list only:

    perplexity_i = 2 ** (-(1 / N_i) * sum over sessions of [c_i log2 q_i + (1 - c_i) log2 (1 - q_i)]),

averaged over the positions shown. Conditioning on the clicks above tells the model more, so the
conditional perplexity is usually the smaller one for a model that uses the clicks above (both agree for one
that does not, such as PBM). :func:`marginal_click_probabilities` computes q exactly, for any model with
conditional click probabilities, by summing over every click pattern of a list (2^cutoff of them).
"""

from __future__ import annotations

import numpy as np

from ..click_fitting import EPS, ClickLog, conditional_probabilities, evaluate

CHUNK = 32          # sessions per batch: a batch holds CHUNK x 2^cutoff x cutoff probabilities


def click_patterns(cutoff: int) -> np.ndarray:
    """Every click vector of length ``cutoff`` (2^cutoff x cutoff, bool)."""
    codes = np.arange(2 ** cutoff)[:, None]
    return ((codes >> np.arange(cutoff)[None, :]) & 1).astype(bool)


def marginal_click_probabilities(model, labels: np.ndarray) -> np.ndarray:
    """q[s, i] = P(C_i = 1) under ``model`` for session s's list of grades (sessions x cutoff, -1 padded):
    the sum over all click patterns c of P(c) c_i, with P(c) the product of the model's conditional
    probabilities P(c_i | c_above) (0 past a list's end)."""
    labels = np.asarray(labels, dtype=np.int64)
    sessions, cutoff = labels.shape
    patterns = click_patterns(cutoff)
    out = np.zeros(labels.shape)
    for start in range(0, sessions, CHUNK):
        block = labels[start:start + CHUNK]
        many = np.repeat(block, len(patterns), axis=0)
        clicks = np.tile(patterns, (len(block), 1))
        possible = ~(clicks & (many < 0)).any(axis=1)        # no click past the list's end
        log = ClickLog(many, clicks & (many >= 0))
        p = conditional_probabilities(model, log)
        weight = (np.prod(np.where(log.clicks, p, 1.0 - p), axis=1) * possible).reshape(len(block), len(patterns))
        out[start:start + len(block)] = weight @ patterns
    return out


def marginal_perplexity(model, log: ClickLog) -> dict:
    """Chuklin et al.'s (and PyClick's) perplexity per position and overall: the marginal click probability
    of each position scored against the observed click there."""
    q = np.clip(marginal_click_probabilities(model, log.labels), EPS, 1 - EPS)
    terms = np.where(log.labels >= 0, np.where(log.clicks, np.log2(q), np.log2(1 - q)), 0.0)
    shown = (log.labels >= 0).sum(axis=0)
    per_position = 2.0 ** (-terms.sum(axis=0) / np.maximum(shown, 1))
    return {"perplexity_by_position": per_position[shown > 0], "perplexity": float(per_position[shown > 0].mean())}


def both_perplexities(model, log: ClickLog) -> dict:
    """The conditional perplexity the book reports and the marginal one of Chuklin et al. / PyClick."""
    return {"conditional": evaluate(model, log)["perplexity"],
            "marginal": marginal_perplexity(model, log)["perplexity"]}
