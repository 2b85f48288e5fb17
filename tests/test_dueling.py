import itertools

import numpy as np
import pytest
from scipy.special import expit

from olr_core.data import load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.rankers.dueling import DBGD
from olr_core.rankers.interleaving import pm_outcomes, probabilistic_multileave, team_draft, team_draft_credit
from olr_core.rankers.projection import DocumentSpace, orthonormal_basis, projection_matrix
from olr_core.users import Clicks, make_user


def test_team_draft_list_is_a_duplicate_free_prefix_and_teams_follow_their_rankers():
    rng = np.random.default_rng(0)
    for _ in range(200):
        rankings = np.array([rng.permutation(15) for _ in range(3)])
        shown, team = team_draft(rankings, 10, rng)
        assert len(set(shown)) == 10
        for r in range(3):
            mine = shown[team == r]
            positions = [list(rankings[r]).index(d) for d in mine]
            assert positions == sorted(positions)       # each team picks in its ranker's order


def test_shared_prefix_earns_no_credit():
    rankings = np.array([[0, 1, 2, 3, 4], [0, 1, 3, 2, 4]])
    shown, team = team_draft(rankings, 5, np.random.default_rng(0))
    assert list(shown[:2]) == [0, 1] and list(team[:2]) == [-1, -1]
    _, team = team_draft(rankings, 5, np.random.default_rng(0), shared_prefix=False)
    assert (team >= 0).all()


@pytest.mark.parametrize("m", [2, 5])
def test_team_draft_is_fair_for_identical_rankers_under_random_clicks(m):
    """Identical rankers, clicks at random: each ranker wins equally often (4 s.e. tolerance)."""
    rng = np.random.default_rng(1)
    ranking = rng.permutation(20)
    wins, n = np.zeros(m), 6000
    for _ in range(n):
        shown, team = team_draft(np.tile(ranking, (m, 1)), 10, rng, shared_prefix=False)
        credit = team_draft_credit(team, rng.random(10) < 0.3, m)
        top = np.flatnonzero(credit == credit.max())
        if credit.max() > 0 and len(top) == 1:
            wins[top[0]] += 1
    share = wins / wins.sum()
    assert np.all(np.abs(share - 1 / m) < 4 * np.sqrt((1 / m) * (1 - 1 / m) / wins.sum()))


def test_probabilistic_multileave_posteriors_and_exact_outcomes():
    rng = np.random.default_rng(2)
    rankings = np.array([rng.permutation(6) for _ in range(3)])
    shown, post = probabilistic_multileave(rankings, 4, rng)
    assert len(set(shown)) == 4
    np.testing.assert_allclose(post.sum(axis=1), 1.0)
    clicks = np.array([True, False, True, True])
    exact = pm_outcomes(post, clicks)
    # brute force over all team assignments of the clicked slots
    clicked = post[clicks]
    expected = np.zeros(3)
    for teams in itertools.product(range(3), repeat=len(clicked)):
        prob = np.prod([clicked[i, t] for i, t in enumerate(teams)])
        credit = np.bincount(teams, minlength=3)
        expected += prob * np.sign(credit - credit[0])
    np.testing.assert_allclose(exact, expected)
    assert exact[0] == 0


def test_probabilistic_multileave_is_fair_for_identical_rankers():
    rng = np.random.default_rng(3)
    ranking = rng.permutation(12)
    shown, post = probabilistic_multileave(np.tile(ranking, (4, 1)), 10, rng)
    np.testing.assert_allclose(post, 0.25)
    np.testing.assert_allclose(pm_outcomes(post, rng.random(10) < 0.5), 0.0)


def test_sampled_credit_estimates_the_exact_outcomes_and_makes_ties_coin_flips():
    """The authors' Monte Carlo credit: unbiased for the exact value (within 4 standard errors of a
    mean of signs, at most 1/sqrt(n)); for rankers tied with the current one it is never exactly 0
    and is positive about half the time, so a tied candidate often counts as a winner."""
    from olr_core.rankers.interleaving import pm_outcomes_sampled

    rng = np.random.default_rng(5)
    rankings = np.array([rng.permutation(8) for _ in range(5)])
    _, post = probabilistic_multileave(rankings, 6, rng)
    clicks = np.array([True, False, True, False, True, False])
    sampled = pm_outcomes_sampled(post, clicks, 20_000, rng)
    assert np.all(np.abs(sampled - pm_outcomes(post, clicks)) < 4 / np.sqrt(20_000)) and sampled[0] == 0
    tied = np.tile(rng.permutation(12), (6, 1))
    _, post = probabilistic_multileave(tied, 10, rng)
    clicks = np.zeros(10, dtype=bool)
    clicks[[0, 3]] = True
    positive = [(pm_outcomes_sampled(post, clicks, 1000, rng)[1:] > 0).mean() for _ in range(200)]
    assert np.all(pm_outcomes(post, clicks) == 0)
    assert 0.35 < np.mean(positive) < 0.65


def _alias_probabilities(threshold, alias):
    """The distribution an alias table draws from: column k with probability 1/m, then k itself with
    probability threshold[k] and alias[k] otherwise."""
    m = len(threshold)
    return (threshold + np.bincount(alias, weights=1.0 - threshold, minlength=m)) / m


def test_alias_tables_draw_exactly_the_team_posterior_including_impossible_teams():
    from olr_core.rankers.interleaving import _alias_tables

    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(9, 0.3), size=6)
    p[0, [2, 5]] = 0.0                                # teams that cannot have placed the slot
    p[1] = np.full(9, 1 / 9)                          # all equal: every column keeps its own team
    p /= p.sum(axis=1, keepdims=True)
    threshold, alias = _alias_tables(p)
    for row in range(len(p)):
        np.testing.assert_allclose(_alias_probabilities(threshold[row], alias[row]), p[row], atol=1e-12)
    assert np.all(alias[0, [2, 5]] != [2, 5]) and np.all(threshold[0, [2, 5]] == 0)


@pytest.mark.parametrize("identical", [False, True])
@pytest.mark.parametrize("clicked", [[0, 2, 5], [3]])       # one click: the histogram shortcut
def test_the_compiled_sampled_credit_equals_a_direct_count_of_the_same_draws(identical, clicked):
    from olr_core.rankers.interleaving import _alias_tables, pm_outcomes_sampled

    rng = np.random.default_rng(11)
    rankings = np.array([rng.permutation(15) for _ in range(7)])
    if identical:
        rankings[:] = rankings[0]
    _, post = probabilistic_multileave(rankings, 10, rng)
    clicks = np.zeros(10, dtype=bool)
    clicks[clicked] = True
    c = len(clicked)
    threshold, alias = _alias_tables(post[clicks])
    draws = np.random.default_rng(1).random((500, c))
    column = (draws * 7).astype(int)
    slot = np.arange(c)
    teams = np.where(draws * 7 - column < threshold[slot, column], column, alias[slot, column])
    counts = np.stack([np.bincount(row, minlength=7) for row in teams])
    direct = np.sign(counts - counts[:, :1]).mean(axis=0)
    np.testing.assert_array_equal(pm_outcomes_sampled(post, clicks, 500, np.random.default_rng(1)), direct)


def test_two_ranker_sampled_credit_has_the_distribution_of_the_draw_by_draw_count():
    """Interleaving (two rankers) draws the estimate from a multinomial of the exact margin
    distribution; over 4,000 repetitions of 40 draws its mean, spread and P(> 0) match the
    draw-by-draw kernel's (tolerances: 4 standard errors of each statistic, roughly)."""
    from olr_core.rankers.interleaving import _alias_tables, _mean_sampled_signs, pm_outcomes_sampled

    rng = np.random.default_rng(8)
    rankings = np.array([rng.permutation(10), rng.permutation(10)])
    _, post = probabilistic_multileave(rankings, 10, rng)
    clicks = np.zeros(10, dtype=bool)
    clicks[[0, 1, 4]] = True
    threshold, alias = _alias_tables(post[clicks])
    by_draws = np.array([_mean_sampled_signs(threshold, alias, rng.random((40, 3)))[1] for _ in range(4000)])
    shortcut = np.array([pm_outcomes_sampled(post, clicks, 40, rng)[1] for _ in range(4000)])
    sd = by_draws.std()
    assert abs(shortcut.mean() - by_draws.mean()) < 4 * sd * np.sqrt(2 / 4000)
    assert abs(shortcut.mean() - pm_outcomes(post, clicks)[1]) < 4 * sd / np.sqrt(4000)
    assert 0.9 < shortcut.std() / sd < 1.1
    assert abs((shortcut > 0).mean() - (by_draws > 0).mean()) < 0.05


def test_sampled_credit_is_refused_with_team_draft():
    with pytest.raises(ValueError, match="multileave=probabilistic"):
        DBGD(credit_samples=100)


def _textbook_multileave(rankings, length, tau, u_team, u_doc):
    """Probabilistic multileaving as Schuth et al. (2015) state it, on sorted rankings, in plain Python (the
    same arithmetic in the same order as the compiled kernel, so results agree to the bit)."""
    m, n = rankings.shape
    by_rank = [1.0 / (pos + 1.0) ** tau for pos in range(n)]
    weight = np.empty((m, n))
    for r in range(m):
        weight[r, rankings[r]] = by_rank
    remaining = np.full(m, sum(by_rank))
    placed, shown, posterior = set(), [], np.empty((length, m))
    for slot in range(length):
        r = min(int(u_team[slot] * m), m - 1)
        target, acc, doc = u_doc[slot] * remaining[r], 0.0, -1
        for cand in rankings[r]:
            if cand in placed:
                continue
            doc, acc = cand, acc + weight[r, cand]
            if acc >= target:
                break
        shown.append(doc)
        placed.add(doc)
        posterior[slot] = weight[:, doc] / remaining
        posterior[slot] /= sum(posterior[slot])
        remaining -= weight[:, doc]
    return np.array(shown), posterior


def test_multileave_from_scores_matches_the_textbook_multileave_of_the_sorted_rankings():
    """The compiled rounds multileave without sorting the 50 rankings; list and posteriors must be those
    of the sorted rankings exactly, with tied scores (the noise decides), ties in the noise too, and a NaN."""
    from olr_core.rankers.interleaving import _probabilistic_scored
    rng = np.random.default_rng(7)
    for case in range(300):
        m, n = int(rng.integers(2, 12)), int(rng.integers(1, 40))
        scores = rng.integers(0, 4 if case % 2 else 1000, (m, n)).astype(float)
        noise = rng.random((m, n))
        if case % 5 == 0:
            noise[:, : n // 2] = 0.5                     # equal keys: the lower index first, as lexsort
        if case % 7 == 0:
            scores[0, 0] = np.nan
        length, draws = min(10, n), rng.random((2, 10))
        rankings = np.lexsort((noise, -scores), axis=-1)
        want = _textbook_multileave(rankings, length, 3.0, draws[0], draws[1])
        got = _probabilistic_scored(scores, noise, length, 3.0, draws[0], draws[1])
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        assert np.array_equal(probabilistic_multileave(rankings, length, np.random.default_rng(case))[0],
                              _textbook_multileave(rankings, length, 3.0, *np.random.default_rng(case).random(
                                  (2, length)))[0])


def test_probabilistic_first_slot_follows_the_rank_distribution():
    rng = np.random.default_rng(4)
    ranking = np.arange(5)
    counts = np.zeros(5)
    n = 20000
    for _ in range(n):
        shown, _ = probabilistic_multileave(ranking[None, :], 1, rng)
        counts[shown[0]] += 1
    p = 1 / np.arange(1, 6) ** 3
    p /= p.sum()
    assert np.all(np.abs(counts / n - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-9)


def test_projection_is_symmetric_idempotent_and_fixes_the_document_space():
    rng = np.random.default_rng(5)
    D = rng.random((6, 20))
    A = projection_matrix(D)
    np.testing.assert_allclose(A, A.T, atol=1e-12)
    np.testing.assert_allclose(A @ A, A, atol=1e-12)
    v = rng.random(6) @ D                          # a vector in the document space
    np.testing.assert_allclose(A @ v, v, atol=1e-10)
    assert np.trace(A) == pytest.approx(6)
    duplicate = np.vstack([D, D[:2] * 3.0])         # rank-deficient input keeps rank 6
    assert len(orthonormal_basis(duplicate)) == 6


def test_document_space_infers_examination_and_remembers_recent_documents():
    space = DocumentSpace(n_features=4, k=1, r=3)
    X = np.eye(4)[[0, 1, 2, 3, 0]]
    fb = Clicks(np.array([True, False, False, False, False]), last_examined=4)
    examined = space.examined(X, np.arange(5), fb)
    assert len(examined) == 2                       # last click at 0, plus k = 1
    space.remember(examined)
    space.remember(X[[2]])
    assert space.n_recent == 3 and len(space.basis(X[[3]])) == 4
    oracle = DocumentSpace(4, k=1, r=0, oracle=True)
    assert len(oracle.examined(X, np.arange(5), fb)) == 5


def test_dbgd_with_an_oracle_comparison_climbs_a_concave_utility():
    """v(w) = -|w - w*|^2 and P(w' beats w) = sigmoid(v(w') - v(w)): 2,000 duels move w towards w*."""
    d = 10
    rng = np.random.default_rng(6)
    w_star = rng.standard_normal(d)
    ranker = DBGD(learning_rate=0.05, step=0.5)
    ranker.rng = ranker.direction_rng = rng
    ranker.theta = np.zeros(d)

    def utility(w):
        return -np.sum((w - w_star) ** 2)

    start = utility(ranker.theta)
    for _ in range(2000):
        u = ranker.propose(None)
        wins = rng.random() < expit(utility(ranker.theta + ranker.step * u[0]) - utility(ranker.theta))
        if wins:
            ranker.theta = ranker.theta + ranker.learning_rate * ranker.combine(u, np.array([1.0]))
    assert utility(ranker.theta) > 0.2 * start      # at least 80% of the initial gap closed


@pytest.mark.parametrize("name", ["dbgd", "mgd", "nsgd", "dbgd_dsp", "mgd_dsp", "nsgd_dsp"])
def test_dueling_rankers_learn_on_synthetic_data(name):
    fold = load_fold("synth-mq")
    trace = run_online(make_ranker(name), fold, make_user("perfect", fold.max_grade), 600, seed=0, eval_every=100)
    random = run_online(make_ranker("random"), fold, make_user("perfect", fold.max_grade), 600, seed=0,
                        eval_every=100)
    assert trace.offline_ndcg[-1] > random.offline_ndcg[-1] + 0.05
    assert len(set(trace.online_ndcg)) > 1


def test_probabilistic_mgd_and_mlp_dbgd_run():
    fold = load_fold("synth-mq")
    user = make_user("navigational", fold.max_grade)
    pm = run_online(make_ranker("mgd", multileave="probabilistic"), fold, user, 200, seed=1, eval_every=50)
    mlp = run_online(make_ranker("dbgd", scorer="mlp", hidden=8), fold, user, 200, seed=1, eval_every=50)
    assert np.isfinite(pm.offline_ndcg).all() and np.isfinite(mlp.offline_ndcg).all()
    with pytest.raises(ValueError, match="needs the linear scorer"):
        make_ranker("dbgd_dsp", scorer="mlp")
    with pytest.raises(ValueError, match="option multileave=.balanced. is invalid; expected one of team_draft"):
        make_ranker("mgd", multileave="balanced")


def test_nsgd_candidates_are_orthogonal_to_the_worst_losing_directions():
    from olr_core.rankers.dueling import NSGD

    fold = load_fold("synth-mq")
    ranker = NSGD(n_null=5)
    ranker.start(fold.train, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for margin in range(-8, 0):
        ranker.losers.append((float(margin), rng.standard_normal(fold.n_features)))
    worst = np.array([u for m, u in sorted(ranker.losers, key=lambda p: p[0])[:5]])
    candidates = ranker.propose(fold.train.query(0))
    assert candidates.shape == (9, fold.n_features)
    np.testing.assert_allclose(candidates @ worst.T, 0, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(candidates, axis=1), 1)


def test_nsgd_steps_to_one_best_winner_or_as_the_code_to_the_mean_of_all_winners():
    from olr_core.rankers.dueling import NSGD

    fold = load_fold("synth-mq")
    directions = np.eye(4, fold.n_features)
    margins = np.array([2.0, 1.0, 2.0, -1.0])
    best = NSGD()
    best.start(fold.train, np.random.default_rng(0))
    chosen = {tuple(best.combine(directions, margins)) for _ in range(50)}
    assert chosen == {tuple(directions[0]), tuple(directions[2])}      # one of the two best, no queue to break ties
    mean = NSGD(winners="mean")
    mean.start(fold.train, np.random.default_rng(0))
    np.testing.assert_allclose(mean.combine(directions, margins), directions[:3].mean(axis=0))
    with pytest.raises(ValueError, match="winners"):
        make_ranker("nsgd", winners="all")


def test_recent_document_queue_keeps_the_last_r_in_order():
    space = DocumentSpace(n_features=2, k=0, r=3)
    for value in range(1, 6):
        space.remember(np.full((1, 2), float(value)))
    assert space.n_recent == 3 and sorted(space.recent[:, 0]) == [3.0, 4.0, 5.0]
    space.remember(np.arange(8.0).reshape(4, 2))        # more rows than r: only the last three stay
    assert sorted(space.recent[:, 0]) == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("name, params, click_model, stop_rule, cutoff", [
    ("dbgd", {}, "navigational", "after_click", 10),
    ("dbgd_dsp", {}, "informational", "every_position", 10),
    ("dbgd_dsp", {"dsp_oracle": True, "dsp_lambda": 0.4, "dsp_renormalize": True, "dsp_r": 3}, "perfect",
     "after_click", 10),
    ("mgd_dsp", {"n_candidates": 4, "shared_prefix": False}, "navigational", "after_click", 6),
    ("mgd", {}, "perfect", "every_position", 10),
    ("dbgd_dsp", {}, "dbn:informational", "after_click", 10),           # the literature's users (#28)
    ("mgd", {}, "ccm", "after_click", 10),
    ("dbgd", {}, "pbm", "after_click", 10),
    ("dbgd_dsp", {}, "ubm", "after_click", 10),
    ("mgd_dsp", {}, "trust_bias", "after_click", 8),
    ("dbgd_dsp", {}, "navigational+noise=0.1", "after_click", 10),
    ("mgd", {}, "ubm+noise=0.2", "after_click", 10),
    ("mgd", {"multileave": "probabilistic", "credit_samples": 500}, "navigational", "every_position", 10),
    ("mgd_dsp", {"multileave": "probabilistic", "credit_samples": 300, "n_candidates": 12, "dsp_renormalize": True,
                 "learning_rate": 0.01, "decay": 1.0}, "informational", "every_position", 10),   # the code's MGD-DSP
    ("mgd_dsp", {"multileave": "probabilistic", "credit_samples": 200, "n_candidates": 5, "tau": 2.0},
     "trust_bias+noise=0.1", "after_click", 7),
    ("mgd_dsp", {"n_candidates": 20}, "navigational", "after_click", 10),     # BLAS scores (BLAS_FROM rankers)
])
def test_compiled_rounds_replay_the_protocol_bit_for_bit(name, params, click_model, stop_rule, cutoff):
    fold = load_fold("synth-mq")
    user = make_user(click_model, fold.max_grade, stop_rule=stop_rule)
    ranker = make_ranker(name, **params)
    ranker.start(fold.train, np.random.default_rng(0))
    assert ranker.compiled_rounds(user, fold.train, cutoff) is not None
    fast = run_online(make_ranker(name, **params), fold, user, 700, seed=4, eval_every=30, cutoff=cutoff)
    slow = run_online(make_ranker(name, **params), fold, user, 700, seed=4, eval_every=30, cutoff=cutoff,
                      compiled=False)
    assert fast.arrays().keys() == slow.arrays().keys()
    for key, value in fast.arrays().items():
        np.testing.assert_array_equal(value, slow.arrays()[key], err_msg=key)
    assert np.nanmean(fast.stats["won"]) > 0.05           # the runs did learn, so the updates were compared


def test_compiled_rounds_are_offered_only_where_they_replay_the_protocol():
    fold = load_fold("synth-mq")
    cascade = make_user("navigational", fold.max_grade)
    from olr_core.users import LogisticClickUser

    own = LogisticClickUser(tuple(np.ones(fold.n_features)))               # no kernel of its own
    declined = [(make_ranker("nsgd", scorer="mlp"), cascade), (make_ranker("mgd", scorer="mlp"), cascade),
                (make_ranker("dbgd", multileave="probabilistic", credit_samples=100), cascade),
                (make_ranker("dbgd", scorer="mlp"), cascade), (make_ranker("dbgd"), own)]
    for ranker, user in declined:
        ranker.start(fold.train, np.random.default_rng(0))
        assert ranker.compiled_rounds(user, fold.train, 10) is None


@pytest.mark.parametrize("k", [1, 3, 10, 25, 40])
def test_top_rows_are_the_first_columns_of_lexsort_including_ties_and_signed_zeros(k):
    from olr_core.rankers.dueling_compiled import top_rows

    rng = np.random.default_rng(8)
    scores = rng.integers(-1, 2, size=(6, 25)).astype(float)     # many ties
    scores[2] = np.where(scores[2] == 0, -0.0, scores[2])         # -0.0 ties with 0.0
    scores[3] = rng.random(25)                                    # no ties
    keys = rng.random((6, 25))
    expected = np.lexsort((keys, -scores), axis=-1)[:, :k]
    np.testing.assert_array_equal(top_rows(scores, keys, k), expected)


def _svd_projection(D, u, rtol=1e-10):
    """The reference: A u from the right singular vectors whose singular values exceed rtol x the largest."""
    _, s, vt = np.linalg.svd(D, full_matrices=False)
    basis = vt[s > rtol * max(s[0], 1e-300)]
    return basis.T @ (basis @ u), len(basis)


@pytest.mark.parametrize("shape", [(1, 5), (6, 20), (25, 46), (60, 46)])
def test_the_pivoted_qr_basis_is_orthonormal_and_spans_what_the_svd_spans(shape):
    rng = np.random.default_rng(shape[0] + shape[1])
    D = rng.standard_normal(shape)
    D = np.vstack([D, D[:1] * 2.0])                               # one dependent row
    basis = orthonormal_basis(D)
    np.testing.assert_allclose(basis @ basis.T, np.eye(len(basis)), atol=1e-12)
    u = rng.standard_normal(shape[1])
    expected, rank = _svd_projection(D, u)
    assert len(basis) == rank
    np.testing.assert_allclose(basis.T @ (basis @ u), expected, atol=1e-12)


def test_the_basis_is_scipys_pivoted_qr_to_the_last_bit():
    """orthonormal_basis calls LAPACK directly with scipy.linalg.qr's workspace: the same bits,
    tall, wide, square and rank-deficient (stored runs depend on it)."""
    import scipy.linalg

    rng = np.random.default_rng(7)
    for k, d in [(1, 5), (25, 46), (46, 46), (60, 46), (3, 2), (30, 10)]:
        for dependent in (False, True):
            D = rng.standard_normal((k, d))
            if dependent and k > 2:
                D[-1] = 2.0 * D[0] - D[1]
            q, r, _ = scipy.linalg.qr(D.T, mode="economic", pivoting=True)
            diagonal = np.abs(np.diag(r))
            expected = q[:, : int((diagonal > 1e-10 * diagonal[0]).sum())].T
            assert np.array_equal(orthonormal_basis(D), expected), (k, d, dependent)


def test_nsgd_keeps_its_losing_span_only_while_the_losers_are_unchanged():
    fold = load_fold("synth-mq")
    ranker = make_ranker("nsgd", n_null=5, history=8)
    run_online(ranker, fold, make_user("informational", fold.max_grade), rounds=300, seed=3)
    assert len(ranker.losers) == 8
    kept = ranker.losing_span()
    ranker._span = None
    np.testing.assert_array_equal(kept, ranker.losing_span())     # the kept span is the current one
    before = ranker.losing_span()
    directions, margins = np.eye(2, fold.n_features), np.array([-50.0, -40.0])    # two new worst losers
    ranker.observe(fold.train.query(0), None, None, directions, margins)
    after = ranker.losing_span()
    assert not np.array_equal(before, after)
    np.testing.assert_allclose(np.linalg.norm(after @ directions.T, axis=0), 1.0)   # both lie in the new span


@pytest.mark.parametrize("shape", [(1, 5), (6, 20), (18, 46), (60, 46), (46, 46)])
def test_pivoted_qr_projection_matches_the_svd_projection(shape):
    from olr_core.rankers.projection import project_on_span

    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    D = rng.random(shape) * (rng.random(shape) < 0.6)            # sparse non-negative, like LETOR features
    u = rng.standard_normal(shape[1])
    projected, rank = project_on_span(D, u)
    expected, expected_rank = _svd_projection(D, u)
    assert rank == expected_rank
    np.testing.assert_allclose(projected, expected, atol=1e-12)


def test_pivoted_qr_projection_finds_the_rank_of_dependent_documents():
    from olr_core.rankers.projection import project_on_span

    rng = np.random.default_rng(9)
    D = rng.random((5, 30))
    dependent = np.vstack([D, D[:2] * 3.0, D[1] - 2 * D[3], D[0] + 1e-14 * rng.random(30), np.zeros((1, 30))])
    u = rng.standard_normal(30)
    projected, rank = project_on_span(dependent[rng.permutation(len(dependent))], u)
    assert rank == 5
    np.testing.assert_allclose(projected, _svd_projection(D, u)[0], atol=1e-10)
    again, _ = project_on_span(dependent, projected)
    np.testing.assert_allclose(again, projected, atol=1e-12)                 # idempotent
    np.testing.assert_allclose(dependent @ (u - projected), 0, atol=1e-10)   # residual orthogonal to documents
    assert project_on_span(np.zeros((3, 30)), u)[1] == 0
    np.testing.assert_array_equal(project_on_span(np.zeros((3, 30)), u)[0], 0)


def test_second_moment_of_a_projection_fixed_before_the_direction_is_rank_over_d():
    """Lemma 3.2's identity E||Au||^2 = rank(A)/d, for A independent of u (4 standard errors)."""
    from olr_core.rankers.projection import orthonormal_basis
    from olr_core.rankers.scorers import unit_sphere

    rng = np.random.default_rng(7)
    d = 46
    docs = np.abs(rng.standard_normal((10, d))) * (rng.random((10, d)) < 0.4)
    basis = orthonormal_basis(docs)
    u = unit_sphere(rng, 40_000, d)
    norm2 = ((u @ basis.T) ** 2).sum(1)
    se = norm2.std(ddof=1) / np.sqrt(len(u))
    assert abs(norm2.mean() - len(basis) / d) < 4 * se


def test_the_compiled_margin_convolution_equals_the_numpy_formula_bit_for_bit():
    """The convolution as first written in numpy (rolls of the whole table per clicked slot)."""
    from olr_core.rankers.interleaving import margin_distribution

    def by_rolls(posterior, clicks):
        p = posterior[: len(clicks)][clicks]
        m, c = posterior.shape[1], int(clicks.sum())
        dist = np.zeros((m, 2 * c + 1))
        dist[:, c] = 1.0
        for slot in p:
            up, down = slot.copy(), np.full(m, slot[0])
            stay = 1.0 - up - down
            stay[0], up[0], down[0] = 1.0, 0.0, 0.0
            dist = (dist * stay[:, None] + np.roll(dist, 1, axis=1) * up[:, None]
                    + np.roll(dist, -1, axis=1) * down[:, None])
        return dist

    rng = np.random.default_rng(21)
    for m in (2, 5, 50):
        rankings = np.array([rng.permutation(12) for _ in range(m)])
        _, post = probabilistic_multileave(rankings, 10, rng)
        for clicks in (rng.random(10) < 0.4, np.ones(10, dtype=bool), np.eye(10, dtype=bool)[3]):
            expected = by_rolls(post, clicks)
            assert np.array_equal(margin_distribution(post, clicks), expected)
            np.testing.assert_allclose(expected.sum(axis=1), 1.0)


def test_linear_scores_add_each_documents_terms_in_feature_order_to_the_last_bit():
    """Both dueling paths rank by these scores; a different summation order would change ties and runs."""
    from olr_core.rankers.scorers import linear_scores_many

    rng = np.random.default_rng(0)
    X, thetas = rng.normal(size=(37, 46)), rng.normal(size=(10, 46))
    expected = np.zeros((10, 37))
    for f in range(46):                                  # (((0 + x0 t0) + x1 t1) + ...), one term at a time
        expected = expected + X[:, f][None, :] * thetas[:, f][:, None]
    assert np.array_equal(linear_scores_many(X, thetas), expected)
    assert np.allclose(expected, thetas @ X.T)


def test_nsgd_tie_breaker_scores_the_stored_difficult_queries_one_by_one():
    """NSGD breaks a tie between winning candidates by the DCG of the clicks of its difficult queries. The
    stacked computation equals, to rounding, the definition query by query: each query's documents by
    descending score, equal documents (here: duplicated rows, as MQ2008 has) in display order."""
    from collections import deque

    rng = np.random.default_rng(4)
    ranker = make_ranker("nsgd")
    ranker.start(load_fold("synth-mq", 1, None).train, rng)
    d = len(ranker.theta)
    ranker.difficult = deque(maxlen=10)
    for size in (10, 3, 7, 10, 1):
        features = rng.random((size, d))
        features[size // 2:] = features[0]                       # duplicates: exact ties
        ranker.difficult.append((features, rng.random(size) < 0.4))
    ranker._stacked = None

    def by_query(theta):
        total = 0.0
        for features, clicks in ranker.difficult:
            order = np.argsort(-(features * theta).sum(axis=1), kind="stable")
            ranks = np.empty(len(order), dtype=np.int64)
            ranks[order] = np.arange(len(order))
            total += float((clicks / np.log2(ranks + 2.0)).sum())
        return total

    for _ in range(20):
        theta = rng.normal(size=d)
        assert ranker._clicked_dcg(theta) == pytest.approx(by_query(theta), rel=1e-12)
    ranker.observe(None, None, None, np.zeros((1, d)), np.array([-1.0]))     # a loser only: no new query
    assert ranker._stacked is not None


def _near_tie_case(seed, n=60, d=46, m=12, pairs=30):
    """Documents in pairs with two features swapped (and some exact copies) under weights equal on the swapped
    features: equal in exact arithmetic, so their scores differ only by the rounding of the summation order."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 1e3], size=d)
    thetas = rng.normal(size=(m, d))
    for i in range(0, 2 * pairs, 2):
        a, b = rng.choice(d, 2, replace=False)
        X[i + 1] = X[i]
        X[i + 1, [a, b]] = X[i, [b, a]]
        thetas[:, b] = thetas[:, a]
    X[n - 5: n] = X[3]                                                        # exact copies
    thetas[0] = 0.0                                                           # the start: every score 0
    return X, thetas, rng.random((m, n))


@pytest.mark.parametrize("k", [3, 10, 59, 60, 80])
def test_blas_rankings_are_the_feature_order_rankings_on_near_ties_and_copies(k):
    """The compiled rounds rank by BLAS scores where they decide the order and by the feature-order scores where
    they do not: the top k must be the feature-order scores' top k exactly (ties among copies by key), also
    where documents differ by the rounding of the summation order alone."""
    from olr_core.rankers.dueling_compiled import exact_top_rows, first_copies, top_rows
    from olr_core.rankers.scorers import linear_scores_many

    for seed in range(40):
        X, thetas, keys = _near_tie_case(seed)
        copies = first_copies(X)
        expected = top_rows(linear_scores_many(X, thetas), keys, k)
        np.testing.assert_array_equal(exact_top_rows(X, thetas, keys, k, copies, True), expected, err_msg=str(seed))


def test_blas_multileave_is_the_feature_order_multileave_on_near_ties_and_copies():
    from olr_core.rankers.dueling_compiled import blas_scores, decided_positions, first_copies
    from olr_core.rankers.interleaving import _probabilistic_scored
    from olr_core.rankers.scorers import linear_scores_many

    redone = 0
    for seed in range(60):
        X, thetas, noise = _near_tie_case(seed, pairs=3 if seed % 3 else 30)
        if seed % 2:
            thetas[0] = thetas[1]                                             # no ranker that ties everywhere
        draws = np.random.default_rng(seed).random((2, 10))
        copies = first_copies(X)
        scores, margin = blas_scores(X, thetas, copies, True)
        got = _probabilistic_scored(scores, noise, 10, 3.0, draws[0], draws[1])
        if not decided_positions(scores, got[0], copies, margin):
            redone += 1
            got = _probabilistic_scored(linear_scores_many(X, thetas), noise, 10, 3.0, draws[0], draws[1])
        expected = _probabilistic_scored(linear_scores_many(X, thetas), noise, 10, 3.0, draws[0], draws[1])
        np.testing.assert_array_equal(got[0], expected[0], err_msg=str(seed))
        np.testing.assert_array_equal(got[1], expected[1], err_msg=str(seed))
    assert 0 < redone < 60                              # both ways were taken


def _ranks(scores, noise):
    """Each document's rank in each row's ranking np.lexsort((noise, -scores))."""
    order = np.lexsort((noise, -scores), axis=-1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(order.shape[1]), axis=-1)
    return ranks


def test_decided_positions_holds_only_where_the_feature_order_ranks_agree():
    """Where ``decided_positions`` accepts the BLAS scores, every shown document has the rank the feature-order
    scores give it, under every ranker. Near ties whose order the summation's rounding flips occur here (the
    test checks that), so a margin too small to cover the rounding fails it."""
    from olr_core.rankers.dueling_compiled import blas_scores, decided_positions, first_copies
    from olr_core.rankers.scorers import linear_scores_many

    accepted = flipped = 0
    for seed in range(60):
        X, thetas, noise = _near_tie_case(seed, pairs=3 if seed % 3 else 30)
        copies = first_copies(X)
        scores, margin = blas_scores(X, thetas, copies, True)
        blas_ranks, exact_ranks = _ranks(scores, noise), _ranks(linear_scores_many(X, thetas), noise)
        shown_sets = np.random.default_rng(seed).permuted(np.tile(np.arange(len(X)), (8, 1)), axis=1)[:, :10]
        for j in range(len(thetas)):
            for shown in shown_sets:
                differ = (blas_ranks[j, shown] != exact_ranks[j, shown]).any()
                flipped += differ
                if decided_positions(scores[j:j + 1], shown, copies, margin[j:j + 1]):
                    accepted += 1
                    assert not differ, (seed, j, shown)
    assert flipped > 0 and accepted > 0                   # rounding flips occur, and the BLAS scores are used


def test_first_copies_point_each_document_to_its_first_identical_one():
    from olr_core.rankers.dueling_compiled import first_copies

    X = np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 2.0], [0.0, -0.0], [1.0, 2.5], [1.0, 2.0]])
    np.testing.assert_array_equal(first_copies(X), [0, 1, 0, 1, 4, 0])      # -0.0 == 0.0: the same score


@pytest.mark.parametrize("theta", ["zero", "random", "nan"])
def test_protocol_team_draft_from_the_top_rows_is_the_draft_of_the_full_rankings(theta):
    """The protocol path drafts from each ranking's top ``cutoff`` (insertion top-k of the same draws); the
    list and the teams must be those of the full rankings of rank_by_scores, ties (theta = 0) and NaN included."""
    from olr_core.metrics import rank_by_scores
    from olr_core.rankers.interleaving import team_draft

    fold = load_fold("synth-mq")
    query = fold.train.query(3)
    ranker = make_ranker("mgd", n_candidates=6)
    ranker.start(fold.train, np.random.default_rng(0))
    ranker.theta = {"zero": np.zeros(fold.n_features), "random": np.random.default_rng(1).normal(size=fold.n_features),
                    "nan": np.full(fold.n_features, np.nan)}[theta]
    ranker.propose = lambda q: np.random.default_rng(2).normal(size=(6, fold.n_features))
    ranker.rng = np.random.default_rng(5)
    display = ranker.rank(query)
    rng = np.random.default_rng(5)
    directions = np.random.default_rng(2).normal(size=(6, fold.n_features))
    scores = ranker.scorer.scores_many(query.features, np.concatenate([ranker.theta[None], ranker.theta + directions]))
    shown, team = team_draft(rank_by_scores(scores, rng), ranker.cutoff, rng, ranker.shared_prefix)
    np.testing.assert_array_equal(display.ranking, shown)
    np.testing.assert_array_equal(display.info[1], team)
