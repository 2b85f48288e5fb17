"""Every stored run keeps its key: the runs of tests/fixtures/run_keys.json (written by
tests/fixtures/make_run_keys.py on the code before the typed-spec refactor of issue #37) are described again
and must give the same key and canonical description, and the runs refused then are refused now."""

import json
from pathlib import Path

import pytest

from tests.fixtures import make_run_keys

ROOT = Path(__file__).resolve().parents[1]
RECORDS = json.loads(make_run_keys.FIXTURE.read_text())


@pytest.fixture(scope="module")
def described():
    """Every recorded case described by today's code, the code fingerprint pinned as when it was recorded."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        patch.syspath_prepend(str(ROOT))
        patch.setattr("olr_core.experiments.spec.code_fingerprint", lambda: make_run_keys.PINNED_CODE)
        return [make_run_keys.describe(record["case"]) for record in RECORDS]


def test_the_fixture_covers_every_ranker_every_click_model_family_library_data_and_plugins():
    from olr_core.click_models import FAMILIES
    from olr_core.rankers import ALGORITHMS

    keyed = [r["case"] for r in RECORDS if "key" in r]
    assert set(ALGORITHMS) <= {c["algorithm"] for c in keyed}
    assert set(FAMILIES) <= {c["click_model"].split(":")[0].split("+")[0] for c in keyed} | {"cascade"}
    assert {"synth-library", "cora"} <= {c["dataset"] for c in keyed}
    assert any(":ClickSkipPerceptron" in c["algorithm"] for c in keyed)
    assert any(":FirstOnly" in c["click_model"] for c in keyed)


def test_every_recorded_run_has_the_same_key_and_description(described):
    changed = [(old["case"], old.get("key"), new.get("key")) for old, new in zip(RECORDS, described)
               if old.get("key") != new.get("key") or old.get("canonical") != new.get("canonical")]
    assert not changed, f"{len(changed)} of {len(RECORDS)} run keys changed, e.g. {changed[:3]}"


def test_every_recorded_refusal_is_still_a_refusal(described):
    changed = [old["case"] for old, new in zip(RECORDS, described) if ("refused" in old) != ("refused" in new)]
    assert not changed, f"{len(changed)} runs changed between accepted and refused, e.g. {changed[:3]}"
