"""Equal tuning budgets (#34): every learner a claim of the PairRank or neural chapter compares is tuned on
the validation split with the same number of settings and the same seeds as every other, and none borrows
another's choice. The budgets are counted from the tuning runs themselves, not from the grids' own sizes."""

import json

import pytest

from olr_core.reproductions import neural, pairrank

REFERENCES = {"offline_ranknet", "offline_lambdarank"}      # trained offline on labels: nothing to tune online


def budgets(specs) -> dict[str, tuple[int, int]]:
    """{algorithm: (distinct settings, distinct seeds)} of a list of tuning runs."""
    settings, seeds = {}, {}
    for spec in specs:
        settings.setdefault(spec.algorithm, set()).add(tuple(sorted(spec.params.items())))
        seeds.setdefault(spec.algorithm, set()).add(spec.seed)
    return {name: (len(settings[name]), len(seeds[name])) for name in settings}


def compared_learners(claims, known) -> set[str]:
    """Every learner named in the claims' arguments (targets, treatments, controls)."""
    found = set()

    def walk(value):
        if isinstance(value, str) and value in known:
            found.add(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, (list, tuple, set)):
            for item in value:
                walk(item)

    for claim in claims:
        walk(claim.args)
        walk(claim.where)
    return found - REFERENCES


def test_the_pairrank_chapter_tunes_every_compared_learner_with_one_budget():
    specs = pairrank.experiments.tuning_specs("synth-mq", 2, 50)
    found = budgets(specs)
    assert set(found) == set(pairrank.experiments.ALGORITHMS)            # DBGD, MGD and PairRank_R included
    assert compared_learners(pairrank.claims.CLAIMS, set(pairrank.experiments.ALGORITHMS) | REFERENCES) <= set(found)
    assert set(found.values()) == {(9, 2)}, found            # nine settings, the same two seeds, each
    assert {s.eval_split for s in specs} == {"vali"}


@pytest.mark.parametrize("grid", ["quick", "paper"])
def test_the_neural_chapter_tunes_every_compared_learner_with_one_budget(grid):
    specs = neural.experiments.tuning_specs("synth-mq-5g", 2, 50, grid)
    found = budgets(specs)
    assert set(found) == set(neural.experiments.ALGORITHMS)              # the linear baselines too
    assert compared_learners(neural.claims.CLAIMS, set(neural.experiments.ALGORITHMS) | REFERENCES) <= set(found)
    assert len(set(found.values())) == 1, found              # one (settings, seeds) pair for all
    assert next(iter(found.values()))[1] == 2
    assert {s.eval_split for s in specs} == {"vali"}


def test_no_learner_takes_another_learners_tuned_values(tmp_path, monkeypatch):
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path))
    chosen = {name: {"marker": index} for index, name in enumerate(pairrank.experiments.ALGORITHMS)}
    (tmp_path / "pairrank_tuned.json").write_text(json.dumps(chosen))
    assert {name: params for name, params in pairrank.experiments.tuned_params().items() if name in chosen} == chosen
    neural_chosen = {name: {"marker": 100 + index} for index, name in enumerate(neural.experiments.ALGORITHMS)}
    (tmp_path / "neural_tuned.json").write_text(json.dumps(neural_chosen))
    assert neural.experiments.tuned_params() == neural_chosen     # the neural chapter's own tuning, linear ones too


def test_the_budget_table_has_one_row_per_learner_with_its_choice():
    specs = pairrank.experiments.tuning_specs("synth-mq", 1, 50)
    choice = {"pdgd": {"learning_rate": 0.3}}
    table = pairrank.analysis.budget_table(specs, choice)
    assert list(table.columns) == ["learner", "settings tried", "seeds", "chosen setting"]
    assert sorted(table["learner"]) == sorted(pairrank.experiments.ALGORITHMS)
    assert set(table["settings tried"]) == {9} and set(table["seeds"]) == {1}
    rows = table.set_index("learner")["chosen setting"]
    assert rows["pdgd"] == "learning_rate=0.3" and rows["dbgd"] == "none finished"
