# %% [raw]
# # ASSIGNMENT CONFIG
# name: pairrank
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false


# %% [markdown]
# # Assignment (week 5, medium): PairRank's certain pairs and blocks
#
# Reading: the book's chapter *PairRank*, sections "How sure is the model about a pair?" and
# "Divide and conquer".
#
# **Learning goals.** Turn a pairwise logistic model and its confidence ellipsoid into a set of pairs
# whose order is certain; cut a score-ordered list into the blocks PairRank shuffles.
#
# PairRank (Jia et al., 2021) models $P(i \succ j) = \sigma(\theta^\top (x_i - x_j))$. The order of
# $i$ over $j$ is *certain* when even the lower confidence bound is above one half:
# $\sigma(\theta^\top (x_i - x_j)) - \alpha \, \lVert x_i - x_j \rVert_{M^{-1}} > 1/2$, with
# $\lVert z \rVert_{M^{-1}} = \sqrt{z^\top M^{-1} z}$. All other pairs are uncertain. With the documents in
# score order, a *block* is a run of consecutive positions that no uncertain pair straddles (both
# documents of each uncertain pair lie in the same block), as fine as possible.

# %% tags=["parameters"]
alpha = 0.3       # the confidence width
seed = 0

# %% [raw]
# # BEGIN QUESTION
# name: certain_pairs
# points: 3

# %% [markdown]
# Write `certain_pairs(X, theta, Minv, alpha)`: the boolean n x n matrix whose entry (i, j) says
# that "i above j" is certain. No Python loop over pairs: use broadcasting.

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np
from scipy.special import expit


def certain_pairs(X, theta, Minv, alpha):
    """C[i, j] = sigma(theta . (x_i - x_j)) - alpha ||x_i - x_j||_{M^-1} > 1/2 (PairRank's certain orders)."""
    # BEGIN SOLUTION
    Z = X[:, None, :] - X[None, :, :]                        # x_i - x_j for every pair
    width = np.sqrt(np.einsum("ijk,kl,ijl->ij", Z, Minv, Z))
    return expit(Z @ theta) - alpha * width > 0.5
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
def test_shape_and_diagonal(certain_pairs):
    import numpy as np
    X = np.eye(3)
    C = certain_pairs(X, np.array([3.0, 0.0, -3.0]), np.eye(3) * 0.01, 0.1)
    assert C is not None, "certain_pairs returns None: write its body"
    C = np.asarray(C)
    assert C.shape == (3, 3) and C.dtype == bool, f"expected a 3 x 3 boolean matrix, got {C.dtype} {C.shape}"
    assert not C.diagonal().any(), "a document is never certainly above itself"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_matches_reference(certain_pairs):
    import numpy as np

    from olr_core.rankers.pairwise import pairwise_uncertainty
    rng = np.random.default_rng(1)
    X, theta = rng.standard_normal((12, 4)), rng.standard_normal(4) * 2
    A = rng.standard_normal((4, 4))
    Minv = np.linalg.inv(A @ A.T + 0.5 * np.eye(4))
    for alpha in (0.05, 0.2, 0.6):
        prob, norms, _ = pairwise_uncertainty(X, theta, Minv)
        want = prob - alpha * norms > 0.5
        got = np.asarray(certain_pairs(X, theta, Minv, alpha))
        wrong = int((got != want).sum())
        assert wrong == 0, (
            f"alpha={alpha}: {wrong} of 144 entries differ from PairRank's rule "
            "sigma(theta.x_ij) - alpha ||x_ij||_(M^-1) > 1/2 (is the norm the square root of the quadratic form?)")
        assert not (got & got.T).any(), "a pair is certain in both directions"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: blocks
# points: 3

# %% [markdown]
# Write `block_starts(certain, order)`: `order` lists the documents in score order (best first);
# return the positions (indices into `order`) where blocks start, beginning with 0, increasing.

# %% [raw]
# # BEGIN SOLUTION

# %%
def block_starts(certain, order):
    """Where PairRank's blocks start: after each gap between positions p and p + 1 that no uncertain pair spans."""
    # BEGIN SOLUTION
    n = len(order)
    position = np.argsort(order)                             # where each document is shown
    i, j = np.nonzero(~(certain | certain.T))
    first, last = np.minimum(position[i], position[j]), np.maximum(position[i], position[j])
    cover = np.zeros(n + 1, dtype=int)                       # +1 where an uncertain pair opens, -1 where it closes
    np.add.at(cover, first, 1)
    np.add.at(cover, last, -1)
    straddled = np.cumsum(cover)[: n - 1] > 0               # the gap after position p lies inside a pair
    return np.concatenate([[0], np.flatnonzero(~straddled) + 1])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
example_rng = np.random.default_rng(seed)
X_example = example_rng.standard_normal((8, 3))
C_example = certain_pairs(X_example, np.array([2.0, -1.0, 0.5]), np.eye(3) * 0.2, alpha)
if C_example is not None:
    print(block_starts(C_example, np.argsort(-(X_example @ np.array([2.0, -1.0, 0.5])))))

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_small_exact_case(block_starts):
    import numpy as np
    certain = np.zeros((5, 5), dtype=bool)
    for i in range(5):
        for j in range(i + 1, 5):
            certain[i, j] = True
    certain[0, 2] = False           # 0, 2 uncertain: positions 0..2 are one block, though 0 > 1 and 1 > 2 are certain
    out = block_starts(certain, np.arange(5))
    assert out is not None, "block_starts returns None: write its body"
    assert list(np.asarray(out)) == [0, 3, 4], (
        f"expected blocks starting at [0, 3, 4] (the uncertain pair (0, 2) straddles position 1), "
        f"got {list(np.asarray(out))}")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_no_uncertain_pair_straddles_blocks(block_starts):
    import numpy as np

    from olr_core.rankers.pairwise import certain_blocks, pairwise_uncertainty
    rng = np.random.default_rng(2)
    for _ in range(20):
        X, theta = rng.standard_normal((10, 3)), rng.standard_normal(3) * 3
        prob, norms, scores = pairwise_uncertainty(X, theta, np.eye(3) * 0.1)
        certain = prob - 0.3 * norms > 0.5
        order, want = certain_blocks(certain, scores, rng)
        got = np.asarray(block_starts(certain, order))
        block = np.searchsorted(got, np.arange(10), side="right")
        where = np.empty(10, dtype=int)
        where[order] = block - 1
        i, j = np.nonzero(~(certain | certain.T))
        straddling = int((where[i] != where[j]).sum()) // 2
        assert straddling == 0, f"{straddling} uncertain pair(s) lie in different blocks of yours ({got.tolist()})"
        assert got.tolist() == want.tolist()[:-1], (
            f"your blocks start at {got.tolist()}; the finest blocks start at {want.tolist()[:-1]}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
