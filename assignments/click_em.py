# %% [raw]
# # ASSIGNMENT CONFIG
# name: click_em
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false


# %% [markdown]
# # Assignment (week 1, medium): one EM step of the position-based click model
#
# Reading: the book's *Foundations* chapter, section "Beyond the cascade", and its click-model page.
#
# **Learning goals.** Derive the posterior of the two hidden causes of a skip; write the E- and M-steps
# of EM for the position-based model (PBM) in vectorised numpy; check that the likelihood never falls.
#
# The PBM says a user clicks the document at rank $r$ with grade $g$ with probability $e_r c_g$: it
# was examined (probability $e_r$) and it attracted (probability $c_g$), independently. A click
# means both happened. A skip leaves three possibilities, and Bayes' rule gives
# $P(\text{examined} \mid \text{skip}) = e_r (1 - c_g) / (1 - e_r c_g)$ and
# $P(\text{attracted} \mid \text{skip}) = c_g (1 - e_r) / (1 - e_r c_g)$. The M-step sets each
# parameter to the mean of its posterior over the impressions it applies to.

# %% tags=["parameters"]
sessions = 2000   # simulated sessions in the example
seed = 0

# %% [raw]
# # BEGIN QUESTION
# name: em_step
# points: 5

# %% [markdown]
# Write `pbm_em_step(e, c, rank, grade, clicks)`: `rank`, `grade`, `clicks` are flat arrays (one
# entry per shown document); return the updated `(e, c)` (a rank or grade that never occurs keeps a
# posterior mean of 0).

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np


def pbm_em_step(e, c, rank, grade, clicks):
    """One EM step of P(click) = e[rank] c[grade]: posteriors of examination and attraction, then their means."""
    # BEGIN SOLUTION
    pe, pc = e[rank], c[grade]
    skip = np.maximum(1 - pe * pc, 1e-12)
    post_e = np.where(clicks, 1.0, pe * (1 - pc) / skip)
    post_c = np.where(clicks, 1.0, pc * (1 - pe) / skip)
    new_e = np.bincount(rank, post_e, len(e)) / np.maximum(np.bincount(rank, minlength=len(e)), 1)
    new_c = np.bincount(grade, post_c, len(c)) / np.maximum(np.bincount(grade, minlength=len(c)), 1)
    return new_e, new_c
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
example_rng = np.random.default_rng(seed)
true_e, true_c = np.array([1.0, 0.6, 0.4, 0.3]), np.array([0.1, 0.5, 0.9])
rank_example = np.tile(np.arange(4), sessions)
grade_example = example_rng.integers(0, 3, rank_example.size)
clicks_example = example_rng.random(rank_example.size) < true_e[rank_example] * true_c[grade_example]
e_fit, c_fit = np.full(4, 0.5), np.full(3, 0.5)
for _ in range(50):
    step = pbm_em_step(e_fit, c_fit, rank_example, grade_example, clicks_example)
    if step is None:
        break
    e_fit, c_fit = step
print("e / e[0]:", np.round(e_fit / e_fit[0], 2), " c * e[0]:", np.round(c_fit * e_fit[0], 2))

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: false
points: 1
""" # END TEST CONFIG
def test_returns_pair(pbm_em_step):
    import numpy as np
    out = pbm_em_step(np.full(2, 0.5), np.full(2, 0.5), np.array([0, 1]), np.array([1, 0]), np.array([True, False]))
    assert out is not None, "pbm_em_step returns None: write its body"
    assert len(out) == 2 and np.shape(out[0]) == (2,) and np.shape(out[1]) == (2,), (
        "return (e, c), one entry per rank / grade")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_small_exact_case(pbm_em_step):
    import numpy as np
    e, c = pbm_em_step(np.array([0.5]), np.array([0.5]), np.array([0, 0]), np.array([0, 0]), np.array([True, False]))
    # the skip: P(examined | skip) = 0.25 / 0.75 = 1/3; the click counts 1; mean (1 + 1/3) / 2 = 2/3
    assert np.allclose(e, [2 / 3]) and np.allclose(c, [2 / 3]), (
        f"one click and one skip at e = c = 0.5 give e = c = 2/3 after one step; yours e = {np.round(e, 4)}, "
        f"c = {np.round(c, 4)} (is the skip's posterior divided by P(skip) = 1 - e c?)")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_matches_reference_step(pbm_em_step):
    import numpy as np

    from olr_core.click_fitting import _fit_product
    rng = np.random.default_rng(1)
    rank, grade = np.tile(np.arange(5), 400), rng.integers(0, 3, 2000)
    clicks = rng.random(2000) < np.array([1.0, 0.7, 0.5, 0.4, 0.3])[rank] * np.array([0.2, 0.5, 0.8])[grade]
    want_e, want_c = _fit_product(rank, grade, clicks, 5, 3, iterations=1)
    got_e, got_c = pbm_em_step(np.full(5, 0.5), np.full(3, 0.5), rank, grade, clicks)
    assert np.allclose(got_e, want_e) and np.allclose(got_c, want_c), (
        f"one step from 0.5 should give e = {np.round(want_e, 3)}, c = {np.round(want_c, 3)} (olr_core.click_fitting); "
        f"yours e = {np.round(got_e, 3)}, c = {np.round(got_c, 3)}")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_likelihood_never_falls(pbm_em_step):
    import numpy as np
    rng = np.random.default_rng(2)
    rank, grade = np.tile(np.arange(4), 300), rng.integers(0, 3, 1200)
    clicks = rng.random(1200) < np.array([0.9, 0.6, 0.4, 0.2])[rank] * np.array([0.3, 0.6, 0.9])[grade]
    e, c = rng.uniform(0.2, 0.8, 4), rng.uniform(0.2, 0.8, 3)

    def log_likelihood(e, c):
        p = np.clip(e[rank] * c[grade], 1e-12, 1 - 1e-12)
        return float(np.sum(np.where(clicks, np.log(p), np.log(1 - p))))

    before = log_likelihood(e, c)
    for step in range(10):
        e, c = pbm_em_step(e, c, rank, grade, clicks)
        after = log_likelihood(np.asarray(e), np.asarray(c))
        assert after >= before - 1e-9, f"EM step {step + 1} lowered the log-likelihood from {before:.3f} to {after:.3f}"
        before = after

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
