# %% [raw]
# # ASSIGNMENT CONFIG
# name: verdict_rule
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false

# %% [markdown]
# # Assignment (week 6, easy): a verdict rule
#
# Reading: the book's *Verdicts* page and, in each chapter, "Does it reproduce?".
#
# **Learning goals.** Turn seed-by-seed results into a verdict with a paired one-sided test; see why
# pairing by seed matters.
#
# The book says "reproduced" only when a learner beats another by a margin that the seeds support.
# Here you write the simplest such rule yourself: a paired one-sided $t$ test of "the mean margin
# between learner A and learner B, seed by seed, is above 0".

# %% tags=["parameters"]
alpha = 0.05      # the test's level

# %% [raw]
# # BEGIN QUESTION
# name: margin_above_zero
# points: 3

# %% [markdown]
# Write `margin_above_zero(a, b, alpha)`.

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np
from scipy import special


def margin_above_zero(a, b, alpha=0.05):
    """(p-value, verdict) of the paired one-sided t test of mean(a - b) > 0."""
    # BEGIN SOLUTION
    d = np.asarray(a, float) - np.asarray(b, float)
    n = len(d)
    t = d.mean() / (d.std(ddof=1) / np.sqrt(n))
    p = special.stdtr(n - 1, -t)
    return float(p), bool(p < alpha)
    # END SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_matches_scipy(margin_above_zero):
    import numpy as np
    from scipy import stats
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.3, 1, 12), rng.normal(0.0, 1, 12)
    p, verdict = margin_above_zero(a, b, 0.05)
    want = stats.ttest_rel(a, b, alternative="greater").pvalue
    assert abs(p - want) < 1e-9, f"your p-value is {p:.4f}; scipy's paired one-sided test gives {want:.4f}"

# %%
""" # BEGIN TEST CONFIG
hidden: false
points: 1
""" # END TEST CONFIG
def test_returns_pair(margin_above_zero):
    out = margin_above_zero([1.0, 2.0, 3.0], [0.0, 1.0, 1.5])
    assert isinstance(out, tuple) and len(out) == 2, f"return (p_value, verdict); yours returned {out!r}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
