# %% [raw]
# # ASSIGNMENT CONFIG
# name: dbgd
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false


# %% [markdown]
# # Assignment (week 3, easy): DBGD's exploration and update
#
# Reading: the book's chapter *Dueling bandits and DSP*, section "Why a DBGD step points uphill".
#
# **Learning goals.** Draw an exploration direction uniformly from the unit sphere; apply DBGD's update
# rule; watch a linear ranker learn from nothing but won and lost comparisons.
#
# DBGD keeps a weight vector $w$. Each round it draws a direction $u$ uniformly from the unit sphere,
# compares the ranker $w$ with the candidate $w + \delta u$ (by interleaving, assignment 1), and if
# the candidate wins it moves: $w \leftarrow w + \eta u$. If the current ranker wins, $w$ stays.

# %% tags=["parameters"]
dimensions = 5    # features of the toy problem below
rounds = 300      # comparisons in the toy run
seed = 0

# %% [raw]
# # BEGIN QUESTION
# name: dbgd_step
# points: 5

# %% [markdown]
# Write `random_unit_vector(d, rng)` (uniform on the unit sphere of $\mathbb{R}^d$) and
# `dbgd_update(w, u, candidate_won, learning_rate)` (the new weights; do not change `w` in place).

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np


def random_unit_vector(d, rng):
    """A direction uniform on the unit sphere in R^d (a normalised standard Gaussian)."""
    # BEGIN SOLUTION
    u = rng.standard_normal(d)
    return u / np.linalg.norm(u)
    # END SOLUTION


def dbgd_update(w, u, candidate_won, learning_rate):
    """DBGD's step: w + learning_rate * u if the candidate w + delta u won the comparison, else w."""
    # BEGIN SOLUTION
    return w + learning_rate * u if candidate_won else np.array(w, dtype=float)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [markdown]
# Watch it learn: a noise-free user prefers whichever of the two rankers is closer in angle to a
# hidden $w^*$.

# %%
def cosine(x, y):
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y) + 1e-12))


toy_rng = np.random.default_rng(seed)
w_star, w = toy_rng.standard_normal(dimensions), np.zeros(dimensions)
for _ in range(rounds):
    u = random_unit_vector(dimensions, toy_rng)
    if u is None:
        break
    w = dbgd_update(w, u, cosine(w + 1.0 * u, w_star) > cosine(w, w_star), 0.1)
print("cosine with w* after", rounds, "rounds:", None if w is None else round(cosine(w, w_star), 3))

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: false
points: 1
""" # END TEST CONFIG
def test_unit_norm(random_unit_vector):
    import numpy as np
    u = random_unit_vector(4, np.random.default_rng(0))
    assert u is not None, "random_unit_vector returns None: write its body"
    assert np.shape(u) == (4,) and abs(np.linalg.norm(u) - 1) < 1e-9, f"expected a vector of norm 1 in R^4, got {u!r}"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_uniform_on_sphere(random_unit_vector):
    import numpy as np

    from olr_core.rankers.scorers import unit_sphere
    rng = np.random.default_rng(1)
    mine = np.array([random_unit_vector(3, rng) for _ in range(4000)])
    ref = unit_sphere(np.random.default_rng(2), 4000, 3)
    assert np.abs(mine.mean(axis=0)).max() < 0.05, (
        f"your directions' mean is {mine.mean(axis=0).round(3)}; it should be 0 ± 0.05")
    fourth, want = float((mine ** 4).mean()), float((ref ** 4).mean())       # 3 / (d (d + 2)) = 0.2 on the sphere
    assert abs(fourth - want) < 0.015, (
        f"E[u_i^4] of your directions is {fourth:.3f}; uniform on the sphere it is {want:.3f} ± 0.015 "
        "(normalising uniform draws from a cube is not uniform on the sphere)")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_moves_only_when_candidate_wins(dbgd_update):
    import numpy as np
    w, u = np.array([1.0, -2.0, 0.5]), np.array([0.0, 0.6, 0.8])
    won = np.asarray(dbgd_update(w, u, True, 0.5))
    lost = np.asarray(dbgd_update(w, u, False, 0.5))
    assert np.allclose(won, [1.0, -1.7, 0.9]), f"after a won comparison expected w + 0.5 u = [1, -1.7, 0.9], got {won}"
    assert np.allclose(lost, w), f"after a lost comparison w must stay {w}; yours moved to {lost}"
    assert np.allclose(w, [1.0, -2.0, 0.5]), "dbgd_update changed w in place; return a new array"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_it_learns(random_unit_vector, dbgd_update):
    import numpy as np
    rng = np.random.default_rng(7)
    w_star, w = rng.standard_normal(5), np.zeros(5)

    def cos(x):
        return float(x @ w_star / (np.linalg.norm(x) * np.linalg.norm(w_star) + 1e-12))

    for _ in range(400):
        u = random_unit_vector(5, rng)
        w = dbgd_update(w, u, cos(w + u) > cos(w), 0.1)
    assert cos(w) > 0.9, (
        f"after 400 noise-free comparisons your ranker's cosine with w* is {cos(w):.2f}; DBGD reaches > 0.9")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
