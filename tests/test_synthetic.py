"""olr_core.data.synthetic: a generated preset is cached on disk, keyed by its seed, and a corrupt copy
is rebuilt."""

import numpy as np

from .conftest import _truncate


def test_a_generated_preset_is_cached_and_a_corrupt_copy_is_rebuilt(tmp_path, capsys):
    from olr_core.data.synthetic import PRESETS, _generate_single_threaded, generate

    fresh = _generate_single_threaded(PRESETS["synth-mq"])
    first = generate(PRESETS["synth-mq"])
    (cached,) = (tmp_path / "cache" / "parsed").glob("synthetic-synth-mq-*.npz")
    again = generate(PRESETS["synth-mq"])                    # read back from the cache
    for data in (first, again):
        np.testing.assert_array_equal(data.features, fresh.features)
        np.testing.assert_array_equal(data.labels, fresh.labels)
        np.testing.assert_array_equal(data.qids, fresh.qids)
    assert generate(PRESETS["synth-mq"], seed=1).fingerprint() != first.fingerprint()   # the seed is in the key
    _truncate(cached)
    np.testing.assert_array_equal(generate(PRESETS["synth-mq"]).features, fresh.features)
    assert "could not be read" in capsys.readouterr().err
