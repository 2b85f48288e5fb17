"""A run's full description and the grid files that expand into many runs."""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from .. import __version__
from ..data.registry import get_spec
from ..rankers import algorithm_parameters
from ..users import CLICK_MODELS, STOP_RULES

PRESENTATION_ONLY = {"cli.py", "book.py", "plotting.py", "results.py", "store.py", "spec.py"}


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

    def __post_init__(self):
        algorithm_parameters(self.algorithm)          # raises on an unknown algorithm
        get_spec(self.dataset)                         # raises on an unknown data set
        if self.click_model not in CLICK_MODELS + ("topk", "choice"):
            raise ValueError(f"unknown click model {self.click_model!r}; valid: {', '.join(CLICK_MODELS)}")
        if self.stop_rule not in STOP_RULES:
            raise ValueError(f"unknown stop rule {self.stop_rule!r}; valid: {', '.join(STOP_RULES)}")
        if int(self.rounds) < 0:
            raise ValueError(f"rounds must be >= 0, got {self.rounds}")
        if int(self.eval_every) < 1:
            raise ValueError(f"eval_every must be >= 1, got {self.eval_every}")
        object.__setattr__(self, "params", dict(sorted(self.params.items())))

    def canonical(self) -> dict:
        return {**asdict(self), "version": __version__, "code": code_fingerprint()}

    def key(self, data_fingerprint: str = "") -> str:
        """Content address: a hash of the canonical parameters, seed, version and data."""
        blob = json.dumps({**self.canonical(), "data": data_fingerprint}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def label(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.algorithm}({extra})" if extra else self.algorithm


GRID_KEYS = {"name", "algorithms", "datasets", "folds", "click_models", "seeds", "rounds", "stop_rule",
             "eval_every", "cutoff", "reference", "eval_split"}


def _as_list(value):
    return value if isinstance(value, list) else [value]


def expand_grid(grid: dict) -> list[RunSpec]:
    """All runs of a grid: algorithms x data sets x folds x click models x seeds.

    ``algorithms`` is a list of names or of ``{name: ..., params: {...}}``; ``seeds`` an
    integer count (seeds 0..n-1) or a list. Unknown keys raise an error.
    """
    unknown = set(grid) - GRID_KEYS
    if unknown:
        raise ValueError(f"unknown grid keys {sorted(unknown)}; valid keys: {sorted(GRID_KEYS)}")
    if "algorithms" not in grid:
        raise ValueError("a grid needs 'algorithms'")
    algos = [a if isinstance(a, dict) else {"name": a} for a in _as_list(grid["algorithms"])]
    seeds = grid.get("seeds", 1)
    seeds = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    common = {k: grid[k] for k in ("rounds", "stop_rule", "eval_every", "cutoff", "reference", "eval_split")
              if k in grid}
    runs = []
    for algo, dataset, fold, click, seed in itertools.product(
            algos, _as_list(grid.get("datasets", "synth-mq")), _as_list(grid.get("folds", 1)),
            _as_list(grid.get("click_models", "navigational")), seeds):
        runs.append(RunSpec(algo["name"], dataset, int(fold), click, seed=int(seed),
                            params=dict(algo.get("params", {})), **common))
    return runs


def load_grid(path) -> dict:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"grid file {path} does not exist")
    grid = yaml.safe_load(path.read_text())
    if not isinstance(grid, dict):
        raise ValueError(f"{path}: a grid file is a YAML mapping with keys {sorted(GRID_KEYS)}")
    return grid
