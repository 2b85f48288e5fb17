# %% [raw]
# # ASSIGNMENT CONFIG
# name: interleaving
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# tests:
#   ok_format: false
#   files: true
# generate: false

# %% [markdown]
# # Assignment (week 3, medium): team-draft interleaving
#
# Reading: the book's chapter *Dueling bandits and DSP*, section "Interleaving and multileaving".
#
# **Learning goals.** Build the list a user sees when two rankers are compared; see why credit from
# that list is fair to both rankers when the user's clicks ignore relevance (a *random user*), even
# though such a user clicks the top positions far more often.
#
# Team-draft interleaving (Radlinski, Kurup and Joachims, 2008) fills the shown list in rounds. In
# each round a fair coin decides which of the two rankers chooses first; then each ranker in turn adds
# its highest-ranked document that is not in the list yet, and that document joins the ranker's
# *team*. A click credits the team of the clicked document; the ranker with more credited clicks
# wins the impression.

# %% tags=["parameters"]
length = 6        # documents shown
seed = 0          # of the example below

# %% [raw]
# # BEGIN QUESTION
# name: team_draft
# points: 6

# %% [markdown]
# Write `team_draft_interleave(ranking_a, ranking_b, length, rng)`. The rankings are arrays of
# document ids, best first, both over the same documents. Return two integer arrays of `length`
# entries: the shown documents, and each one's team (0 for ranker A, 1 for ranker B). Draw the coin
# of each round with `rng.random() < 0.5` (or `rng.integers(2)`).

# %% [raw]
# # BEGIN SOLUTION

# %%
import numpy as np


def team_draft_interleave(ranking_a, ranking_b, length, rng):
    """Team-draft interleaving of two rankings: (shown documents, team of each: 0 = A, 1 = B)."""
    # BEGIN SOLUTION
    rankings = (list(ranking_a), list(ranking_b))
    length = min(length, len(ranking_a))
    shown, team, placed = [], [], set()
    while len(shown) < length:
        first = int(rng.random() < 0.5)
        for ranker in (first, 1 - first):
            if len(shown) == length:
                break
            doc = next(d for d in rankings[ranker] if d not in placed)
            shown.append(doc)
            team.append(ranker)
            placed.add(doc)
    return np.array(shown, dtype=int), np.array(team, dtype=int)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [markdown]
# Try it: two rankers that disagree completely.

# %%
example_rng = np.random.default_rng(seed)
print(team_draft_interleave(np.arange(10), np.arange(10)[::-1], length, example_rng))

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
hidden: false
points: 1
""" # END TEST CONFIG
def test_returns_two_arrays(team_draft_interleave):
    import numpy as np
    out = team_draft_interleave(np.arange(5), np.arange(5)[::-1], 4, np.random.default_rng(0))
    assert out is not None, "team_draft_interleave returns None: write its body"
    shown, team = out
    assert len(shown) == 4 and len(team) == 4, (
        f"expected 4 shown documents and 4 teams, got {len(shown)} and {len(team)}")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_permutation_and_teams(team_draft_interleave):
    import numpy as np
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b = rng.permutation(8), rng.permutation(8)
        shown, team = (np.asarray(x) for x in team_draft_interleave(a, b, 6, rng))
        assert len(set(shown.tolist())) == 6, f"the shown list {shown.tolist()} repeats a document"
        assert set(team.tolist()) <= {0, 1}, f"teams must be 0 (A) or 1 (B); got {sorted(set(team.tolist()))}"
        assert abs(int((team == 0).sum()) - int((team == 1).sum())) <= 1, (
            f"teams of sizes {int((team == 0).sum())} and {int((team == 1).sum())}: each round gives one document "
            "to each ranker, so they differ by at most one")
        placed = set()
        for position, (doc, ranker) in enumerate(zip(shown.tolist(), team.tolist())):
            best_free = next(d for d in (a, b)[ranker].tolist() if d not in placed)
            assert doc == best_free, (
                f"at position {position} ranker {'AB'[ranker]} placed document {doc}, but its best document not yet "
                f"shown is {best_free}")
            placed.add(doc)

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_identical_rankings(team_draft_interleave):
    import numpy as np
    ranking = np.array([4, 2, 0, 1, 3, 5])
    shown, _ = team_draft_interleave(ranking, ranking.copy(), 5, np.random.default_rng(2))
    assert list(shown) == [4, 2, 0, 1, 3], f"two identical rankings must give that ranking; yours gave {list(shown)}"

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 2
""" # END TEST CONFIG
def test_random_user_unbiased(team_draft_interleave):
    import numpy as np
    rng = np.random.default_rng(3)
    a, b = np.arange(8), np.array([7, 6, 5, 4, 3, 2, 1, 0])
    click_prob = 0.6 / (1 + np.arange(6))             # a random user: clicks depend on the position only
    wins = np.zeros(2)
    for _ in range(3000):
        shown, team = (np.asarray(x) for x in team_draft_interleave(a, b, 6, rng))
        clicks = rng.random(6) < click_prob
        credit = np.bincount(team[clicks], minlength=2)
        if credit[0] != credit[1]:
            wins[int(credit[1] > credit[0])] += 1
    share = wins[0] / max(wins.sum(), 1)
    assert abs(share - 0.5) <= 0.03, (
        f"your interleaving gives ranker A {share:.0%} of the wins under a random user; it should be 50 % ± 3 % "
        "(does one ranker always choose first?)")

# %%
""" # BEGIN TEST CONFIG
hidden: true
points: 1
""" # END TEST CONFIG
def test_same_lists_as_reference(team_draft_interleave):
    from collections import Counter

    import numpy as np

    from olr_core.rankers.interleaving import team_draft
    a, b = np.array([0, 1, 2, 3]), np.array([2, 3, 0, 1])
    rng_mine, rng_ref = np.random.default_rng(4), np.random.default_rng(5)
    n = 2000
    mine = Counter(tuple(int(d) for d in team_draft_interleave(a, b, 4, rng_mine)[0]) for _ in range(n))
    ref = Counter(tuple(int(d) for d in team_draft(np.stack([a, b]), 4, rng_ref, shared_prefix=False)[0])
                  for _ in range(n))
    distance = sum(abs(mine[k] - ref[k]) for k in set(mine) | set(ref)) / (2 * n)
    assert distance <= 0.05, (
        f"your lists' frequencies differ from olr_core's team_draft by a total variation of {distance:.2f} "
        f"(at most 0.05 expected); yours: {dict(mine)}, reference: {dict(ref)}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION
