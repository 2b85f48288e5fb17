"""The graded assignments: every autograder gives the solution full marks, the untouched stub zero and a
planted subtle error a loss on the test that names it; unsafe submissions fail with a clear message and
grading goes on; the student downloads hold no hidden test and no solution."""

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from olr_core.cli import main
from olr_core.course import (
    Limits,
    assignment_sources,
    build_assignments,
    grade_submissions,
    leaks,
    publish_student_notebooks,
    secrets,
    totals,
)

ROOT = Path(__file__).resolve().parents[1]

# assignment -> (solution text, its subtly wrong replacement, the test that must lose marks)
PLANTED = {
    "interleaving": [("first = int(rng.random() < 0.5)", "first = 0",              # ranker A always picks first
                      "team_draft.test_random_user_unbiased")],
    "dbgd": [("return w + learning_rate * u if candidate_won else np.array(w, dtype=float)",
              "return w + learning_rate * u",                                       # moves after a lost comparison too
              "dbgd_step.test_moves_only_when_candidate_wins"),
             ("u = rng.standard_normal(d)", "u = rng.uniform(-1.0, 1.0, d)",          # normalised cube: not uniform
              "dbgd_step.test_uniform_on_sphere")],
    "dsp_projection": [("basis = vt[sv > 1e-10 * max(sv.max(initial=0.0), 1e-300)]",   # rows normalised, not
                        "basis = D / np.linalg.norm(D, axis=1, keepdims=True)",         # orthogonalised
                        "projection.test_idempotent_and_orthogonal")],
    "pairrank": [("width = np.sqrt(np.einsum(", "width = (np.einsum(",              # the squared M^-1 norm
                  "certain_pairs.test_matches_reference"),
                 ("np.add.at(cover, last, -1)", "np.add.at(cover, first + 1, -1)",   # only a pair's first gap
                  "blocks.test_no_uncertain_pair_straddles_blocks")],
    "topk_gradient": [("pi = (1 - gamma) * model_top[shown_top] + gamma * k / m",
                       "pi = (1 - gamma) + gamma * k / m",                         # the wrong importance weight
                       "estimator.test_unbiased_in_expectation")],
    "click_em": [("post_e = np.where(clicks, 1.0, pe * (1 - pc) / skip)",
                  "post_e = np.where(clicks, 1.0, pe * (1 - pc))",                  # skip posterior not normalised
                  "em_step.test_small_exact_case")],
    "verdict_rule": [("p = special.stdtr(n - 1, -t)", "p = 2 * special.stdtr(n - 1, -abs(t))",   # two-sided
                      "margin_above_zero.test_matches_scipy")],
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_assignments(ROOT, tmp_path_factory.mktemp("assignments"))


def built_folder(built) -> Path:
    return next(iter(built.values())).parent


def notebook_text(built, name: str, edition: str) -> str:
    return (built[name] / edition / f"{name}.ipynb").read_text()


def submit(folder: Path, label: str, name: str, text: str) -> None:
    (folder / label).mkdir(parents=True)
    (folder / label / f"{name}.ipynb").write_text(text)


def replaced(text: str, old: str, new: str) -> str:
    """The notebook ``text`` with ``old`` replaced by ``new`` in the one code cell that holds it, once."""
    notebook = json.loads(text)
    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    hits = [i for i, source in enumerate(sources) if old in source]
    assert len(hits) == 1 and sources[hits[0]].count(old) == 1, f"the edit {old!r} must match exactly once"
    notebook["cells"][hits[0]]["source"] = sources[hits[0]].replace(old, new)
    return json.dumps(notebook)


def by_submission(rows):
    out = {}
    for row in rows:
        out.setdefault(row["submission"].split("/")[0], {})[row["test"]] = row
    return out


def test_every_assignment_has_a_planted_error():
    assert {s.stem for s in assignment_sources(ROOT)} == set(PLANTED)


def test_solution_full_marks_stub_zero_and_each_planted_error_loses_the_test_that_names_it(built, tmp_path):
    folder = tmp_path / "submissions"
    for name in PLANTED:
        solution = notebook_text(built, name, "autograder")
        submit(folder, f"solution-{name}", name, solution)
        submit(folder, f"stub-{name}", name, notebook_text(built, name, "student"))
        for i, (old, new, _) in enumerate(PLANTED[name]):
            submit(folder, f"planted{i}-{name}", name, replaced(solution, old, new))
    rows = grade_submissions(folder, built_folder(built), tmp_path / "grades.csv", Limits(test_seconds=20), jobs=2)
    graded, sums = by_submission(rows), {k.split("/")[0]: v for k, v in totals(rows).items()}
    for name, planted in PLANTED.items():
        points, possible = sums[f"solution-{name}"]
        failed = [r["feedback"] for r in graded[f"solution-{name}"].values() if r["feedback"] != "passed"]
        assert points == possible > 0 and not failed, f"{name}: the solution scored {points}/{possible}: {failed}"
        assert sums[f"stub-{name}"][0] == 0, f"{name}: the untouched stub scored {sums[f'stub-{name}']}"
        for i, (_, _, test) in enumerate(planted):
            mistake = graded[f"planted{i}-{name}"]
            assert mistake[test]["points"] == 0 and mistake[test]["feedback"] != "passed", (name, test, mistake[test])
            assert sums[f"planted{i}-{name}"][0] < possible
    feedback = graded["planted0-interleaving"]["team_draft.test_random_user_unbiased"]["feedback"]
    assert "of the wins under a random user; it should be 50 % ± 3 %" in feedback
    assert (tmp_path / "grades.csv").read_text().count("\n") == len(rows) + 1


def test_an_endless_loop_fails_within_the_per_test_limit_and_the_next_submission_is_graded(built, tmp_path):
    solution = notebook_text(built, "verdict_rule", "autograder")
    stub = notebook_text(built, "verdict_rule", "student")
    folder = tmp_path / "submissions"
    submit(folder, "a-loop", "verdict_rule", replaced(stub, '    """(p-value, verdict) of the paired one-sided t test '
                                                             'of mean(a - b) > 0."""\n    ...',
                                                             '    """loops"""\n    while True: pass'))
    submit(folder, "b-next", "verdict_rule", solution)
    started = time.perf_counter()
    rows = grade_submissions(folder, built["verdict_rule"].parent, tmp_path / "grades.csv", Limits(test_seconds=2))
    seconds = time.perf_counter() - started
    graded = by_submission(rows)
    loop = [r for r in graded["a-loop"].values() if r["test"] != "(notebook)"]
    assert loop and all(r["points"] == 0 and "within the limit of 2 s" in r["feedback"] for r in loop), loop
    feedback = [r["feedback"] for r in graded["b-next"].values()]
    assert feedback and all(f == "passed" for f in feedback), feedback
    assert seconds < 60, f"grading took {seconds:.0f} s"


MISBEHAVIOUR = {                      # the cell's new body -> what the feedback must say
    "raises": ("    raise RuntimeError('not yet')", "your code raised RuntimeError: not yet"),
    "prints": ("    print('x' * 10_000_000)", "printed more than 100,000 characters"),
    "reads": ("    print(open(TESTS + '/margin_above_zero.py').read())\n    return 0.5, True",
              "your code raised FileNotFoundError"),             # the autograder is not in the jail at all
    "writes": ("    import olr_core, os\n    open(os.path.join(os.path.dirname(olr_core.__file__), 'x.py'), 'w')\n"
               "    open(OUTSIDE, 'w').write('graded!')\n    return 0.5, True", "Read-only file system"),
    "connects": ("    import socket\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    return 0.5, True",
                 "Network is unreachable"),
}


def test_unsafe_submissions_fail_with_a_clear_message_and_grading_goes_on(built, tmp_path):
    stub = notebook_text(built, "verdict_rule", "student")
    tests = built["verdict_rule"] / "autograder" / "tests"
    outside = tmp_path / "outside.txt"
    folder = tmp_path / "submissions"
    body = '    """(p-value, verdict) of the paired one-sided t test of mean(a - b) > 0."""\n    ...'
    for label, (code, _) in MISBEHAVIOUR.items():
        code = code.replace("TESTS", repr(str(tests))).replace("OUTSIDE", repr(str(outside)))
        submit(folder, label, "verdict_rule", replaced(stub, body, '    """misbehaves"""\n' + code))
    submit(folder, "top-level-exit", "verdict_rule", replaced(stub, "import numpy as np\n", "import os\nos._exit(3)\n"))
    rows = grade_submissions(folder, built["verdict_rule"].parent, tmp_path / "grades.csv", Limits(test_seconds=5),
                             jobs=2)
    graded = by_submission(rows)
    for label, (_, message) in MISBEHAVIOUR.items():
        scored = graded[label]["margin_above_zero.test_matches_scipy"]
        assert scored["points"] == 0 and message in scored["feedback"], (label, scored)
    assert not outside.exists()
    assert all("the notebook's process ended (sys.exit, os._exit" in r["feedback"]
               for r in graded["top-level-exit"].values())


def test_the_student_downloads_hold_no_hidden_test_and_no_solution(built, tmp_path):
    zips = publish_student_notebooks(built_folder(built), tmp_path / "public")
    assert set(zips) == set(PLANTED)
    secret_texts = secrets(ROOT, built_folder(built))
    assert all(len(secret_texts[name]) >= 3 for name in PLANTED)
    assert leaks(tmp_path / "public", secret_texts) == []
    for name in PLANTED:           # the check itself finds what it must: the autograder holds both
        found = leaks(built[name] / "autograder", {name: secret_texts[name]})
        assert any("test_" in line for line in found) and any("test_" not in line for line in found), name
    shutil.make_archive(str(tmp_path / "html" / "_downloads" / "oops"), "zip", built["pairrank"] / "autograder")
    assert any(".zip:tests/" in line for line in leaks(tmp_path / "html", secret_texts)), "zip members are searched"


def test_the_cli_builds_and_grades(built, tmp_path, capsys):
    out = tmp_path / "built"
    assert main(["course", "build", "--only", "verdict_rule", "--assignments", str(out)]) == 0
    solution = (out / "verdict_rule" / "autograder" / "verdict_rule.ipynb").read_text()
    submit(tmp_path / "in", "alice", "verdict_rule", solution)
    grades = str(tmp_path / "g.csv")
    assert main(["course", "grade", str(tmp_path / "in"), "--assignments", str(out), "-o", grades]) == 0
    assert "alice/verdict_rule.ipynb: 3 / 3" in capsys.readouterr().out
    assert main(["course", "build", "--only", "nope", "--assignments", str(out)]) == 2
    assert "--only 'nope' names no assignment" in capsys.readouterr().err


def test_importing_olr_core_does_not_import_the_grader():
    code = "import sys, olr_core.cli, olr_book.build, olr_core.course; print('otter' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          check=True).stdout.strip() == "False"


def test_the_course_page_links_every_assignment_and_its_chapter_sections():
    page = (ROOT / "book" / "course.md").read_text()
    chapters = "".join(p.read_text() for p in (ROOT / "book").glob("*.md"))
    for name in PLANTED:
        row = next((line for line in page.splitlines() if f"</_build/assignments_public/{name}.zip>`" in line), None)
        assert row is not None, f"book/course.md has no download link for {name}"
        week, difficulty = row.split("|")[1].strip(), row.split("|")[-3].strip()
        assert week.isdigit() and difficulty in ("easy", "medium", "hard"), row
        for label in re.findall(r"\{ref\}`([^`]+)`", row):
            assert f"({label})=" in chapters, f"{name}: the section {label} is not labelled in book/*.md"
        source = (ROOT / "assignments" / f"{name}.py").read_text()
        assert f"(week {week}, {difficulty})" in source, f"{name}: its notebook's title disagrees with the course page"


def test_a_submission_in_a_flat_folder_sees_only_its_own_notebook(built, tmp_path):
    stub = notebook_text(built, "verdict_rule", "student")
    body = '    """(p-value, verdict) of the paired one-sided t test of mean(a - b) > 0."""\n    ...'
    peek = "    import os\n    assert sorted(os.listdir('.')) == ['bob.ipynb'], os.listdir('.')\n    return 0.5, True"
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "alice.ipynb").write_text(notebook_text(built, "verdict_rule", "autograder"))
    (tmp_path / "flat" / "bob.ipynb").write_text(replaced(stub, body, peek))
    rows = grade_submissions(tmp_path / "flat", built_folder(built), tmp_path / "grades.csv", Limits(test_seconds=5))
    bob = {r["test"]: r for r in rows if r["submission"] == "bob.ipynb"}
    assert bob["margin_above_zero.test_returns_pair"]["feedback"] == "passed", bob
    assert sum(r["points"] for r in rows if r["submission"] == "alice.ipynb") == 3
