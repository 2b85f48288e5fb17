"""A run's full description and the grid files that expand into many runs."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml

from .. import __version__
from ..budget import check_rounds
from ..params import FLAG, Param, ParameterError, at_least, choice, yaml_load
from ..rankers import (
    ALGORITHMS,
    REFERENCE_ALGORITHMS,
    algorithm_parameters,
    check_parameters,
    external_source,
    is_external,
    make_ranker,
)
from ..users import STOP_RULES, UserSpec, parse_user
from .task import Task, task_of

# Modules that cannot change a run's numbers, left out of the code fingerprint so that editing them keeps the
# stored runs and the ledgers' run keys: what is shown (claims, tables, plots), planned and budgeted (costs, plan,
# budget, adaptive, sequential: which runs to make, never what a run computes), stored, checked and moved (store,
# validate, quarantine, migrate, bundle), and the course's grading (course*).
PRESENTATION_ONLY = {"cli.py", "plotting.py", "results.py", "store.py", "spec.py", "claims.py", "costs.py",
                     "formatting.py", "migrate.py", "quarantine.py", "names.py", "budget.py", "plan.py", "tables.py",
                     "adaptive.py", "sequential.py", "bundle.py", "validate.py", "course.py", "course_sandbox.py",
                     "course_jail.py", "course_wire.py"}


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the package's source files that can change a run's numbers.

    Part of every result key, so that stored runs are never reused after the algorithms,
    users, data handling or loop change (presentation modules are left out).
    """
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if path.name not in PRESENTATION_ONLY and "reproductions" not in path.parts:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:12]


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's result (with the package version and data)."""

    algorithm: str
    dataset: str = "synth-mq"
    fold: int = 1
    click_model: str = "navigational"
    rounds: int = 1000
    seed: int = 0
    params: dict = field(default_factory=dict)
    stop_rule: str = "after_click"
    eval_every: int = 10
    cutoff: int = 10
    reference: str | None = None   # an offline algorithm whose weights give the cosine similarity
    eval_split: str = "test"       # "vali" for hyper-parameter tuning
    audit: bool = False            # record each round's surrogate losses against the full grades (regret checks)
    # Built once from the fields above (click_model may be given as a UserSpec already parsed, e.g. by a grid)
    user: UserSpec = field(init=False, repr=False, compare=False)
    task: Task = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        """Every field checked (and integers normalised) before a run can start; the user and task built."""
        task = task_of(self.dataset)                   # raises on an unknown data set
        user = self.click_model if isinstance(self.click_model, UserSpec) else \
            parse_user(self.click_model, self.cutoff if isinstance(self.cutoff, int) else 10)
        object.__setattr__(self, "click_model", user.name)
        task.check_user(user)
        task.check_learner(self.algorithm)
        if not isinstance(self.params, dict):
            raise ParameterError(f"params of {self.algorithm} must be a mapping of option: value, got {self.params!r}")
        checked = check_parameters(self.algorithm, self.params)   # raises on an unknown algorithm or option
        if self.reference is not None and self.reference not in REFERENCE_ALGORITHMS:
            raise ParameterError(f"reference={self.reference} is invalid: the cosine similarity needs the weight "
                                 f"vector of an offline fit, and {self.reference} has none before it learns online; "
                                 f"use one of {', '.join(REFERENCE_ALGORITHMS)}")
        _check_feedback(self.algorithm, checked, user, self.cutoff)
        check_rounds(self.rounds)
        for name, declared in {**SPEC_FIELDS, "fold": Param("int", 1, task.dataset.n_folds)}.items():
            object.__setattr__(self, name, declared.check(name, getattr(self, name)))
        object.__setattr__(self, "params", dict(sorted(checked.items())))
        object.__setattr__(self, "user", user)
        object.__setattr__(self, "task", task)

    def canonical(self) -> dict:
        """The run's description as stored and hashed; a ranker that is not built in adds ``plugin``: its
        reference and the hash of its source, so that a changed method is never served a stale result.

        A built-in ranker's parameters set to their defaults are left out: ``mgd_dsp`` with ``dsp_k=3`` (a
        point of Figure 4's k sweep) is the very run of ``mgd_dsp`` with ``dsp_lambda=1.0`` (Figure 3's) and
        of plain ``mgd_dsp``, and is computed once and stored once."""
        described = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        described["params"] = explicit_parameters(self.algorithm, self.params)
        if not described["audit"]:
            del described["audit"]         # (keys of runs without an audit stay what they were)
        plugin = {"plugin": external_source(self.algorithm)} if is_external(self.algorithm) else {}
        if self.user.source_hash is not None:
            plugin["user_plugin"] = f"{self.click_model}@{self.user.source_hash}"
        return {**described, "version": __version__, "code": code_fingerprint(), **plugin}

    def key(self, data_fingerprint: str = "") -> str:
        """Content address: a hash of the canonical parameters, seed, version and data."""
        blob = json.dumps({**self.canonical(), "data": data_fingerprint}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def label(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.algorithm}({extra})" if extra else self.algorithm


@functools.cache
def _builtin_defaults(algorithm: str) -> dict:
    return algorithm_parameters(algorithm)


def explicit_parameters(algorithm: str, params: dict) -> dict:
    """``params`` without those equal to the built-in ``algorithm``'s defaults (of the same type: ``True`` is
    not taken for ``1``); a plugin's parameters are all kept."""
    if is_external(algorithm) or algorithm not in ALGORITHMS:
        return dict(params)
    defaults = _builtin_defaults(algorithm)
    return {k: v for k, v in params.items()
            if not (k in defaults and type(defaults[k]) is type(v) and defaults[k] == v)}


def _check_feedback(algorithm: str, params: dict, user: UserSpec, cutoff) -> None:
    """The ranker learns from the feedback the user gives (clicks, top-k grades, all grades, a choice):
    checked when the run is described, not when it starts (a grid's last entry fails before its first run)."""
    from ..loop import feedback_mismatch

    problem = feedback_mismatch(make_ranker(algorithm, **params), user.feedback_kind, user.name, user.k,
                                cutoff if isinstance(cutoff, int) else 10)
    if problem:
        raise ParameterError(problem)


SPEC_FIELDS = {
    "rounds": at_least(0), "seed": at_least(0), "stop_rule": choice(*STOP_RULES), "eval_every": at_least(1),
    "cutoff": at_least(1), "reference": Param("str", choices=REFERENCE_ALGORITHMS, optional=True),
    "eval_split": choice("test", "vali"), "audit": FLAG,
}
GRID_KEYS = {"name", "algorithms", "datasets", "folds", "click_models", "seeds", "rounds", "stop_rule",
             "eval_every", "cutoff", "reference", "eval_split", "audit"}
ALGORITHM_ENTRY_KEYS = ("name", "params")


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _grid_seeds(value) -> list[int]:
    """``seeds``: a count n >= 1 (seeds 0..n-1) or a non-empty list of seeds >= 0."""
    if isinstance(value, list):
        if not value:
            raise ParameterError("grid option seeds=[] is invalid; give a count >= 1 or a non-empty list of seeds")
        seeds = [at_least(0).check("seeds", v, "grid") for v in value]
        repeated = sorted({v for v in seeds if seeds.count(v) > 1})
        if repeated:
            raise ParameterError(f"grid option seeds={value} repeats seed {', '.join(map(str, repeated))}; a seed's "
                                 "run is the same run each time, so list each seed once")
        return seeds
    return list(range(at_least(1).check("seeds", value, "grid")))


def _grid_algorithms(value) -> list[dict]:
    entries = _as_list(value)
    if not entries or entries == [None]:
        raise ParameterError("grid option algorithms is empty; list at least one algorithm name")
    out = []
    for i, entry in enumerate(entries):
        entry = {"name": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict) or "name" not in entry:
            raise ParameterError(f"grid algorithms[{i}]={entry!r} is invalid; "
                                 "give a name or {name: ..., params: ...}")
        unknown = sorted(set(entry) - set(ALGORITHM_ENTRY_KEYS))
        if unknown:
            raise ParameterError(f"grid algorithms[{i}] ({entry['name']}) has unknown key(s) {', '.join(unknown)}; "
                                 f"valid keys: {', '.join(ALGORITHM_ENTRY_KEYS)}")
        out.append({"name": entry["name"], "params": entry.get("params") or {}})
    return out


def _grid_folds(value) -> list[int]:
    return [at_least(1).check("folds", f, "grid") for f in _non_empty("folds", value, "1")]


def _non_empty(key: str, value, example: str) -> list:
    """A grid list (or one value) that names at least one thing; else one line naming the key and the fix."""
    values = _as_list(value)
    if not values or values == [None]:
        raise ParameterError(f"grid option {key} is empty; list at least one (e.g. {key}: [{example}]) or leave "
                             "the key out for its default")
    return values


def _grid_names(key: str, value, example: str) -> list[str]:
    """``datasets`` or ``click_models``: a non-empty list of names (strings)."""
    names = _non_empty(key, value, example)
    odd = next((v for v in names if not isinstance(v, str)), None)
    if odd is not None:
        raise ParameterError(f"grid option {key} holds {odd!r}, which is not a name; give names, e.g. "
                             f"{key}: [{example}]")
    return names


def expand_grid(grid: dict) -> list[RunSpec]:
    """All runs of a grid: algorithms x data sets x folds x click models x seeds.

    ``algorithms`` is a list of names or of ``{name: ..., params: {...}}``; ``seeds`` an
    integer count (seeds 0..n-1) or a list. The whole grid is checked before it is
    returned: unknown keys, wrong types and out-of-range values raise a ``ParameterError``.
    """
    unknown = set(grid) - GRID_KEYS
    if unknown:
        raise ParameterError(f"unknown grid key(s) {', '.join(sorted(unknown))}; valid keys: "
                             f"{', '.join(sorted(GRID_KEYS))}")
    if "algorithms" not in grid:
        raise ParameterError("a grid needs 'algorithms' (a list of algorithm names)")
    algos = _grid_algorithms(grid["algorithms"])
    seeds = _grid_seeds(grid.get("seeds", 1))
    common = {k: grid[k] for k in ("rounds", "stop_rule", "eval_every", "cutoff", "reference", "eval_split", "audit")
              if k in grid}
    cutoff = common.get("cutoff", 10)
    users = [parse_user(name, cutoff if isinstance(cutoff, int) else 10)      # each -c value parsed once
             for name in _grid_names("click_models", grid.get("click_models", "navigational"), "navigational")]
    datasets = _grid_names("datasets", grid.get("datasets", "synth-mq"), "synth-mq")
    runs = []
    for algo, dataset, fold, click, seed in itertools.product(
            algos, datasets, _grid_folds(grid.get("folds", 1)), users, seeds):
        runs.append(RunSpec(algo["name"], dataset, fold, click, seed=seed, params=dict(algo["params"]), **common))
    return runs


def grid_plan(grid: dict, jobs: int = 1):
    """What a grid would run, counted from its lists without describing a run (see :mod:`olr_core.budget`)."""
    from ..budget import Plan
    from ..settings import worker_count

    def count(key, default):
        value = grid.get(key, default)
        return len(value) if isinstance(value, list) else 1

    seeds = grid.get("seeds", 1)
    n_seeds = len(seeds) if isinstance(seeds, list) else seeds if isinstance(seeds, int) and seeds > 0 else 1
    runs = count("algorithms", []) * count("datasets", "synth-mq") * count("folds", 1) * \
        count("click_models", "navigational") * n_seeds
    rounds = grid.get("rounds", RunSpec.__dataclass_fields__["rounds"].default)
    rounds = rounds if isinstance(rounds, int) and rounds > 0 else 0
    return Plan(runs, runs * rounds, rounds, worker_count(jobs, runs))


def load_grid(path) -> dict:
    """Read a grid file (YAML); syntax errors name the file and line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"grid file {path} does not exist")
    try:
        grid = yaml_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ValueError(f"{path}{where}: not valid YAML ({problem}); fix the syntax (key: value, lists in [])") \
            from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a UTF-8 text file; a grid file is YAML text") from None
    if not isinstance(grid, dict):
        raise ValueError(f"{path}: a grid file is a YAML mapping with keys {', '.join(sorted(GRID_KEYS))}")
    return grid


def load_and_expand(path) -> list[RunSpec]:
    """A grid file's runs, every one checked; errors are prefixed with the file's name."""
    grid = load_grid(path)
    try:
        return expand_grid(grid)
    except (ValueError, KeyError) as err:
        message = err.args[0] if err.args else str(err)
        raise type(err)(f"{path}: {message}") from None
