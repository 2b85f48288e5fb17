"""The hostile corpus: code and files a new user may hand the book. Each case gives its expected one-line
message (never a traceback) or the correct result, and none of them changes what the store holds for the
built-in runs."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, RunSpec, run_grid
from olr_core.plugin_guard import read_only_data
from olr_core.plugins import PluginError

from .test_book import _timing_notebook

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = textwrap.dedent('''
    import numpy as np
    from olr_core.rankers.base import Display, LinearRanker
    from olr_core.users import Choice, Clicks, TopKLabels


    class Mutate(LinearRanker):
        def start(self, train, rng):
            super().start(train, rng)
            train.features[:] = 0


    class SneakyMutate(LinearRanker):
        """Tries to poison the data the next runs see, and hides that it failed."""

        def start(self, train, rng):
            super().start(train, rng)
            for array in (train.features, train.labels, *train.padded()):
                try:
                    array[:] = 0
                except ValueError:
                    pass

        def score(self, docs):
            try:
                docs.features[:] = 1
            except ValueError:
                pass
            return super().score(docs)


    class Unlocks(LinearRanker):
        """Switches the read-only view's flag back on and writes (a deliberate breach)."""

        def start(self, train, rng):
            super().start(train, rng)
            train.features.flags.writeable = True
            train.features[:] = 0


    class UnlocksTables(LinearRanker):
        """Switches the cached query tables' flag back on and empties their mask (a deliberate breach)."""

        def start(self, train, rng):
            super().start(train, rng)
            index, mask = train.padded()
            mask.flags.writeable = True
            mask[:] = False


    class Short(LinearRanker):
        def score(self, docs):
            return np.zeros(len(docs.features) - 1)


    class Scalar(LinearRanker):
        def score(self, docs):
            return 1.0


    class Repeat(LinearRanker):
        def rank(self, query):
            return Display(np.zeros(10, dtype=np.int64))


    class Past(LinearRanker):
        def rank(self, query):
            return Display(np.arange(query.n_docs + 3))


    class LearnRaises(LinearRanker):
        def learn(self, query, display, feedback):
            return {}["x"]


    class LearnExits(LinearRanker):
        def learn(self, query, display, feedback):
            raise SystemExit(3)


    class ShortWeights(LinearRanker):
        def weights(self):
            return np.ones(3)


    class NanWeights(LinearRanker):
        def weights(self):
            return np.full(len(self.w), np.nan)


    class FeatureSum:
        """Written from the protocol's docstring: no weights(), which is optional."""

        feedback_kind = "clicks"

        def start(self, train, rng):
            pass

        def score(self, docs):
            return docs.features.sum(axis=1)

        def rank(self, query):
            return Display(np.argsort(-self.score(query), kind="stable"))

        def learn(self, query, display, feedback):
            return None


    class NoScore:
        def start(self, train, rng):
            pass

        def rank(self, query):
            pass

        def learn(self, query, display, feedback):
            pass


    class Clicker:
        feedback_kind = "clicks"
        value = None

        def __init__(self, max_grade, cutoff=10):
            self.cutoff = cutoff

        def __call__(self, query, shown, rng):
            rng.random(self.cutoff)
            return Clicks(np.asarray(self.value(len(shown))), len(shown) - 1)


    class LongClicks(Clicker):
        value = staticmethod(lambda n: np.ones(n + 2, dtype=bool))


    class TwoClicks(Clicker):
        value = staticmethod(lambda n: np.full(n, 2))


    class MinusClicks(Clicker):
        value = staticmethod(lambda n: np.full(n, -1))


    class HalfClicks(Clicker):
        value = staticmethod(lambda n: np.full(n, 0.5))


    class IntegerClicks(Clicker):
        value = staticmethod(lambda n: (np.arange(n) == 0).astype(int))


    class ListClicks(Clicker):
        def __call__(self, query, shown, rng):
            return Clicks([True] + [False] * (len(shown) - 1), len(shown) - 1)      # (a list, not an array)


    class Last(Clicker):
        last = None

        def __call__(self, query, shown, rng):
            return Clicks(np.arange(len(shown)) == 2, self.last)


    class LastPast(Last):
        last = 15


    class LastNegative(Last):
        last = -2


    class LastFloat(Last):
        last = 9.0


    class LastAboveClick(Last):
        last = 1


    class Labels(Clicker):
        feedback_kind = "topk_labels"
        k = 1
        value = None

        def __call__(self, query, shown, rng):
            return TopKLabels(np.asarray(self.value))


    class TopSeven(Labels):
        value = [7]


    class TopThree(Labels):
        value = [1, 1, 1]


    class TopHalf(Labels):
        value = [0.5]


    class AllTwo(Labels):
        feedback_kind = "all_labels"
        value = [1, 2]


    class Chooses(Clicker):
        feedback_kind = "choice"
        document, position = -1, -1

        def __call__(self, query, shown, rng):
            return Choice(self.document, self.position)


    class ChoosesOutside(Chooses):
        document = 10_000


    class ChoosesElsewhere(Chooses):
        position = 0

        def __call__(self, query, shown, rng):
            return Choice(int(shown[1]), 0)


    class NoneClicks(Clicker):
        def __call__(self, query, shown, rng):
            return None


    class WritesQuery(Clicker):
        def __call__(self, query, shown, rng):
            query.labels[:] = 4
            return Clicks(np.zeros(len(shown), dtype=bool), len(shown) - 1)


    class NoInit:
        feedback_kind = "clicks"

        def __call__(self, query, shown, rng):
            return None
''')


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def one_line_error(capsys, argv, code: int = 2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith("olr: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def run_cli(argv, cwd, **env):
    """``olr ARGV`` in a fresh process, as a user types it: (exit code, stdout, stderr)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    done = subprocess.run([sys.executable, "-m", "olr_core.cli", *argv], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


# -- 1. plug-ins run against read-only data ------------------------------------------------------------------

def test_a_plugin_that_writes_into_its_data_is_stopped_at_the_line_that_writes(hostile, capsys):
    err = one_line_error(capsys, ["run", "-a", "hostile.py:Mutate", "-T", "20", "--no-store"])
    assert "your ranker hostile.py:Mutate's start raised ValueError('assignment destination is read-only')" in err
    assert f"{hostile / 'hostile.py'}:10" in err and "copy it first" in err


def test_a_mutating_plugin_before_pdgd_leaves_pdgd_bit_identical_to_pdgd_alone(hostile, tmp_path):
    alone = ResultStore(tmp_path / "alone")
    pdgd = RunSpec("pdgd", rounds=60, seed=3)
    key = run_grid([pdgd], alone)[0]
    shared = ResultStore(tmp_path / "shared")
    run_grid([RunSpec("hostile.py:SneakyMutate", rounds=60, seed=3), pdgd], shared)
    a, b = alone.load(key)[1].arrays(), shared.load(key)[1].arrays()
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


def test_a_plugin_that_unlocks_its_view_is_caught_after_the_run_and_the_next_run_gets_clean_data(hostile, tmp_path):
    pdgd = RunSpec("pdgd", rounds=60, seed=3)
    alone = ResultStore(tmp_path / "alone")
    key = run_grid([pdgd], alone)[0]
    with pytest.raises(PluginError, match="changed the data of synth-mq fold 1 it was lent read-only"):
        run_grid([RunSpec("hostile.py:Unlocks", rounds=20, seed=3)], ResultStore(tmp_path / "breached"))
    after = ResultStore(tmp_path / "after")
    run_grid([pdgd], after)
    a, b = alone.load(key)[1].arrays(), after.load(key)[1].arrays()
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


def test_a_plugin_that_unlocks_the_cached_query_tables_cannot_reach_the_next_run(hostile, tmp_path):
    """The query tables a split caches (RankingData.padded: not in the data's fingerprint) are read-only, and
    dropped after every plug-in's run, so even a plug-in that switches their flag back on poisons no later run."""
    pdgd = RunSpec("pdgd", rounds=60, seed=3)
    alone = ResultStore(tmp_path / "alone")
    key = run_grid([pdgd], alone)[0]
    shared = ResultStore(tmp_path / "shared")
    run_grid([RunSpec("hostile.py:UnlocksTables", rounds=20, seed=3), pdgd], shared)
    a, b = alone.load(key)[1].arrays(), shared.load(key)[1].arrays()
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


def test_the_cached_query_tables_are_read_only():
    from .conftest import tiny_data

    index, mask = tiny_data().padded()
    assert not index.flags.writeable and not mask.flags.writeable


def test_a_user_plugin_that_writes_the_labels_is_stopped(hostile, capsys):
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-c", "hostile.py:WritesQuery", "-T", "5", "--no-store"])
    assert "your user hostile.py:WritesQuery's __call__ raised ValueError" in err and "read-only" in err


def test_read_only_views_copy_nothing():
    from .conftest import tiny_data

    data = tiny_data()
    view = read_only_data(data)
    assert np.shares_memory(view.features, data.features) and not view.features.flags.writeable
    assert data.features.flags.writeable and read_only_data(view) is view


# -- 2. every value a plug-in returns is checked; its errors are one line ------------------------------------

@pytest.mark.parametrize("ranker, expected", [
    ("Short", "score returned shape (3882,) for 3883 documents; it must return one score per document"),
    ("Scalar", "score returned a scalar for 3883 documents"),
    ("Repeat", "rank shows document 0 10 times; a ranking lists each document at most once"),
    ("Past", "rank returned document "),
    ("LearnRaises", "learn raised KeyError('x') at "),
    ("LearnExits", "learn raised SystemExit(3) at "),
])
def test_a_ranker_breaking_the_protocol_gets_one_line_naming_it_and_the_method(hostile, capsys, ranker, expected):
    err = one_line_error(capsys, ["run", "-a", f"hostile.py:{ranker}", "-T", "20", "--no-store"])
    assert f"your ranker hostile.py:{ranker}'s {expected}" in err


@pytest.mark.parametrize("user, expected", [
    ("LongClicks", "returned clicks of shape (12,) for 10 shown documents"),
    ("TwoClicks", "returned a click of 2; clicks are True/False (or 0/1)"),
    ("MinusClicks", "returned a click of -1"),
    ("HalfClicks", "returned a click of 0.5"),
    ("NoneClicks", "returned NoneType; a click user returns olr_core.users.Clicks"),
    ("NoInit", "cannot be built as NoInit(max_grade=2, cutoff=10)"),
])
def test_a_user_breaking_the_protocol_gets_one_line_naming_it(hostile, capsys, user, expected):
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-c", f"hostile.py:{user}", "-T", "20", "--no-store"])
    assert f"your user hostile.py:{user}" in err and expected in err


@pytest.mark.parametrize("user, expected", [
    ("LastPast", "returned last_examined=15 for 10 shown documents; it is the last position the user examined, an "
                 "integer from 0 to 9 (-1: none)"),
    ("LastNegative", "returned last_examined=-2 for 10 shown documents"),
    ("LastFloat", "returned last_examined=9.0 for 10 shown documents"),
    ("LastAboveClick", "returned a click at position 2 below last_examined=1; a clicked document was examined"),
])
def test_a_users_last_examined_position_is_checked(hostile, capsys, user, expected):
    err = one_line_error(capsys, ["run", "-a", "dbgd_dsp", "-c", f"hostile.py:{user}", "-T", "20", "--no-store"])
    assert f"your user hostile.py:{user}'s __call__ {expected}" in err


@pytest.mark.parametrize("ranker, user, expected", [
    ("topk_squared", "TopSeven", "returned a grade of 7; grades are integers 0 .. 2"),
    ("topk_squared", "TopThree", "returned labels of shape (3,) for the top 1 shown document(s); give one grade each"),
    ("topk_squared", "TopHalf", "returned a grade of 0.5; grades are integers 0 .. 2"),
    ("listnet_full", "AllTwo", "returned labels of shape (2,) for the query's "),
    ("random", "ChoosesOutside", "returned document=10000; it is an integer from 0 to "),
    ("random", "ChoosesElsewhere", "returned document "),
])
def test_a_label_or_choice_users_feedback_is_checked(hostile, capsys, ranker, user, expected):
    err = one_line_error(capsys, ["run", "-a", ranker, "-c", f"hostile.py:{user}", "-T", "20", "--no-store"])
    assert f"your user hostile.py:{user}'s __call__ {expected}" in err
    assert user != "ChoosesElsewhere" or "at position 0, where document " in err


@pytest.mark.parametrize("user", ["IntegerClicks", "ListClicks"])
def test_clicks_given_as_zeros_and_ones_or_a_list_are_taken_as_clicks(hostile, capsys, user):
    assert main(["run", "-a", "pdgd", "-c", f"hostile.py:{user}", "-T", "20", "--no-store", "--json"]) == 0


def test_weights_that_do_not_fit_the_reference_or_are_not_finite_are_one_line(hostile, capsys):
    err = one_line_error(capsys, ["run", "-a", "hostile.py:ShortWeights", "-T", "20", "--no-store", "--reference",
                                  "offline_ranknet"])
    assert "ShortWeights: its weights() give 3 numbers, the reference weights 46 (one per feature)" in err
    err = one_line_error(capsys, ["run", "-a", "hostile.py:NanWeights", "-T", "20", "--no-store"])
    assert "hostile.py:NanWeights on synth-mq fold 1, seed 0: its weights() returned non-finite values" in err
    assert "learning rate" not in err


def test_a_plugin_file_whose_helper_beside_it_is_not_importable_says_how(tmp_path, monkeypatch, capsys):
    (tmp_path / "helper_beside.py").write_text("STEP = 0.1\n")
    (tmp_path / "method.py").write_text("import helper_beside\nfrom olr_core.rankers.base import LinearRanker\n\n\n"
                                        "class M(LinearRanker):\n    pass\n")
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, ["run", "-a", "method.py:M", "-T", "5", "--no-store"])
    assert f"helper_beside lies beside it in {tmp_path}" in err and f"run with PYTHONPATH={tmp_path}" in err


def test_a_plugin_file_that_exits_while_imported_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "script.py").write_text("import sys\nsys.exit('usage: script.py ARGS')\n")
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, ["run", "-a", "script.py:M", "-T", "5", "--no-store"])
    assert "script.py: importing it failed (SystemExit: usage: script.py ARGS)" in err


def test_a_ranker_without_the_optional_weights_runs_and_one_without_score_is_refused_when_loaded(hostile, capsys):
    assert main(["run", "-a", "hostile.py:FeatureSum", "-T", "20", "--no-store", "--json"]) == 0
    capsys.readouterr()
    assert main(["run", "-a", "hostile.py:FeatureSum", "-T", "20", "--no-store", "--reference",
                 "offline_ranknet"]) == 0
    capsys.readouterr()
    err = one_line_error(capsys, ["run", "-a", "hostile.py:NoScore", "-T", "20", "--no-store"])
    assert "has no method score" in err
    with pytest.raises(PluginError, match="has no method score"):
        RunSpec("hostile.py:NoScore")


def test_an_exception_in_a_worker_process_is_the_same_one_line(hostile):
    (hostile / "g.yml").write_text("algorithms: [hostile.py:LearnRaises, random]\nrounds: 20\nseeds: 2\n")
    code, out, err = run_cli(["grid", "g.yml", "--jobs", "2", "--results", "r"], hostile)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert f"your ranker hostile.py:LearnRaises's learn raised KeyError('x') at {hostile / 'hostile.py'}:" in err



EXITS = """import os
from olr_core.rankers.base import LinearRanker


class Exits(LinearRanker):
    def learn(self, query, display, feedback):
        os._exit(3)


def exiting_data(fold):
    os._exit(4)
"""


@pytest.mark.parametrize("argv, expected", [
    (["run", "-a", "exits.py:Exits", "-T", "20", "--no-store"], "your ranker exits.py:Exits's learn raised "),
    (["run", "-a", "pdgd", "-d", "exits.py:exiting_data", "-T", "20", "--no-store"],
     "your data set exits.py:exiting_data's call raised "),
])
def test_a_plugin_calling_os_exit_is_one_line_naming_it(tmp_path, argv, expected):
    (tmp_path / "exits.py").write_text(EXITS)
    code, _, err = run_cli(argv, tmp_path)
    assert code == 2 and err.count("\n") == 1 and expected in err and "os._exit(" in err, (code, err)
    assert f"{tmp_path / 'exits.py'}:" in err


def test_a_plugin_calling_os_exit_in_a_grid_worker_is_one_line_naming_it(tmp_path):
    (tmp_path / "exits.py").write_text(EXITS)
    (tmp_path / "g.yml").write_text("algorithms: [exits.py:Exits, random]\nrounds: 20\nseeds: 2\n")
    code, _, err = run_cli(["grid", "g.yml", "--jobs", "2", "--results", "r"], tmp_path)
    assert code == 2 and err.count("\n") == 1 and "your ranker exits.py:Exits's learn raised " in err, (code, err)
    assert "os._exit(3)" in err

def test_the_key_hashes_the_helper_modules_a_plugin_imports(tmp_path, monkeypatch):
    package = tmp_path / "mine"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("STEP = 0.1\n")
    (package / "deeper.py").write_text("from . import helper\n")
    (package / "method.py").write_text(textwrap.dedent('''
        from olr_core.rankers.base import LinearRanker
        from .deeper import helper


        class Stepper(LinearRanker):
            def learn(self, query, display, feedback):
                self.w = self.w + helper.STEP
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    key = RunSpec("mine.method:Stepper", rounds=5).key()
    for name in list(sys.modules):
        if name.startswith("mine"):
            del sys.modules[name]
    (package / "helper.py").write_text("STEP = 0.2\n")
    assert RunSpec("mine.method:Stepper", rounds=5).key() != key


# -- 3. a failed page never overwrites the built one --------------------------------------------------------

@pytest.fixture
def faulty_book(tmp_path, monkeypatch):
    """A book of one page that fails when seconds is 13; its built page and an -o target already exist."""
    (tmp_path / "_config.yml").write_text("title: t\n")
    (tmp_path / "notebooks").mkdir()
    _timing_notebook(tmp_path / "notebooks" / "bad.md", "if seconds == 13:\n    raise KeyError('the planted fault')")
    (tmp_path / "notebooks" / "manifest.yml").write_text(
        "notebooks:\n  - {notebook: bad.md, profiles: {quick: {}, paper: {}}}\nranges:\n  seconds: {min: 1}\n")
    (tmp_path / "book" / "generated").mkdir(parents=True)
    for built in (tmp_path / "book" / "generated" / "bad.ipynb", tmp_path / "x.ipynb"):
        built.write_bytes(b"the built page")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_failed_only_page_leaves_the_built_page_unchanged(faulty_book, capsys, monkeypatch):
    monkeypatch.setattr("olr_book.build.compile_shared_kernels", lambda: 0.0)     # (no kernels on this page)
    assert main(["book", "--only", "bad", "-p", "seconds=13", "--no-build"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("olr: error: page bad failed") and "KeyError: 'the planted fault'" in err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert (faulty_book / "book" / "generated" / "bad.ipynb").read_bytes() == b"the built page"
    assert not list((faulty_book / "book" / "generated").glob(".*"))          # no temporary file left
    assert main(["book", "--only", "bad", "-p", "seconds=12", "--no-build"]) == 0      # success replaces it
    assert b"How this page was produced" in (faulty_book / "book" / "generated" / "bad.ipynb").read_bytes()


def test_a_failed_standalone_notebook_leaves_its_output_unchanged_in_one_line(faulty_book):
    code, out, err = run_cli(["notebook", "bad", "-p", "seconds=13", "-o", "x.ipynb"], faulty_book)
    ours = [line for line in err.splitlines() if not line.startswith("[IPKernelApp]")]   # (the kernel's own log)
    assert code == 1 and len(ours) == 1 and "Traceback" not in err, err
    err = ours[0]
    assert "page bad failed in cell 3: KeyError: 'the planted fault'" in err and "x.ipynb was left as it was" in err
    assert (faulty_book / "x.ipynb").read_bytes() == b"the built page"
    kept = Path(err.rsplit("the failed notebook is ", 1)[1].strip())
    assert kept.exists()


@pytest.mark.parametrize("argv", [["book", "--only", "bad", "-p", "seconds=-1", "--no-build"],
                                  ["notebook", "bad", "-p", "seconds=0", "-o", "x.ipynb"]])
def test_page_parameters_out_of_their_declared_range_are_refused_before_execution(faulty_book, capsys, argv):
    err = one_line_error(capsys, argv)
    assert "bad: parameter seconds=" in err and "seconds must be >= 1; nothing was executed" in err
    assert (faulty_book / "x.ipynb").read_bytes() == b"the built page"


def test_the_books_own_pages_declare_rounds_and_seeds_of_at_least_one(tmp_path, monkeypatch, capsys):
    import shutil

    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    monkeypatch.chdir(tmp_path)
    assert "rounds must be >= 1" in one_line_error(capsys, ["book", "--only", "dsp_table2", "-p", "rounds=-1",
                                                            "--no-build"])
    assert "seeds must be >= 1" in one_line_error(capsys, ["notebook", "dsp_table2", "-p", "seeds=0", "-o",
                                                           "x.ipynb"])
    assert not (tmp_path / "x.ipynb").exists() and not (tmp_path / "book" / "generated").exists()



@pytest.mark.parametrize("argv, expected", [
    (["-p", "datasets=[]", "-p", "real_datasets=[]"], "parameters datasets=[] and real_datasets=[] leave the page "
                                                      "no data set to run"),
    (["-p", "data_dir=[1,2]"], "parameter data_dir=[1, 2] has the wrong type (expected a string"),
])
def test_page_parameters_that_leave_no_data_set_or_give_a_folder_as_a_list_are_one_line(capsys, tmp_path, argv,
                                                                                          expected, monkeypatch):
    monkeypatch.setenv("OLR_DATA_DIR", str(tmp_path))                      # (no real data set there)
    err = one_line_error(capsys, ["notebook", "baselines", *argv, "-o", str(tmp_path / "x.ipynb")])
    assert f"baselines: {expected}" in err and not (tmp_path / "x.ipynb").exists()


@pytest.mark.parametrize("line, expected", [
    ("datasets: []", "grid option datasets is empty; list at least one (e.g. datasets: [synth-mq])"),
    ("datasets: [[1, 2]]", "grid option datasets holds [1, 2], which is not a name"),
    ("click_models: []", "grid option click_models is empty"),
    ("folds: []", "grid option folds is empty"),
])
def test_a_grid_list_that_is_empty_or_holds_no_names_is_one_line_naming_the_key(tmp_path, capsys, line, expected):
    (tmp_path / "g.yml").write_text(f"algorithms: [random]\nrounds: 5\n{line}\n")
    assert expected in one_line_error(capsys, ["grid", str(tmp_path / "g.yml"), "--results", str(tmp_path / "r")])

# -- 4. data, click logs and click-model names ---------------------------------------------------------------

def _letor_folder(folder: Path, test_label: int = 1, feature_id: int = 2) -> Path:
    folder.mkdir()
    for split in ("train", "vali", "test"):
        lines = [f"{(d + q) % 3} qid:{q} 1:{d / 5:.2f} {feature_id}:{(q + d) % 4 / 4:.2f}"
                 for q in range(6) for d in range(5)]
        if split == "test":
            lines[3] = f"{test_label} qid:1 1:0.5 2:0.5"
        (folder / f"{split}.txt").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("label", [7, 1000])
def test_a_letor_label_outside_the_grade_tables_is_refused_with_file_and_line(tmp_path, capsys, label):
    folder = _letor_folder(tmp_path / "mine", test_label=label)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-d", str(folder), "-T", "5", "--no-store"])
    assert f"{folder / 'test.txt'}, line 4: relevance label {label} is above the highest grade 4" in err


def test_the_grade_table_is_the_data_sets_not_one_files(tmp_path):
    from olr_core.data.registry import _own_fold, get_spec

    folder = _letor_folder(tmp_path / "mine", test_label=3)
    with pytest.warns(UserWarning, match="grade 3 appears in the test split"):
        fold = _own_fold(get_spec(str(folder)), 1)
    assert fold.train.max_grade == fold.vali.max_grade == fold.test.max_grade == fold.max_grade == 3


def test_a_huge_feature_id_is_refused_without_allocating(tmp_path, capsys):
    folder = _letor_folder(tmp_path / "mine", feature_id=999_999)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-d", str(folder), "-T", "5", "--no-store"])
    assert f"{folder / 'train.txt'}, line 1: feature id 999999 is above 10,000" in err



def _graded_folder(folder: Path, grade) -> Path:
    """A LETOR folder whose document d of query q in split s has grade ``grade(s, q, d)``."""
    folder.mkdir()
    for split in ("train", "vali", "test"):
        (folder / f"{split}.txt").write_text("".join(f"{grade(split, q, d)} qid:{q} 1:{d / 5:.2f} 2:{q / 6:.2f}\n"
                                                     for q in range(6) for d in range(5)))
    return folder


def test_a_data_set_whose_grades_are_all_zero_is_refused_naming_the_folder_and_nothing_is_stored(tmp_path, capsys):
    folder = _graded_folder(tmp_path / "zeros", lambda split, q, d: 0)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-d", str(folder), "-T", "20", "--results",
                                  str(tmp_path / "r")])
    assert f"data set {folder}: every relevance grade in fold 1 is 0" in err and "grade of 1 or more" in err
    assert not list((tmp_path / "r").rglob("*.npz"))


def test_an_evaluation_split_without_a_relevant_document_is_refused_naming_the_split(tmp_path, capsys):
    folder = _graded_folder(tmp_path / "no_test", lambda split, q, d: 0 if split == "test" else d % 3)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-d", str(folder), "-T", "20", "--no-store"])
    assert f"data set {folder}: its test split (fold 1) has no query with a relevant document" in err


def test_queries_without_a_relevant_document_are_skipped_so_the_run_is_finite_and_passes_validation(tmp_path):
    """The store sets aside a run whose offline NDCG is NaN; a data set with some unjudged queries gives none."""
    folder = _graded_folder(tmp_path / "some", lambda split, q, d: 0 if q % 2 else d % 3)
    store = ResultStore(tmp_path / "r")
    _, trace = store.load(run_grid([RunSpec("pdgd", dataset=str(folder), rounds=30, seed=1)], store)[0])
    assert np.isfinite(trace.offline_ndcg).all() and 0 < trace.offline_ndcg.max() <= 1


def test_a_byte_order_mark_opening_a_letor_file_is_dropped(tmp_path):
    """Editors on Windows may open a UTF-8 file with a BOM; the data are those of the same file without it."""
    from olr_core.data import letor

    text = b"2 qid:1 1:0.5 2:1\n0 qid:1 1:0.1 2:0\n1 qid:2 1:0.3 2:0.2\n"
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf" + text)
    (tmp_path / "plain.txt").write_bytes(text)
    with_bom, plain = letor.parse_letor(tmp_path / "bom.txt"), letor.parse_letor(tmp_path / "plain.txt")
    assert with_bom.labels.tolist() == plain.labels.tolist() == [2, 0, 1]
    assert with_bom.features.tobytes() == plain.features.tobytes() and with_bom.qids.tolist() == ["1", "2"]

UNREADABLE = "not a click log written by olr (a .npz archive"


def test_a_feature_matrix_beyond_the_memory_cap_is_refused_before_allocating(tmp_path, monkeypatch):
    from olr_core.data import letor

    monkeypatch.setattr(letor, "MAX_DENSE_BYTES", 1000)
    (tmp_path / "wide.txt").write_text("".join(f"1 qid:{i} 1:0.5 200:1\n" for i in range(3)))
    with pytest.raises(letor.DataFormatError, match="3 documents x 200 features would take 0.0 GB"):
        letor.parse_letor(tmp_path / "wide.txt")


def _log(path: Path, labels, clicks=None) -> str:
    labels = np.asarray(labels)
    np.savez(path, labels=labels, clicks=np.zeros(labels.shape, bool) if clicks is None else clicks)
    return str(path)


@pytest.mark.parametrize("make, expected", [
    (lambda p: _log(p, np.zeros((0, 10), int)), "no session shows a document"),
    (lambda p: _log(p, np.full((5, 10), -1)), "no session shows a document"),
    (lambda p: _log(p, np.r_[np.ones((5, 10), int), [[1000] * 10]]), "grade 1000 is outside -1 .. 4"),
    (lambda p: _log(p, np.full((5, 10), 1.5)), "grade 1.5 is not an integer"),
    (lambda p: _log(p, np.ones((5, 10), int), np.full((5, 10), 2)), "clicks must be True/False"),
    (lambda p: (p.write_bytes(b""), str(p))[1], UNREADABLE),
    (lambda p: (p.write_bytes(b"garbage, not an archive"), str(p))[1], UNREADABLE),
    (lambda p: (p.write_bytes(Path(_log(p, np.ones((50, 10), int))).read_bytes()[:300]), str(p))[1],
     UNREADABLE),
    (lambda p: (np.savez(p, other=np.ones(3)), str(p))[1], "it has no array labels, clicks"),
])
def test_olr_fit_on_a_broken_log_says_what_is_wrong_in_one_line(tmp_path, capsys, make, expected):
    path = make(tmp_path / "log.npz")
    err = one_line_error(capsys, ["fit", path, "-m", "pbm"])
    assert expected in err and "allow_pickle" not in err


def test_a_click_log_name_without_npz_is_refused_before_the_run(tmp_path, capsys):
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-T", "5", "--no-store", "--click-log", str(tmp_path / "x.txt")])
    assert "name a .npz file" in err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("user, expected", [("dbn:gamma=0.5,gamma=0.7", "gives gamma twice (0.5 and 0.7)"),
                                            ("dbn:navigational,informational", "names two presets")])
def test_a_click_model_given_a_parameter_twice_is_refused(capsys, user, expected):
    assert expected in one_line_error(capsys, ["run", "-a", "pdgd", "-c", user, "-T", "5", "--no-store"])


DATA_PLUGINS = textwrap.dedent('''
    import sys

    import numpy as np
    from olr_core.data.ranking_data import RankingData


    def broken(fold):
        raise RuntimeError('no network')


    def exits(fold):
        sys.exit(2)


    def _data(labels, features=None, max_grade=2):
        labels = np.asarray(labels)
        features = np.random.default_rng(0).random((len(labels), 4)) if features is None else features
        return RankingData(features, labels, np.arange(0, len(labels) + 1, 5), np.arange(len(labels) // 5), max_grade)


    def nan_feature(fold):
        features = np.random.default_rng(0).random((50, 4))
        features[3, 1] = np.nan
        return _data(np.arange(50) % 3, features)


    def float_grades(fold):
        return _data(np.linspace(0, 2, 50))


    def above_declared(fold):
        return _data(np.r_[4, np.arange(49) % 2], max_grade=1)


    def whole_floats(fold):
        return _data((np.arange(50) % 3).astype(float))
''')


@pytest.mark.parametrize("function, expected", [
    ("broken", "your data set mydata.py:broken's call raised RuntimeError('no network') at "),
    ("exits", "your data set mydata.py:exits's call raised SystemExit(2) at "),
    ("nan_feature", "its train split has a non-finite feature (NaN or inf) at document 3; replace it by a number"),
    ("float_grades", "its train split has grade 0.0408163; grades must be integers 0 .. 2"),
    ("above_declared", "its train split has grade 4; grades must be integers 0 .. 1, the max_grade it declares"),
])
def test_a_data_plugin_that_raises_or_returns_bad_data_is_one_line(tmp_path, monkeypatch, capsys, function,
                                                                    expected):
    (tmp_path / "mydata.py").write_text(DATA_PLUGINS)
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-d", f"mydata.py:{function}", "-T", "5", "--no-store"])
    assert expected in err


def test_a_data_plugins_whole_float_grades_are_taken_as_integers(tmp_path, monkeypatch):
    from olr_core.data.registry import load_fold

    (tmp_path / "mydata.py").write_text(DATA_PLUGINS)
    monkeypatch.chdir(tmp_path)
    fold = load_fold("mydata.py:whole_floats")
    assert fold.train.labels.dtype == np.int64 and fold.max_grade == 2


# -- 5. budgets before spending -------------------------------------------------------------------------------

def test_a_claims_request_far_beyond_the_budget_says_what_it_plans_and_waits_for_yes(tmp_path, capsys, monkeypatch):
    import time

    import olr_core.reproductions.verdicts as verdicts

    monkeypatch.setattr(verdicts, "claim_records", lambda *a, **k: pytest.fail("the claims' runs were started"))
    started = time.perf_counter()
    err = one_line_error(capsys, ["claims", "dsp", "--profile", "tiny", "--seeds", "100000", "--results",
                                  str(tmp_path / "r")])
    assert time.perf_counter() - started < 20
    assert "plans 24,600,000 runs (" in err and "CPU hours" in err and "GB of memory" in err and "--yes" in err
    assert not (tmp_path / "r").exists()


def test_a_grid_beyond_the_budget_is_refused_before_its_runs_are_described(tmp_path, capsys, monkeypatch):
    import olr_core.experiments.spec as spec

    monkeypatch.setattr(spec, "expand_grid", lambda grid: pytest.fail("the grid was expanded"))
    (tmp_path / "big.yml").write_text("algorithms: [random, pdgd]\nclick_models: [perfect, dbn]\nseeds: 6000\n"
                                      "rounds: 10\n")
    err = one_line_error(capsys, ["grid", str(tmp_path / "big.yml"), "--results", str(tmp_path / "r")])
    assert "plans 24,000 runs (240,000 rounds)" in err and "beyond the limit of 20,000 runs" in err


def test_a_plan_counts_cpu_time_and_memory():
    from olr_core.budget import BYTES_PER_WORKER, Plan

    plan = Plan(runs=100, rounds=3_600_000, longest=50_000, workers=2)
    assert plan.cpu_hours == pytest.approx(1.0) and not plan.over()
    # 100 planned runs (4,096 B), two 50,000-round runs (48 B/round), two worker processes
    assert plan.memory_gb == pytest.approx(0.0052096 + 2 * BYTES_PER_WORKER / 1e9)
    assert Plan(100, 3_600_000, 50_000, workers=1).memory_gb == pytest.approx(0.0028096)   # (in-process)
    assert Plan(1, 10**11, 10**8).over() == ["cpu_hours", "memory_gb"]



def test_jobs_are_capped_by_cores_and_runs_and_counted_in_the_memory_check(tmp_path, monkeypatch, capsys):
    from olr_core.experiments import runner
    from olr_core.experiments.spec import grid_plan
    from olr_core.settings import worker_count

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert (worker_count(8), worker_count(8, tasks=2), worker_count(-1), worker_count(-1, tasks=1)) == (4, 2, 4, 1)
    assert grid_plan({"algorithms": ["random"], "seeds": 2}, jobs=8).workers == 2
    assert grid_plan({"algorithms": ["random"], "seeds": 100, "rounds": 10}, jobs=100).workers == 4
    started = []
    monkeypatch.setattr(runner, "_worker_pool", lambda workers: started.append(workers))
    monkeypatch.setattr(runner, "_execute_keyed", lambda spec, data_dir, *a: started.append("in-process"))
    list(runner._iterate(["one run"], 8, None, None))
    assert started == ["in-process"]                       # (one run: no pool of 8 started for it)


@pytest.mark.parametrize("value, expected", [("0", "parameter jobs=0 is invalid"),
                                             ("-5", "jobs must be >= -1")])
def test_the_page_parameter_jobs_has_a_range(capsys, tmp_path, value, expected):
    err = one_line_error(capsys, ["notebook", "baselines", "-p", f"jobs={value}", "-o", str(tmp_path / "x.ipynb")])
    assert f"baselines: {expected}" in err or f"baselines: parameter jobs={value} is out of range: {expected}" in err
    assert "nothing was executed" in err

def test_a_horizon_of_a_billion_rounds_is_refused_before_allocating(capsys, monkeypatch):
    import olr_core.experiments.runner as runner

    monkeypatch.setattr(runner, "run_online", lambda *a, **k: pytest.fail("the run was started"))
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-T", "1000000000", "--no-store"])
    assert "rounds=1,000,000,000 is too long for one run" in err and "at most 10,000,000" in err


# -- 6. the store survives its environment --------------------------------------------------------------------

def _refuse_writes_under(monkeypatch, folder: Path, code: int) -> None:
    """Every write under ``folder`` fails with ``code`` (EROFS, ENOSPC): chmod does not stop root, so the
    file-system calls the store and the quarantine use are patched instead, for any user."""
    import errno

    def inside(path) -> bool:
        return str(Path(path).resolve()).startswith(str(folder.resolve()))

    def refusing(original):
        def call(*args, **kwargs):
            if any(isinstance(a, (str, Path)) and inside(a) for a in args[:2]):
                raise OSError(code, os.strerror(code), str(args[0]))
            return original(*args, **kwargs)
        return call

    for owner, name in ((Path, "mkdir"), (Path, "write_bytes"), (os, "replace"), (np, "savez_compressed")):
        monkeypatch.setattr(owner, name, refusing(getattr(owner, name)))
    assert errno.errorcode[code]


def test_a_full_disk_is_one_line_and_leaves_no_temporary_file(tmp_path, capsys, monkeypatch):
    import errno

    import olr_core.experiments.store as store_module

    results = tmp_path / "r"
    assert main(["run", "-a", "random", "-T", "10", "--results", str(results), "--json"]) == 0
    capsys.readouterr()
    original = store_module.np.savez_compressed

    def fills_the_disk(path, **arrays):
        Path(path).write_bytes(b"")                      # the file is opened, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module.np, "savez_compressed", fills_the_disk)
    err = one_line_error(capsys, ["run", "-a", "random", "-T", "11", "--results", str(results)])
    assert "cannot write the run random (" in err and "no space is left on the device" in err and "--results" in err
    assert not list(results.glob("*/*.tmp.npz")) and len(list(results.glob("*/*.npz"))) == 1
    monkeypatch.setattr(store_module.np, "savez_compressed", original)
    assert ResultStore(results).check()["readable"] == 1


def test_a_read_only_store_serves_its_runs_and_refuses_new_ones_before_computing(tmp_path, capsys, monkeypatch):
    import errno

    import olr_core.experiments.runner as runner

    results = tmp_path / "r"
    assert main(["run", "-a", "random", "-T", "10", "--results", str(results), "--json"]) == 0
    stored = capsys.readouterr().out
    (results / "zz").mkdir()
    (results / "zz" / "zz0123.npz").write_bytes(b"truncated")
    _refuse_writes_under(monkeypatch, results, errno.EROFS)
    assert main(["run", "-a", "random", "-T", "10", "--results", str(results), "--json"]) == 0
    assert capsys.readouterr().out == stored                                       # read, not recomputed
    monkeypatch.setattr(runner, "run_online", lambda *a, **k: pytest.fail("computed for a read-only store"))
    err = one_line_error(capsys, ["run", "-a", "random", "-T", "12", "--results", str(results)])
    assert f"the results store {results} cannot be written (the file system is read-only)" in err
    (tmp_path / "g.yml").write_text("algorithms: [random]\nrounds: 13\n")
    assert "cannot be written" in one_line_error(capsys, ["grid", str(tmp_path / "g.yml"), "--results", str(results)])
    assert main(["store", "check", "--results", str(results)]) == 0
    report = capsys.readouterr().out
    assert "1 readable run(s), 1 set aside now" in report and "left in place (it could not be moved" in report


def test_store_check_removes_the_leftovers_of_unfinished_writes_only(tmp_path, capsys):
    results = tmp_path / "r"
    (results / "ab").mkdir(parents=True)
    dead = results / "ab" / "abcdef.999999999.tmp.npz"                # a process that no longer exists
    live = results / "ab" / f"abcdef.{os.getpid()}.tmp.npz"             # a write in progress
    dead.write_bytes(b"")
    live.write_bytes(b"")
    assert main(["store", "check", "--results", str(results)]) == 0
    assert f"removed {dead} (an unfinished write)" in capsys.readouterr().out
    assert not dead.exists() and live.exists()


def test_an_unwritable_cache_is_one_warning_and_the_run_goes_on(tmp_path):
    code, out, err = run_cli(["run", "-a", "pdgd", "-d", "synth-mq-5g", "-T", "10", "--no-store"], tmp_path,
                             OLR_CACHE_DIR="/dev/null")
    assert code == 0 and "final_offline_ndcg10" in out and "Traceback" not in err
    assert err.count("\n") == 1 and "olr: warning: cannot write the parse cache in /dev/null/parsed" in err


def test_store_check_names_a_garbage_file_without_numpys_advice_to_unpickle_it(tmp_path, capsys):
    results = tmp_path / "r"
    (results / "zz").mkdir(parents=True)
    (results / "zz" / "zz0123.npz").write_bytes(b"garbage, not an archive")
    (results / "zz" / "zz4567.npz").write_bytes(b"")
    assert main(["store", "check", "--results", str(results)]) == 0
    report = capsys.readouterr().out
    assert report.count("(not a numpy archive: truncated, or a file of another kind)") == 2
    assert "allow_pickle" not in report and "pickle" not in report


def test_store_check_removes_unfinished_writes_of_cached_arrays_and_records_too(tmp_path, capsys):
    results = tmp_path / "r"
    (results / "regret").mkdir(parents=True)
    leftovers = [results / "regret" / "0123abcd.999999999.tmp.npy", results / "imports.999999999.tmp.json"]
    for path in leftovers:
        path.write_bytes(b"")
    (results / "quarantine").mkdir()
    kept = results / "quarantine" / "ab.999999999.tmp.npz.20260101-000000.000000000.1"
    kept.write_bytes(b"")
    assert main(["store", "check", "--results", str(results)]) == 0
    report = capsys.readouterr().out
    assert all(f"removed {path} (an unfinished write)" in report and not path.exists() for path in leftovers)
    assert kept.exists()                                         # (the quarantine is never emptied)


def test_a_file_where_the_stores_folder_should_be_is_named_as_such(tmp_path, capsys):
    results = tmp_path / "r"
    assert main(["run", "-a", "random", "-T", "10", "--results", str(results), "--json"]) == 0
    key = capsys.readouterr().out.split('"key": "')[1][:24]
    shard = results / key[:2]
    for stored in shard.iterdir():
        stored.unlink()
    shard.rmdir()
    shard.write_bytes(b"in the way")
    err = one_line_error(capsys, ["run", "-a", "random", "-T", "10", "--results", str(results)])
    assert f"in {shard}: a file stands where its folder should be (move that file aside)" in err


def test_a_click_log_that_cannot_be_written_is_one_line_and_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    import errno

    (tmp_path / "logs").mkdir()
    _refuse_writes_under(monkeypatch, tmp_path / "logs", errno.ENOSPC)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-T", "5", "--no-store", "--click-log",
                                  str(tmp_path / "logs" / "x.npz")])
    assert f"cannot write the click log in {tmp_path / 'logs'}: no space is left on the device" in err
    assert not list((tmp_path / "logs").iterdir())


def test_tuning_results_are_written_whole_and_a_broken_file_is_one_line(tmp_path, monkeypatch):
    import errno

    from olr_core.reproductions.pairrank import experiments

    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "r"))
    experiments.save_tuned({"pdgd": {"learning_rate": 0.5}})
    assert experiments.tuned_params()["pdgd"] == {"learning_rate": 0.5}
    _refuse_writes_under(monkeypatch, tmp_path / "r", errno.ENOSPC)
    with pytest.raises(OSError, match="cannot write the tuning results in .*: no space is left on the device"):
        experiments.save_tuned({"pdgd": {"learning_rate": 0.1}})
    assert experiments.tuned_params()["pdgd"] == {"learning_rate": 0.5} and len(list((tmp_path / "r").iterdir())) == 1
    monkeypatch.undo()
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "r"))
    experiments.tuned_path().write_text('{"pdgd": {"learning_')
    with pytest.raises(ValueError, match="pairrank_tuned.json cannot be read .*; run pairrank_tuning again"):
        experiments.tuned_params()
