# %% [raw]
# # ASSIGNMENT CONFIG
# name: dsp_projection
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false


# %% [markdown]
# # Assignment (week 4, medium): DSP's projection onto the document space
#
# Reading: the book's chapter *Dueling bandits and DSP*, section "Projecting onto the document space".
#
# **Learning goals.** Project an exploration direction onto the span of the documents a user examined,
# with documents that may be linearly dependent; check the projection's defining properties.
#
# DSP (Wang et al., 2019) replaces a direction $u$ by $A u$, where $A$ is the orthogonal projector onto
# the span of the rows of $D$ (one examined document's features per row). Components of $u$ orthogonal
# to every examined document cannot change how those documents are ranked, so removing them removes
# noise, not signal.

# %% tags=["parameters"]
documents = 4     # examined documents in the example
features = 6
seed = 0

# %% [raw]
# # BEGIN QUESTION
# name: projection
# points: 5

# %% [markdown]
# Write `project_on_documents(u, D)`: $A u$ for $A$ the orthogonal projector onto the row space of `D`
# (m x d). `D` may have repeated or dependent rows, and more rows than columns.

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np


def project_on_documents(u, D):
    """A u for A the orthogonal projector onto the span of D's rows (an orthonormal basis from the SVD)."""
    # BEGIN SOLUTION
    _, sv, vt = np.linalg.svd(np.asarray(D, float), full_matrices=False)
    basis = vt[sv > 1e-10 * max(sv.max(initial=0.0), 1e-300)]
    return basis.T @ (basis @ u)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
example_rng = np.random.default_rng(seed)
D_example, u_example = example_rng.standard_normal((documents, features)), example_rng.standard_normal(features)
print(project_on_documents(u_example, D_example))

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: false
points: 1
""" # END TEST CONFIG
def test_returns_vector(project_on_documents):
    import numpy as np
    out = project_on_documents(np.ones(3), np.eye(3)[:2])
    assert out is not None, "project_on_documents returns None: write its body"
    assert np.shape(out) == (3,), f"expected a vector of 3 entries, got shape {np.shape(out)}"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_small_exact_case(project_on_documents):
    import numpy as np
    out = np.asarray(project_on_documents(np.array([1.0, 2.0, 3.0]), np.array([[2.0, 0.0, 0.0], [0.0, 5.0, 0.0]])))
    assert np.allclose(out, [1.0, 2.0, 0.0]), (
        f"projecting (1, 2, 3) on the span of e1 and e2 gives (1, 2, 0); yours {out}")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_idempotent_and_orthogonal(project_on_documents):
    import numpy as np
    rng = np.random.default_rng(1)
    for m in (1, 3, 5):
        D, u = rng.standard_normal((m, 6)), rng.standard_normal(6)
        once = np.asarray(project_on_documents(u, D))
        twice = np.asarray(project_on_documents(once, D))
        assert np.allclose(twice, once, atol=1e-8), (
            f"with {m} documents, projecting twice moved the vector by {np.abs(twice - once).max():.3g}: a projection "
            "is idempotent (A A u = A u); are your basis vectors orthonormal?")
        assert np.allclose(D @ (u - once), 0, atol=1e-8), (
            f"with {m} documents the residual u - A u is not orthogonal to the documents (max |D (u - A u)| = "
            f"{np.abs(D @ (u - once)).max():.3g})")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_dependent_documents_match_reference(project_on_documents):
    import numpy as np

    from olr_core.rankers.projection import project_on_span
    rng = np.random.default_rng(2)
    base = rng.standard_normal((2, 5))
    D = np.vstack([base, base[0] * 3, base.sum(axis=0)])             # four rows of rank 2
    u = rng.standard_normal(5)
    want, rank = project_on_span(D, u)
    got = np.asarray(project_on_documents(u, D))
    assert np.allclose(got, want, atol=1e-8), (
        f"four documents spanning a plane (rank {rank}): expected {np.round(want, 4)}, got {np.round(got, 4)}")
    wide = rng.standard_normal((7, 5))
    assert np.allclose(project_on_documents(u, wide), u, atol=1e-8), "seven documents span R^5, so A u must be u"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
