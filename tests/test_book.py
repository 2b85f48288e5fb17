import json
import re
import subprocess
from pathlib import Path

import pytest

from olr_book.manifest import PROFILES, is_run_size, load_pages, read_page

ROOT = Path(__file__).resolve().parents[1]


def write_page(notebook, path: Path) -> None:
    """A notebook written as a page's text (MyST Markdown), as the book keeps its pages."""
    import jupytext

    jupytext.write(notebook, path, fmt="md:myst")


def test_manifest_lists_every_notebook_with_both_profiles():
    pages = load_pages(ROOT)
    listed = {p.notebook for p in pages}
    on_disk = {p.name for p in (ROOT / "notebooks").glob("*.md")}
    assert listed == on_disk
    for page in pages:
        params_cell = [c for c in read_page(page.path).cells if "parameters" in c.metadata.get("tags", [])]
        assert len(params_cell) == 1, page.notebook
        names = {line.split("=")[0].strip() for line in params_cell[0].source.splitlines()
                 if "=" in line and not line.startswith("#")}
        for profile in PROFILES:
            assert set(page.parameters(profile)) <= names, (page.notebook, profile)


def test_every_page_is_text_that_round_trips_through_jupytext():
    """Pages are MyST Markdown notebooks (no .ipynb committed under notebooks/): jupytext reads each one and
    writes it back to the same text, with its kernel and its parameters cell in the file."""
    import jupytext

    committed = subprocess.run(["git", "ls-files", "notebooks/*.ipynb"], capture_output=True, text=True, cwd=ROOT)
    assert committed.returncode == 0 and committed.stdout == ""
    for page in load_pages(ROOT):
        text = page.path.read_text()
        notebook = jupytext.reads(text, fmt="md:myst")
        assert jupytext.writes(notebook, fmt="md:myst") == text, page.notebook
        assert notebook.metadata["kernelspec"]["name"] == "python3", page.notebook
        assert "```{code-cell}\n:tags: [parameters]\n" in text, page.notebook


def test_run_sizes_are_written_in_the_profiles_tables_only():
    """No run size (seeds, rounds, and the sessions, samples, queries or data sample of the pages that run no
    grid) in the manifest or a parameters cell: each page names a PROFILES experiment,
    its parameters cell leaves the sizes at None, and a cell of its own resolves them when no book sets them."""
    import yaml

    assert all(is_run_size(name) for name in ("seeds", "rounds", "cosine_rounds", "sessions", "fit_sessions",
                                              "samples", "moment_samples", "queries", "sample"))
    manifest = yaml.safe_load((ROOT / "notebooks" / "manifest.yml").read_text())["notebooks"]
    for entry in manifest:
        for values in (entry.get("common") or {}, *(v or {} for v in entry["profiles"].values())):
            assert not [k for k in values if is_run_size(k)], entry["notebook"]
    for page in load_pages(ROOT):
        sizes = [name for name in page.declared if is_run_size(name)]
        assert all(page.declared[name].default is None for name in sizes), page.notebook
        if not sizes:
            continue
        assert page.sizes and "profile" in page.declared, page.notebook
        resolving = [c.source for c in read_page(page.path).cells if "run-sizes" in c.metadata.get("tags", [])]
        assert len(resolving) == 1 and f"page_sizes({page.name!r}, profile" in resolving[0], page.notebook
        assert all(f"{name}={name}" in resolving[0] for name in sizes), page.notebook
        for profile in PROFILES:
            assert all(isinstance(page.parameters(profile)[name], int) or page.parameters(profile)[name] is None
                       for name in sizes), (page.notebook, profile)


def test_page_sizes_fill_in_only_the_sizes_left_at_none(monkeypatch):
    from olr_book import page_sizes
    from olr_core.reproductions import dsp, klrank

    monkeypatch.chdir(ROOT / "notebooks")
    tiny, quick = dsp.experiments.PROFILES["tiny"]["figures"], dsp.experiments.PROFILES["quick"]["figures"]
    assert page_sizes("dsp_figure3", "tiny", seeds=None, rounds=None) == (tiny["seeds"], tiny["rounds"])
    assert page_sizes("dsp_figure3", "quick", seeds=2, rounds=None) == (2, quick["rounds"])
    assert klrank.experiments.PROFILES["quick"]["table2"]["rounds"] is None                # the whole stream, kept
    assert page_sizes("klrank_table2", "quick", seeds=None, rounds=None) == (5, None)
    with pytest.raises(ValueError, match="unknown profile 'huge'"):
        page_sizes("dsp_figure3", "huge", seeds=None)
    with pytest.raises(ValueError, match="'nope' is no page"):
        page_sizes("nope", "tiny", seeds=None)


@pytest.mark.parametrize("entry, named", [
    ("{notebook: p.md, sizes: dsp.main, profiles: {quick: {seeds: 3}, paper: {}}}",
     "sets ['seeds']: run sizes come from its sizes 'dsp.main' only"),
    ("{notebook: p.md, sizes: dsp.mian, profiles: {quick: {}, paper: {}}}", "has no experiment 'mian'"),
    ("{notebook: p.md, sizes: nobody.main, profiles: {quick: {}, paper: {}}}", "names no paper"),
    ("{notebook: p.md, profiles: {quick: {}, paper: {}}}", "run-size parameters ['seeds', 'rounds', 'sessions']"),
    ("{notebook: p.md, sizes: dsp.main, profiles: {quick: {seedz: 1}, paper: {}}}", "sets ['seedz']"),
    ("{notebook: p.md, sizes: dsp.main, profiles: {quick: {}, paper: {sessions: 9}}}",
     "sets ['sessions']: run sizes come from its sizes 'dsp.main' only"),
])
def test_a_manifest_that_writes_run_sizes_or_names_no_table_is_refused(tmp_path, entry, named):
    import nbformat

    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("profile = 'tiny'\nseeds = None\nrounds = None\nfolds = [1]\nsessions = None",
                                          metadata={"tags": ["parameters"]})]
    write_page(nb, tmp_path / "notebooks" / "p.md")
    (tmp_path / "notebooks" / "manifest.yml").write_text(f"notebooks:\n  - {entry}\n")
    with pytest.raises(ValueError, match=re.escape(named)):
        load_pages(tmp_path)


@pytest.mark.parametrize("page, paper", [("pairrank_figure6", "pairrank"), ("neural_theory", "neural"),
                                         ("dsp_figure4", "dsp")])
def test_figure_pages_plan_exactly_runs_their_claims_judge(page, paper, tmp_path, monkeypatch):
    """A page and the claims share their runs only if the page's sizes are its claims' experiment's: every run
    the page plans at the quick profile is one the paper's claims judge (so the book computes it once)."""
    from olr_book.plan import page_specs
    from olr_core.experiments.runner import spec_key
    from olr_core.plan import claim_grids

    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path))
    chosen = next(p for p in load_pages(ROOT) if p.name == page)
    planned = {spec_key(s) for s in page_specs(ROOT, chosen, "quick")}
    judged = {spec_key(s) for specs in claim_grids(paper, "quick").values() for s in specs}
    assert planned and planned <= judged


def test_importing_olr_core_imports_no_notebook_or_plotting_library():
    """The library, its command line and its experiments need neither papermill nor matplotlib/seaborn."""
    import subprocess
    import sys

    code = ("import sys, olr_core, olr_core.cli, olr_core.experiments, olr_core.claims, olr_core.plan, "
            "olr_core.reproductions.verdicts; "
            "print(sorted(m for m in ('papermill', 'matplotlib', 'seaborn', 'nbformat') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_pages_are_committed_without_outputs():
    for page in load_pages(ROOT):
        assert not any(c.get("outputs") for c in read_page(page.path).cells if c.cell_type == "code"), page.name


def test_every_toc_file_exists():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [s["file"] for part in toc["parts"] for ch in part["chapters"]
                             for s in [ch, *ch.get("sections", [])]]
    for name in files:
        generated = name.startswith("book/generated/")
        source = ROOT / "notebooks" / (Path(name).name + ".md") if generated else ROOT / (name + ".md")
        assert source.exists(), name


def test_unknown_profile():
    with pytest.raises(ValueError, match="valid: quick, paper"):
        load_pages(ROOT)[0].parameters("huge")


@pytest.fixture
def book_copy(tmp_path, monkeypatch):
    """A copy of the book's configuration and notebooks, so executed pages do not land in the checkout."""
    import shutil

    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "results"))
    return tmp_path


def _provenance(nb_path) -> str:
    nb = json.loads(nb_path.read_text())
    return next("".join(c["source"]) for c in nb["cells"] if "How this page was produced" in "".join(c["source"]))


def test_one_page_reexecutes_with_the_readers_parameters(book_copy):
    from olr_core.cli import main

    argv = ["book", "--only", "dsp_table2", "-p", "seeds=3", "-p", "rounds=60", "-p", "real_datasets=[]",
            "-p", "folds=[1]", "--no-build"]
    assert main(argv) == 0
    page = book_copy / "book" / "generated" / "dsp_table2.ipynb"
    box = _provenance(page)
    assert "| `seeds` | `3` | **your value**" in box and "| `rounds` | `60` |" in box
    assert "olr book --profile quick --only dsp_table2 -p seeds=3 -p rounds=60 -p 'real_datasets=[]' " \
        "-p 'folds=[1]'" in box
    nb = json.loads(page.read_text())
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code":
            assert ("remove-cell" in tags) == bool({"parameters", "injected-parameters", "run-sizes"} & set(tags))
            assert "remove-cell" in tags or "hide-input" in tags
    # the shared results store: 6 algorithms x 3 users x 3 seeds, as the text says and as the code ran
    assert len(list((book_copy / "results").glob("*/*.npz"))) == 6 * 3 * 3 * 2
    # one page is not the book: the whole book's wall-time record is left as it was
    assert not (book_copy / "book" / "generated" / "execution_build.json").exists()


@pytest.mark.parametrize("argv, named", [
    (["book", "--only", "dsp_table2", "-p", "seedz=3", "--no-build"], "seeds (default 1)"),
    (["book", "--only", "dsp_table2", "-p", "seeds=3.5", "--no-build"], "expected an integer"),
    (["book", "--only", "dsp_table2", "-p", "datasets=synth-mq", "--no-build"], "expected a list"),
    (["book", "--only", "nope", "--no-build"], "matches no page"),
    (["book", "-p", "seeds=3", "--no-build"], "--only"),
    (["notebook", "pairrank", "-o", "x.ipynb"], "name exactly one"),
    (["notebook", "dsp_table2", "-o", "x.ipynb", "-p", "profile=tiny"], "choose it with --profile"),
])
def test_bad_page_parameters_are_refused_before_anything_runs(book_copy, capsys, argv, named):
    from olr_core.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1
    assert not (book_copy / "book" / "generated").exists()


def test_standalone_notebook_and_page_listing(book_copy, capsys):
    from olr_core.cli import main

    out = book_copy / "mine.ipynb"
    assert main(["notebook", "click_models", "-p", "sessions=300", "-o", str(out)]) == 0
    assert "| `sessions` | `300` | **your value**" in _provenance(out)
    capsys.readouterr()
    assert main(["book", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "dsp_table2" in listing and "paper 3" in listing
    assert re.search(r"\n  seeds +default \(profile's: tiny 1\) +quick 1 +paper 3\n", listing)


def test_parameter_types_follow_the_defaults():
    from olr_book.manifest import fits

    assert fits(3, 1) and not fits(3.5, 1) and fits(3, 0.5) and not fits(True, 1)
    assert fits(["a"], ["synth-mq"]) and not fits([1], ["synth-mq"]) and fits([], ["x"])
    assert fits("/data", None) and not fits("x", [1])


def test_the_student_edition_hides_solutions_and_unknown_editions_are_refused(tmp_path):
    import shutil

    import yaml

    from olr_book.build import build_book, student_config

    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    config = yaml.safe_load(student_config(tmp_path).read_text())
    assert config["sphinx"]["config"]["hide_solutions"] is True
    # no page sources either: a page's source holds the solutions the edition hides
    assert config["sphinx"]["config"]["html_copy_source"] is False and config["html"]["use_download_button"] is False
    assert config["bibtex_bibfiles"] == yaml.safe_load((ROOT / "_config.yml").read_text())["bibtex_bibfiles"]
    with pytest.raises(ValueError, match="unknown edition 'teacher'"):
        build_book(edition="teacher")


def test_relative_data_and_results_paths_reach_the_kernels_as_absolute_paths(monkeypatch, tmp_path):
    """Kernels run in other directories: a relative OLR_DATA_DIR would silently find no real data there."""
    import os

    from olr_book.execute import BuildContext

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("OLR_DATA_DIR", "data")
    monkeypatch.setenv("OLR_RESULTS_DIR", "store")
    context = BuildContext.create(tmp_path, "quick")
    assert context.environment()["OLR_DATA_DIR"] == str(tmp_path / "data")
    assert context.environment()["OLR_RESULTS_DIR"] == str(tmp_path / "store")
    monkeypatch.delenv("OLR_DATA_DIR")
    given = BuildContext.create(tmp_path, "quick", "./data")      # --data-dir: the one value the kernels see
    assert given.data_dir == given.environment()["OLR_DATA_DIR"] == str(tmp_path / "data")
    assert "data_dir" not in given.environment() and "OLR_DATA_DIR" not in os.environ


def _glued_keys(notebook: Path) -> tuple[set, list]:
    """The literal keys a notebook glues, and the prefixes of keys it glues with an f-string."""
    import re

    source = "\n".join(c.source for c in read_page(notebook).cells if c.cell_type == "code")
    literal = set(re.findall(r'glue\(\s*"([^"{}]+)"', source))
    prefixes = re.findall(r'glue\(\s*f"([^"{]*)\{', source)
    return literal, prefixes


def test_every_cross_page_glue_reference_names_a_glued_key_with_a_format():
    """{glue:text}`page::key` needs a format (':s', ':d', ':.2f'): without one, MyST-NB splits at the
    last colon and the book build fails; and the key must be one the page's notebook glues."""
    import re

    for chapter in (ROOT / "book").glob("*.md"):
        text = chapter.read_text()
        for role, target in re.findall(r"\{glue:(\w+)\}`([^`]+)`", text):
            if "::" not in target:
                continue
            page, rest = target.split("::", 1)
            key = rest.split(":", 1)[0]
            if role == "text":
                assert ":" in rest, f"{chapter.name}: {{glue:text}}`{target}` has no format spec"
            literal, prefixes = _glued_keys(ROOT / "notebooks" / f"{Path(page).stem}.md")
            assert key in literal or any(key.startswith(p) for p in prefixes if p), f"{chapter.name}: {target}"
        for key, page in re.findall(r"```\{glue\}\s+(\S+)\s*\n:doc:\s*(\S+)", text):
            literal, prefixes = _glued_keys(ROOT / "notebooks" / f"{Path(page).stem}.md")
            assert key in literal or any(key.startswith(p) for p in prefixes if p), f"{chapter.name}: {key}"


def test_the_execution_statistics_page_lists_every_executed_page(tmp_path, monkeypatch):
    """The driver counts each page's runs (the store logs computed and reused ones) and writes the table the
    Execution statistics page includes: seconds and run counts per page, and totals."""
    from olr_book.stats import read_run_log, record_build, record_execution, write_execution_page
    from olr_core.experiments import ResultStore, expand_grid, run_grid

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "manifest.yml").write_text((ROOT / "notebooks" / "manifest.yml").read_text())
    specs = expand_grid({"algorithms": ["random", "oracle"], "rounds": 10})
    store = ResultStore(tmp_path / "r")
    monkeypatch.setenv("OLR_RUN_LOG", str(tmp_path / "first.log"))
    run_grid(specs, store)
    monkeypatch.setenv("OLR_RUN_LOG", str(tmp_path / "second.log"))
    run_grid(specs, store)
    first, second = read_run_log(tmp_path / "first.log", store), read_run_log(tmp_path / "second.log", store)
    assert (first["computed"], first["reused"], second["computed"], second["reused"]) == (2, 0, 0, 2)
    assert {label for label, _, _ in first["costliest"]} == {"random on synth-mq, 10 rounds",
                                                             "oracle on synth-mq, 10 rounds"}
    # each kind's seconds and the total are rounded to 0.1 s apart: they agree within 0.05 s per rounding
    kinds = first["costliest"]
    assert first["run_seconds"] == pytest.approx(sum(s for _, _, s in kinds), abs=0.05 * (len(kinds) + 1))
    assert second["run_seconds"] == 0 and second["costliest"] == []
    order = [page.name for page in load_pages(ROOT)]
    first_page, second_page = order[:2]
    record_execution(tmp_path, first_page, "quick", {"seeds": 1, "jobs": 2}, 12.3, first)
    record_execution(tmp_path, second_page, "quick", {"seeds": 2}, 30.0, second)
    table = write_execution_page(tmp_path, order).read_text()
    # links are doc roles from the source root: the table is included into book/execution.md,
    # and the executed pages are book/generated/PAGE
    # (named by their titles; a page's notebook name and its parameters are code, #47)
    first_link, second_link = (f"{{doc}}`/book/generated/{p}`" for p in (first_page, second_page))
    assert re.search(rf"\| {re.escape(first_link)} \| 12 \| 2 \| 0 \| \d+ \| quick \| `seeds=1` \|", table)
    assert f"| {second_link} | 30 | 0 | 2 | 0 | quick | `seeds=2` |" in table
    assert re.search(rf"\| {re.escape(first_link)} \| \d+ \| (random|oracle) on synth-mq, 10 rounds \(1, \d+ s\)",
                     table)
    assert all((ROOT / "notebooks" / f"{page}.md").exists() for page in (first_page, second_page))
    assert re.search(r"\| \*\*all 2 pages\*\* \| \*\*42\*\* \| \*\*2\*\* \| \*\*2\*\* \| \*\*\d+\*\* \|", table)
    assert "cores, Python" in table
    assert re.search(r"Code: `olr_core` [\d.]+, code fingerprint `[0-9a-f]{12}`\.", table)   # names as code, #47
    assert "add up to 0.7 minutes" in table and "minutes of wall time" not in table
    record_build(tmp_path, 2, 2, 30.0)
    written = write_execution_page(tmp_path, order).read_text()
    assert "ran 2 pages, 2 at a time, in 0.5 minutes of wall time;" in written
    record_build(tmp_path, 2, 2, 30.0, compile_seconds=16.4)
    assert ("in 0.5 minutes of wall time (its first 16 s readying numba's shared kernels: compiled on a fresh "
            "checkout, else loaded);"
            in write_execution_page(tmp_path, order).read_text())


def test_a_kind_of_run_reads_in_names_and_a_data_set_built_by_code_as_code():
    """The execution page's costliest runs (#47: "olr_core.reproductions.worlds:linear" was reader text)."""
    from olr_book.stats import kind_words

    assert kind_words("pairrank_c on mq2008, 1000 rounds") == "PairRank_C on MQ2008, 1000 rounds"
    assert (kind_words("epsilon_greedy on olr_core.reproductions.worlds:linear fold, 2000 rounds")
            == "ε-greedy RankNet on `olr_core.reproductions.worlds:linear` fold, 2000 rounds")


def test_the_provenance_box_comes_after_the_results_folded():
    """Results before parameters (#47): the box is the page's last section, a dropdown."""
    import nbformat

    from olr_book.execute import BuildContext, PageJob, for_readers, provenance_cell

    job = PageJob(BuildContext("/book", "quick", "/results"), "dsp_table2", "dsp_table2.md", {"seeds": 1}, {}, "x")
    box = "".join(provenance_cell(job, 3.0).source)
    assert box.startswith("## How this page was produced\n") and ":class: note dropdown" in box
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("seeds = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_markdown_cell("# Table 2"), nbformat.v4.new_code_cell("table")]
    for_readers(nb)
    assert "remove-cell" in nb.cells[0].metadata["tags"] and "hide-input" in nb.cells[2].metadata["tags"]


def _timing_notebook(path: Path, body: str) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("seconds = 0.0", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    write_page(nb, path)


def test_pages_run_side_by_side_but_never_beside_a_page_they_wait_for(tmp_path, monkeypatch):
    """Three pages, two at a time: b waits for a, c waits for nobody; so a and c start together and b only
    after a has ended. Each page records when it started and ended."""
    from olr_book.build import execute_pages
    from olr_book.execute import BuildContext

    (tmp_path / "_config.yml").write_text("title: t\n")
    (tmp_path / "notebooks").mkdir()
    stamp = ("import time, pathlib\nstart = time.time()\ntime.sleep(seconds)\n"
             "pathlib.Path('{name}.txt').write_text(f'{{start}} {{time.time()}}')")
    for name in "abc":
        _timing_notebook(tmp_path / "notebooks" / f"{name}.md", stamp.format(name=name))
    (tmp_path / "notebooks" / "manifest.yml").write_text(
        "notebooks:\n"
        "  - {notebook: a.md, profiles: {quick: {seconds: 3.0}, paper: {}}}\n"
        "  - {notebook: b.md, after: [a], profiles: {quick: {seconds: 0.5}, paper: {}}}\n"
        "  - {notebook: c.md, profiles: {quick: {seconds: 3.0}, paper: {}}}\n")
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "results"))
    done = execute_pages(BuildContext.create(tmp_path, "quick"), load_pages(tmp_path), {}, at_once=2)
    assert set(done) == {"a", "b", "c"} and all(d["computed"] == 0 for d in done.values())
    times = {n: [float(x) for x in (tmp_path / "notebooks" / f"{n}.txt").read_text().split()] for n in "abc"}
    assert times["c"][0] < times["a"][1] and times["a"][0] < times["c"][1]      # a and c overlapped
    assert times["b"][0] >= times["a"][1]                                        # b started after a ended
    assert (tmp_path / "book" / "generated" / "b.ipynb").exists()


def test_a_failing_page_stops_the_build_and_names_itself(tmp_path, monkeypatch, capsys):
    from olr_book.build import execute_pages, page_dependencies
    from olr_book.execute import BuildContext, PageFailedError

    (tmp_path / "_config.yml").write_text("title: t\n")
    (tmp_path / "notebooks").mkdir()
    _timing_notebook(tmp_path / "notebooks" / "bad.md", "raise ValueError('the planted fault')")
    _timing_notebook(tmp_path / "notebooks" / "later.md", "open('ran.txt', 'w').write('x')")
    (tmp_path / "notebooks" / "manifest.yml").write_text(
        "notebooks:\n"
        "  - {notebook: bad.md, profiles: {quick: {}, paper: {}}}\n"
        "  - {notebook: later.md, after: all, profiles: {quick: {}, paper: {}}}\n")
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "results"))
    pages, context = load_pages(tmp_path), BuildContext.create(tmp_path, "quick")
    assert page_dependencies(pages) == {"bad": set(), "later": {"bad"}}
    with pytest.raises(PageFailedError, match="page bad failed") as failed:
        execute_pages(context, pages, {}, at_once=2)
    assert "the planted fault" in str(failed.value)
    assert not (tmp_path / "notebooks" / "ran.txt").exists()
    with pytest.raises(ValueError, match="--pages-at-once=0 is invalid"):
        execute_pages(context, pages, {}, at_once=0)
    from olr_core.cli import main

    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["book", "--no-build"]) == 1                 # from the command line: the error, not a traceback
    err = capsys.readouterr().err
    assert err.startswith("olr: error: page bad failed") and "the planted fault" in err
    manifest = tmp_path / "notebooks" / "manifest.yml"
    manifest.write_text(manifest.read_text().replace("after: all", "after: [nope]"))
    with pytest.raises(ValueError, match="later.md waits for \\['nope'\\]"):
        load_pages(tmp_path)


def test_every_page_that_reads_tuned_parameters_waits_for_the_tuning_pages():
    """Pages side by side must not run a grid with the default parameters while the tuning page they read
    is still choosing them: a page that reads the PairRank chapter's tuning (its own notebook, or through the
    head-to-head grids or the claims) waits for pairrank_tuning, directly or through the pages it waits for,
    and one that reads the neural chapter's for neural_tuning too."""
    from olr_book.build import page_dependencies

    waits = page_dependencies(load_pages(ROOT))

    def closure(page):
        seen, todo = set(), [page]
        while todo:
            for before in waits[todo.pop()] - seen:
                seen.add(before)
                todo.append(before)
        return seen

    readers = [page for page in waits if page not in ("pairrank_tuning", "neural_tuning")
               and any(word in (ROOT / "notebooks" / f"{page}.md").read_text()
                       for word in ("tuned", "h2h.grid", "h2h.settings", "claim_records"))]   # (standings: no)
    assert {"pairrank_figure3", "neural_figure4", "head_to_head", "claims", "your_method"} <= set(readers)
    for page in readers:
        assert "pairrank_tuning" in closure(page), page
        if page.startswith("neural_") or page in ("head_to_head", "robustness", "claims", "your_method"):
            assert "neural_tuning" in closure(page), page
    assert "pairrank_tuning" in closure("neural_tuning")


def test_the_shared_kernels_are_compiled_before_the_pages_so_that_pages_load_them(capsys, monkeypatch, tmp_path):
    import subprocess
    import sys

    from olr_book.build import compile_rounds, compile_shared_kernels

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))        # an empty cache: only the warm-up can fill it
    compile_shared_kernels()
    assert "numba's shared kernels ready" in capsys.readouterr().out
    probe = ("from olr_book.build import compile_rounds\n"
             "from olr_core.rankers.dueling_compiled import play_duels, play_null_space, play_probabilistic\n"
             "from olr_core.rankers.pdgd import pdgd_round\n"
             "compile_rounds('team_draft'); compile_rounds('probabilistic'); compile_rounds('nsgd')\n"
             "compile_rounds('pdgd')\n"
             "kernels = (play_duels, play_probabilistic, play_null_space, pdgd_round)\n"
             "print(sum(sum(k.stats.cache_misses.values()) for k in kernels),"
             " sum(sum(k.stats.cache_hits.values()) for k in kernels))")
    misses, hits = map(int, subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                           check=True).stdout.split())
    assert (misses, hits) == (0, 4)              # a page's process loads all four from numba's cache
    with pytest.raises(ValueError, match="unknown kernel 'bogus'; valid: team_draft, probabilistic, nsgd, pdgd"):
        compile_rounds("bogus")


def test_a_page_that_redraws_a_papers_figure_or_table_names_the_paper_in_its_title():
    # "Figure 3" alone named three papers' figures (#47): the title says what the page shows, then whose figure
    papers = ("Wang et al. 2019", "Jia et al. 2021", "Jia and Wang 2022", "Delage 2009", "Chaudhuri and Tewari 2016")
    titles = {path.stem: re.search(r"^# (.+)$", path.read_text(), re.M).group(1)
              for path in (ROOT / "notebooks").glob("*.md")}
    assert not [t for t in titles.values() if re.match(r"(Figure|Table) \d", t)]
    numbered = {page: t for page, t in titles.items() if re.search(r"\b(Figure|Table) \d", t)}
    assert len(numbered) >= 16
    for page, title in numbered.items():
        assert re.search(rf"\(({'|'.join(papers)}), (Figure|Table) \d\)$", title), page
    assert len(set(numbered.values())) == len(numbered)
    stems = {p.stem for p in (ROOT / "notebooks").glob("*.md")}
    toc = (ROOT / "_toc.yml").read_text()
    assert all(f"book/generated/{page}" in toc for page in numbered)          # the contents still list each page
    chapters = "".join(p.read_text() for p in (ROOT / "book").glob("*.md"))
    assert set(re.findall(r"generated/(\w+)", chapters)) - {"execution_stats"} <= stems   # by file, not title
