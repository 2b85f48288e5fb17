"""The manifest (``notebooks/manifest.yml``) as typed page specs, read and checked once, in the parent process.

A page's parameters at a profile are, in order of precedence: the reader's ``-p`` values, the manifest's
values for the profile, its ``common`` values, and its run sizes: the values of the experiment its ``sizes``
names (``paper.experiment``) in that paper's ``PROFILES`` (:data:`SIZE_TABLES`), the only copy of them. A
notebook's parameters cell leaves its run sizes at ``None`` ("the profile's"); :func:`page_sizes` resolves
them when the notebook runs outside the book (the ``tiny`` profile of the tests).
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml

PROFILES = ("quick", "paper")
SIZE_TABLES = {**{paper: f"olr_core.reproductions.{paper}.experiments"
                  for paper in ("dsp", "pairrank", "topk", "neural", "klrank")}, "book": "olr_book.sizes"}
MANIFEST = Path("notebooks") / "manifest.yml"
KIND_NAMES = {int: "an integer", float: "a number", list: "a list", str: "a string", bool: "true or false",
              dict: "a mapping"}


# The page parameters that size a page's computation: seeds and rounds of runs, and the simulated sessions, sampled
# directions, queries and data sample of the pages that run no grid (click models, DSP theory, LDA).
RUN_SIZE_NAMES = ("seeds", "rounds", "sessions", "fit_sessions", "samples", "moment_samples", "queries", "sample")


def is_run_size(name: str) -> bool:
    """Whether a page parameter is a run size (its value lives in a ``PROFILES`` table only)."""
    return name in RUN_SIZE_NAMES or name.endswith("_rounds")


def project_root(start: Path | None = None) -> Path:
    """The folder holding ``_config.yml`` and ``notebooks/manifest.yml`` (searching upwards)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").exists() and (folder / MANIFEST).exists():
            return folder
    raise FileNotFoundError("no book here: run 'olr book' inside the OL2R Book checkout (where _config.yml is)")


@dataclass(frozen=True)
class Parameter:
    """One name of a notebook's parameters cell: its default and the comment beside it."""

    default: object
    help: str = ""


def read_page(path: Path):
    """A page's notebook (a ``NotebookNode``), read from its MyST Markdown text (jupytext's ``md:myst``) or, for
    a reader's own copy, from an ``.ipynb``."""
    import jupytext

    return jupytext.read(path)


def declared_parameters(notebook: Path) -> dict[str, Parameter]:
    """The assignments of the notebook's cell tagged ``parameters`` (``name = literal  # help``), in order."""
    cells = [c for c in read_page(notebook).cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"{notebook}: expected one cell tagged 'parameters', found {len(cells)}")
    source = cells[0].source
    lines = source.splitlines()
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                default = ast.literal_eval(node.value)
            except ValueError:
                default = ast.get_source_segment(source, node.value)
            comment = lines[node.end_lineno - 1].partition("#")[2].strip()
            out[node.targets[0].id] = Parameter(default, comment)
    return out


def size_table(reference: str) -> dict[str, dict]:
    """``paper.experiment`` -> {profile: that experiment's sizes} from the paper's ``PROFILES``."""
    paper, _, experiment = reference.partition(".")
    if paper not in SIZE_TABLES:
        raise ValueError(f"{MANIFEST}: sizes {reference!r} names no paper; valid: {', '.join(SIZE_TABLES)}")
    profiles = importlib.import_module(SIZE_TABLES[paper]).PROFILES
    missing = [p for p in ("tiny", *PROFILES) if experiment not in profiles.get(p, {})]
    if missing:
        raise ValueError(f"{MANIFEST}: sizes {reference!r}: {SIZE_TABLES[paper]}.PROFILES has no experiment "
                         f"{experiment!r} in profile(s) {missing}; its experiments: {', '.join(profiles['quick'])}")
    return {p: profiles[p][experiment] for p in ("tiny", *PROFILES)}


@dataclass(frozen=True)
class Page:
    """One page of the manifest: its notebook, the pages it waits for, its run sizes and parameter values."""

    root: Path
    notebook: str
    after: tuple[str, ...] = ()
    sizes: str | None = None
    common: dict | None = None
    profiles: dict | None = None

    @property
    def name(self) -> str:
        return Path(self.notebook).stem

    @property
    def path(self) -> Path:
        """The page's text (``notebooks/NAME.md``)."""
        return self.root / "notebooks" / self.notebook

    @property
    def executed_name(self) -> str:
        """The executed notebook's file name under ``book/generated/`` (``NAME.ipynb``)."""
        return f"{self.name}.ipynb"

    @cached_property
    def declared(self) -> dict[str, Parameter]:
        return declared_parameters(self.path)

    @cached_property
    def size_values(self) -> dict[str, dict]:
        """{profile: the run sizes this page has parameters for} (tiny, quick and paper)."""
        if self.sizes is None:
            return {p: {} for p in ("tiny", *PROFILES)}
        return {p: {k: v for k, v in values.items() if k in self.declared}
                for p, values in size_table(self.sizes).items()}

    def parameters(self, profile: str, overrides: dict | None = None) -> dict:
        """The page's values at ``profile``: its run sizes, the manifest's, then ``overrides``."""
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
        chosen = {"profile": profile} if "profile" in self.declared else {}
        return {**self.size_values[profile], **(self.common or {}), **(self.profiles or {}).get(profile, {}),
                **chosen, **(overrides or {})}

    def type_example(self, name: str):
        """A value showing the type ``name`` takes: its default, else (a run size left at None) a profile's."""
        candidates = [self.declared[name].default] + [self.size_values[p].get(name) for p in ("tiny", *PROFILES)]
        return next((v for v in candidates if v is not None), None)

    def describe(self) -> str:
        return ", ".join(f"{k} (default {self.type_example(k)!r})" for k in self.declared)

    def check(self) -> None:
        """Manifest mistakes in one line each: unknown parameters, and run sizes given outside ``PROFILES``."""
        for where, values in (("common", self.common or {}), *((p, v) for p, v in (self.profiles or {}).items())):
            unknown = [k for k in values if k not in self.declared]
            if unknown:
                raise ValueError(f"{MANIFEST}: {self.notebook} ({where}) sets {unknown}, which its parameters cell "
                                 f"does not declare; its parameters: {', '.join(self.declared)}")
            sizes = [k for k in values if is_run_size(k) or k in self.size_values["quick"]]
            if sizes:
                where_from = f"its sizes {self.sizes!r}" if self.sizes else "a 'sizes:' entry naming a PROFILES table"
                raise ValueError(f"{MANIFEST}: {self.notebook} ({where}) sets {sizes}: run sizes come from "
                                 f"{where_from} only; remove them here")
        missing = [k for k in self.declared if is_run_size(k) and k not in self.size_values["quick"]]
        if missing:
            raise ValueError(f"{MANIFEST}: {self.notebook} has run-size parameters {missing} that no PROFILES "
                             f"table gives; name one with 'sizes: paper.experiment'")


def load_manifest(root: Path) -> dict:
    return yaml.safe_load((root / MANIFEST).read_text())


def load_pages(root: Path) -> list[Page]:
    """Every page of the manifest, in its order, each checked (its ``after`` names pages listed before it)."""
    pages = []
    for entry in load_manifest(root)["notebooks"]:
        missing = [p for p in PROFILES if p not in entry.get("profiles", {})]
        if missing:
            raise ValueError(f"{MANIFEST}: {entry.get('notebook')} lacks profile(s) {missing}")
        after = entry.get("after", [])
        names = [p.name for p in pages]
        unknown = [] if after == "all" else [a for a in after if a not in names]
        if unknown:
            raise ValueError(f"{MANIFEST}: {entry['notebook']} waits for {unknown}, which is no page listed before "
                             f"it; name pages above it, or 'all'")
        page = Page(root, entry["notebook"], tuple(names if after == "all" else after), entry.get("sizes"),
                    entry.get("common") or {}, {p: v or {} for p, v in entry["profiles"].items()})
        page.check()
        pages.append(page)
    return pages


def parameter_ranges(root: Path) -> dict[str, dict]:
    """The manifest's ``ranges``: each page parameter's allowed ``min`` and ``max`` (of a number, or of every
    number of a list)."""
    return load_manifest(root).get("ranges") or {}


def select_pages(pages: list[Page], only: str | None) -> list[Page]:
    """The pages ``only`` names: an exact notebook name if there is one, else every name containing it."""
    if not only:
        return pages
    stem = only.removesuffix(".ipynb").removesuffix(".md")
    chosen = [p for p in pages if p.name == stem] or [p for p in pages if stem in p.notebook]
    if not chosen:
        raise ValueError(f"--only {only!r} matches no page; pages: {', '.join(p.name for p in pages)}")
    return chosen


def fits(value, example) -> bool:
    """Whether ``value`` has the type of ``example`` (numbers widen int -> float; None: anything)."""
    if example is None:
        return True
    if isinstance(example, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(example, bool)
    if isinstance(example, float):
        return isinstance(value, (int, float))
    if isinstance(example, list):
        return isinstance(value, list) and (not example or all(fits(v, example[0]) for v in value))
    return isinstance(value, type(example))


def check_overrides(page: Page, overrides: dict) -> None:
    """``overrides`` checked against the page's parameters cell: unknown names and wrong types are errors."""
    for name, value in overrides.items():
        if name == "profile":
            raise ValueError(f"{page.name}: the profile is not a page parameter to override (-p profile=...); choose "
                             f"it with --profile ({', '.join(PROFILES)}), which also sets the page's run sizes")
        if name not in page.declared:
            raise ValueError(f"{page.name} has no parameter {name!r}; its parameters: {page.describe()}")
        example = "" if name.endswith("_dir") else page.type_example(name)       # (a folder: a path, a string)
        if not fits(value, example) and not (name.endswith("_dir") and value is None):
            kind = KIND_NAMES.get(type(example), type(example).__name__)
            raise ValueError(f"{page.name}: parameter {name}={value!r} has the wrong type (expected {kind}, like "
                             f"{example!r}); its parameters: {page.describe()}")


def check_ranges(page: str, params: dict, ranges: dict) -> None:
    """Every value of ``params`` within its declared range, else a one-line error naming the page and option."""
    for name, value in params.items():
        bounds = ranges.get(name)
        numbers = value if isinstance(value, list) else [value]
        if not bounds or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            continue
        low, high = bounds.get("min"), bounds.get("max")
        bad = [v for v in numbers if (low is not None and v < low) or (high is not None and v > high)]
        if bad:
            allowed = " and ".join(s for s in (f">= {low}" if low is not None else "",
                                               f"<= {high}" if high is not None else "") if s)
            raise ValueError(f"{page}: parameter {name}={value!r} is out of range: {name} must be {allowed}"
                             + (" (each value)" if isinstance(value, list) else "") + "; nothing was executed")


def planned_parameters(root: Path, page: Page, profile: str, overrides: dict | None = None) -> dict:
    """The page's values at ``profile`` with ``overrides``, every one checked (names, types, ranges)."""
    check_overrides(page, overrides or {})
    params = page.parameters(profile, overrides)
    check_ranges(page.name, params, parameter_ranges(root))
    check_jobs(page.name, params)
    check_data_sets(page.name, params, overrides or {})
    return params


def check_jobs(page: str, params: dict) -> None:
    """A page's ``jobs``: a count of worker processes (-1 every core), as ``--jobs`` takes; never 0."""
    if "jobs" not in params:
        return
    from olr_core.settings import worker_count

    try:
        worker_count(params["jobs"])
    except ValueError as err:
        raise ValueError(f"{page}: parameter jobs={params['jobs']!r} is invalid: {err}; nothing was executed") \
            from None


def check_data_sets(page: str, params: dict, overrides: dict) -> None:
    """A reader's ``-p datasets=[]`` (or ``real_datasets=[]``) must leave the page a data set to run: a synthetic
    one, a real one found in the data directory, or the page's ``fallback``; else one line saying so."""
    if not {"datasets", "real_datasets"} & {k for k, v in overrides.items() if v == []}:
        return
    if params.get("datasets") or params.get("fallback"):
        return
    from olr_core.data.registry import find_datasets

    real = params.get("real_datasets") or []
    found, _ = find_datasets(real, params.get("data_dir"))
    if not found:
        raise ValueError(f"{page}: parameters datasets={params.get('datasets')!r} and real_datasets={real!r} leave "
                         "the page no data set to run (none of those real sets is in the data directory); give "
                         "datasets=['synth-mq'], or set OLR_DATA_DIR to where the real ones are (nothing was executed)")


def page_sizes(page: str, profile: str, **values):
    """A notebook's run sizes: each of ``values`` that is None replaced by the page's size at ``profile``
    (``tiny`` outside the book); returns them in the order given. In the book every size arrives resolved."""
    found = next((p for p in load_pages(project_root()) if p.name == page), None)
    if found is None:
        raise ValueError(f"page_sizes: {page!r} is no page of {MANIFEST}")
    sizes = found.size_values.get(profile)
    if sizes is None:
        raise ValueError(f"page_sizes: unknown profile {profile!r}; valid: tiny, {', '.join(PROFILES)}")
    out = tuple(sizes[k] if v is None else v for k, v in values.items())
    return out if len(out) > 1 else out[0]


def list_pages(root: Path) -> str:
    """Every page with its parameters: the notebook's default, and its values at quick and paper."""
    lines = []
    for page in load_pages(root):
        lines.append(page.name)
        quick, paper = page.parameters("quick"), page.parameters("paper")
        for name, info in page.declared.items():
            tiny = page.size_values["tiny"].get(name)
            default = f"(profile's: tiny {tiny!r})" if info.default is None and name in quick else repr(info.default)
            lines.append(f"  {name:<16} default {default:<22} quick {quick.get(name, info.default)!r:<24}"
                         f" paper {paper.get(name, info.default)!r}")
    return "\n".join(lines)
