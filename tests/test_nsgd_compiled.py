"""NSGD's compiled rounds (:class:`olr_core.rankers.dueling_compiled.CompiledNullSpace`) replay the protocol
path round for round, to the last bit of every stored number."""

import numpy as np
import pytest

from olr_core.data import load_fold
from olr_core.rankers import make_ranker
from olr_core.rankers.dueling_compiled import pairwise_sum
from olr_core.users import make_user

from .conftest import assert_compiled_replays_protocol


@pytest.mark.parametrize("name, params, click_model, stop_rule, dataset", [
    ("nsgd", {}, "navigational", "after_click", "synth-mq"),
    ("nsgd_dsp", {}, "informational", "every_position", "synth-mq"),
    ("nsgd_dsp", {"winners": "mean", "learning_rate": 0.01, "decay": 1.0, "dsp_renormalize": True}, "perfect",
     "every_position", "synth-mq"),                                            # the code's NSGD-DSP
    ("nsgd", {"history": 4, "n_null": 3, "n_difficult": 2, "n_candidates": 3, "n_sample": 5}, "trust_bias",
     "after_click", "synth-mq"),                                               # rings that wrap within a round
    ("nsgd", {"n_difficult": 0, "shared_prefix": False}, "ubm+noise=0.1", "after_click", "synth-mq"),
    ("nsgd_dsp", {"n_candidates": 12, "n_sample": 30, "n_null": 60}, "navigational", "after_click", "synth-mslr"),
])
def test_compiled_nsgd_rounds_replay_the_protocol_bit_for_bit(name, params, click_model, stop_rule, dataset):
    fold = load_fold(dataset)
    user = make_user(click_model, fold.max_grade, stop_rule=stop_rule)
    for compiled, protocol, fast in assert_compiled_replays_protocol(name, params, fold, user, 400, (0, 5), 30):
        assert [(m, u.tobytes()) for m, u in compiled.losers] == [(m, u.tobytes()) for m, u in protocol.losers]
        assert len(compiled.difficult) == len(protocol.difficult)
        for (x, c), (y, e) in zip(compiled.difficult, protocol.difficult):
            assert x.tobytes() == y.tobytes() and c.tobytes() == e.tobytes()
        assert np.nanmean(fast.stats["won"]) > 0.05                  # the runs learned, so updates were compared


def test_compiled_nsgd_is_declined_where_it_cannot_replay_the_protocol():
    fold = load_fold("synth-mq")
    user = make_user("navigational", fold.max_grade)
    for ranker, cutoff in [(make_ranker("nsgd", scorer="mlp"), 10), (make_ranker("nsgd"), 5)]:
        ranker.start(fold.train, np.random.default_rng(0))
        assert ranker.compiled_rounds(user, fold.train, cutoff) is None


@pytest.mark.parametrize("n", [1, 7, 8, 9, 46, 128, 129, 136, 300, 700])
def test_pairwise_sum_is_numpys_sum_to_the_last_bit(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.standard_normal(n) * 10.0 ** rng.integers(-4, 5, n)
        assert pairwise_sum(a, 0, n) == a.sum()
        assert pairwise_sum(a, 3, n - 3) == a[3:].sum() if n > 3 else True
