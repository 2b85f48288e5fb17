# %% [raw]
# # ASSIGNMENT CONFIG
# name: topk_gradient
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false


# %% [markdown]
# # Assignment (week 7, medium): an unbiased gradient from top-$k$ feedback
#
# Reading: the book's chapter *Top-k feedback*, section "Unbiased gradients from a few grades".
#
# **Learning goals.** Estimate the gradient of a ranking loss from the grades of only the $k$ documents
# shown first; make it unbiased with importance weights; check unbiasedness by simulation.
#
# For the squared loss $\phi(s) = \sum_j (s_j - R_j)^2$ the gradient is $2 s - 2 R$: the part $2s$ is
# known, the part $-2R$ needs every grade. RTop-kF (Chaudhuri and Tewari, 2017) shows, with
# probability $1 - \gamma$, the model's own top $k$ and otherwise $k$ documents drawn uniformly; the
# user reveals the grades of the $k$ shown. Document $j$ is shown with probability
# $\pi_j = (1 - \gamma)\,\mathbb{1}[j \text{ in the model's top } k] + \gamma k / m$, so weighting each
# revealed term by $1 / \pi_j$ makes its expectation the full term.

# %% tags=["parameters"]
m = 8             # documents of the query
k = 2             # grades revealed per round
gamma = 0.3       # exploration probability

# %% [raw]
# # BEGIN QUESTION
# name: estimator
# points: 5

# %% [markdown]
# Write `squared_loss_gradient_estimate(s, shown_top, grades, model_top, gamma)`: `s` the m scores,
# `shown_top` the k documents shown first, `grades` their grades, `model_top` a boolean mask of the
# model's own top k, `gamma` the exploration probability. Return the estimate of $2s - 2R$.

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np


def squared_loss_gradient_estimate(s, shown_top, grades, model_top, gamma):
    """2 s - sum over shown j of 2 R_j e_j / pi_j, pi_j = (1 - gamma) 1[j in the model's top k] + gamma k / m."""
    # BEGIN SOLUTION
    m, k = len(s), len(shown_top)
    pi = (1 - gamma) * model_top[shown_top] + gamma * k / m
    out = 2.0 * np.asarray(s, float)
    out[shown_top] -= 2.0 * np.asarray(grades, float) / pi
    return out
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: false
points: 1
""" # END TEST CONFIG
def test_returns_vector(squared_loss_gradient_estimate):
    import numpy as np
    top = np.array([True, True, False, False])
    out = squared_loss_gradient_estimate(np.zeros(4), np.array([0, 1]), np.array([1.0, 0.0]), top, 0.5)
    assert out is not None, "squared_loss_gradient_estimate returns None: write its body"
    assert np.shape(out) == (4,), f"expected one entry per document (4), got shape {np.shape(out)}"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_matches_reference(squared_loss_gradient_estimate):
    import numpy as np

    from olr_core.rankers.topk import Squared, estimate_gradient
    rng = np.random.default_rng(1)
    s, grades_all = rng.standard_normal(6), rng.integers(0, 3, 6).astype(float)
    model_top = np.zeros(6, dtype=bool)
    model_top[np.argsort(-s)[:3]] = True
    for shown in (np.array([0, 3, 5]), np.argsort(-s)[:3]):
        want = estimate_gradient(Squared(), s, shown, grades_all[shown], model_top, 0.25)
        got = np.asarray(squared_loss_gradient_estimate(s, shown, grades_all[shown], model_top, 0.25))
        assert np.allclose(got, want), f"showing {shown.tolist()}: expected {np.round(want, 3)}, got {np.round(got, 3)}"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 3
""" # END TEST CONFIG
def test_unbiased_in_expectation(squared_loss_gradient_estimate):
    import numpy as np
    rng = np.random.default_rng(2)
    m, k, gamma = 6, 2, 0.4
    s, grades = rng.standard_normal(m), np.array([2.0, 0.0, 1.0, 0.0, 3.0, 1.0])
    top = np.argsort(-s)[:k]
    model_top = np.zeros(m, dtype=bool)
    model_top[top] = True
    draws = 6000
    total = np.zeros(m)
    for _ in range(draws):
        shown = rng.choice(m, k, replace=False) if rng.random() < gamma else top
        total += np.asarray(squared_loss_gradient_estimate(s, shown, grades[shown], model_top, gamma))
    mean, want = total / draws, 2 * s - 2 * grades
    worst = int(np.argmax(np.abs(mean - want)))
    assert np.abs(mean - want).max() < 0.25, (
        f"averaged over {draws} rounds your estimate of document {worst}'s gradient is {mean[worst]:.2f}, the "
        f"true gradient {want[worst]:.2f} (± 0.25): the estimate is biased; is each revealed grade weighted by 1 / "
        "its probability of being shown?")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
