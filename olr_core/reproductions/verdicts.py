"""Every paper's claims judged from this build's runs (``olr claims``, the chapters' "Does it reproduce?"
sections and the book-wide dashboard all call :func:`claim_records`)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import re

import pandas as pd

from ..budget import Plan
from ..claims import SMALLER, VERDICTS, Claim, at_level, judge
from ..data.registry import DataNotFoundError, find_datasets, resolve_data_dir
from ..experiments import ResultStore, run_frame, run_grid
from ..experiments.costs import stored_costs
from ..experiments.runner import spec_key, worker_count
from ..formatting import range_text, threshold_text
from ..rankers import get_algorithm
from ..sequential import profile_level
from . import dsp, klrank, neural, pairrank, topk
from .next_runs import TARGET_PROFILE, decide_command, grid_cost
from .scale import WHOLE_STREAM, claim_rows, paper_scale, scale_fields

PAPERS = {"dsp": dsp, "pairrank": pairrank, "neural": neural, "klrank": klrank, "topk": topk}   # each a package:
# experiments (grids, PROFILES), claims (registry, decision rules), analysis (decorate: derived columns)
PROFILES = ("tiny", "quick", "paper")      # tiny: a smoke test of the machinery in seconds


def _packages(paper: str | None):
    if paper is None:
        return list(PAPERS.values())
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; valid: {', '.join(PAPERS)}")
    return [PAPERS[paper]]


def with_method(package, grids: dict, rankers) -> dict:
    """``grids`` with every run of the paper's proposed method (``package.claims.WITH``) copied for each ranker of
    ``rankers`` (names or import references, with their default parameters), so that the ranker meets the
    same data, folds, users, seeds and horizon as the paper's methods."""
    if not rankers or package.claims.WITH is None:
        return grids
    name, proposed = package.claims.WITH["experiment"], package.claims.WITH["proposed"]
    template = [s for s in grids.get(name, []) if s.algorithm == proposed]
    added = [dataclasses.replace(s, algorithm=r, params={}) for r in rankers for s in template]
    return {**grids, name: grids[name] + added}


def with_claims(package, rankers) -> list[Claim]:
    """For each ranker: it beats the paper's proposed method, and it is the best of all methods, on each of the
    paper's metrics (the other claims are judged with the ranker among the methods too)."""
    if not rankers:
        return []
    paper = package.claims.PAPER
    if package.claims.WITH is None:
        return [Claim(paper, f"with-{r}", "your method", f"{r} joins the paper's experiments", "none", "",
                      "not_testable", {"reason": "this paper's experiments rank growing-library streams, where a "
                                                 "click learner has no runs to join"}) for r in rankers]
    w, claims, configs = package.claims.WITH, [], package.claims.CONFIGS
    for r in rankers:
        for metric in w["metrics"]:
            short = metric.split("_")[0]
            claims += [
                Claim(paper, f"with-{r}-over-{w['proposed']}-{short}", "your method",
                      f"{r} beats the paper's {w['proposed']} in {metric}", w["experiment"], metric, "paired_gain",
                      {"treatment": r, "control": w["proposed"]}, "(your method)", w["cells"], configs=configs),
                Claim(paper, f"with-{r}-best-{short}", "your method",
                      f"{r} has the best {metric} of all the paper's methods", w["experiment"], metric, "best",
                      {"target": r}, "(your method)", w["cells"], configs=configs)]
    return claims


def _grids(package, profile: str, config: str, datasets, data_dir, seeds: int | None, rankers,
           seeds_of: dict | None = None) -> dict:
    """{experiment: run specs} of one configuration; ``seeds_of`` ({experiment: seeds}) sets some experiments'
    seeds apart from the others' (a sequential look adds seeds to the experiments still undecided)."""
    def grids_at(n):
        paper_grids = package.experiments.experiments(profile, config, datasets, data_dir=data_dir, seeds=n)
        return with_method(package, paper_grids, rankers)

    grids = grids_at(seeds)
    for n in sorted(set((seeds_of or {}).values())):
        at_n = grids_at(n)
        grids.update({name: at_n[name] for name, m in seeds_of.items() if m == n and name in at_n})
    return grids


def paper_frames(package, profile: str, data_dir=None, jobs: int = 1, store: ResultStore | None = None,
                 compute: bool = True, seeds: int | None = None, rankers=(),
                 seeds_of: dict | None = None) -> tuple[dict, dict]:
    """{config: {experiment: run frame}} for one paper (runs computed through the store), and the missing sets;
    ``rankers``: methods of your own that join the experiments (:func:`with_method`); ``seeds_of``: {experiment:
    seeds} for experiments run at their own number of seeds."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    store = store or ResultStore()
    datasets, missing = find_datasets(package.experiments.MAIN_DATASETS, data_dir)
    frames = {}
    for config in package.claims.CONFIGS:
        grids = _grids(package, profile, config, datasets, data_dir, seeds, rankers, seeds_of)
        if compute:
            run_grid([s for specs in grids.values() for s in specs], store, jobs=jobs, data_dir=data_dir)
        frames[config] = {name: package.analysis.decorate(name, specs, keyed_run_frame(specs, store, data_dir),
                                                          store=store, data_dir=data_dir, jobs=jobs)
                                  .assign(config=config)
                          for name, specs in grids.items() if specs}
    return frames, missing


def keyed_run_frame(specs, store: ResultStore, data_dir=None) -> pd.DataFrame:
    """:func:`run_frame` with each run's store key (``run_key``): the ledger names the runs a verdict rests on."""
    return run_frame(specs, store, data_dir).assign(run_key=[spec_key(s, data_dir) for s in specs])


def _setup(frame: pd.DataFrame | None, package) -> str:
    if frame is None or frame.empty:
        return f"paper: {package.claims.PAPER_RUNS}"
    keys = ["dataset", "click_model", "algorithm", *[c for c in frame if c.startswith("param:")]]
    per_setting = frame.groupby(keys, dropna=False).size()
    rounds = sorted(frame["rounds_run"].unique())
    return (f"ours: {', '.join(f'{r:,}' for r in rounds)} queries, {range_text(per_setting, 'run')} of each method "
            f"per data set and user; paper: {package.claims.PAPER_RUNS}")


def claim_records(paper: str | None = None, profile: str = "quick", data_dir=None, jobs: int = 1,
                  store: ResultStore | None = None, compute: bool = True, seeds: int | None = None,
                  rankers=(), looks: dict | None = None, keep_runs: bool = False) -> list[dict]:
    """One record per (claim, configuration): paper, id, source, claim, config, paper_value, ours, runs,
    rule, verdict, reason, setup, cells, and runs_needed (inconclusive) or cause (not reproduced).
    ``rankers``: methods of your own (``olr claims PAPER --with module:Class``) that join the paper's
    experiments; every claim is then judged with them among the methods, and each gets its own claims.
    ``looks``: {(paper, experiment): Look} of a sequential design (:mod:`olr_core.adaptive`): that experiment is
    run at the look's seeds and its claims judged at the look's level (the record carries ``look`` and
    ``level``); None: every claim at the profile's seeds and the level of the profile's look in that design
    (:func:`olr_core.sequential.profile_level`: quick is look 1, paper look 2). ``keep_runs``: each testable record
    also carries ``run_values`` (the claim's metric and {run key: its value} of every run it rests on) and
    ``run_ids`` ({run key: the run's algorithm, data set, fold, user, seed and rounds}), the ledger's raw
    material."""
    records = []
    for ranker in rankers:
        get_algorithm(ranker)                         # a ranker that does not load fails before any run
    for package in _packages(paper):
        mine = {exp: look for (p, exp), look in (looks or {}).items() if p == package.claims.PAPER}
        frames, missing = paper_frames(package, profile, data_dir, jobs, store, compute, seeds, rankers,
                                       {exp: look.seeds for exp, look in mine.items()})
        costs = functools.cache(lambda: stored_costs(store or ResultStore()))   # read once, when first asked
        for claim in [*package.claims.CLAIMS, *with_claims(package, rankers)]:
            look = mine.get(claim.experiment)
            with at_level(look.level if look else profile_level(profile)):
                judged = _claim_records(package, claim, frames, missing, profile, data_dir, costs, look)
                if keep_runs:
                    for record in judged:
                        record.update(_runs_of(claim, record, frames.get(record["config"], {}).get(claim.experiment)))
                records.extend(judged)
    return records


def _claim_records(package, claim: Claim, frames: dict, missing: dict, profile: str, data_dir, costs,
                   look=None) -> list[dict]:
    """The records of one claim, one per configuration, at the level in force (:func:`.claims.at_level`);
    ``costs()``: the store's run costs (for the price of the command that decides an inconclusive record)."""
    judged, inputs = [], {}
    for config in claim.configs:
        frame = frames.get(config, {}).get(claim.experiment)
        needed = claim.where.get("dataset")
        extra = dict(package.claims.paper_cells(claim))
        if needed in missing:
            frame, extra["missing"] = None, without_data_path(missing[needed], data_dir)
        inputs[config] = (frame, extra)
        record = judge(claim, frame, config, **extra)
        record["setup"] = _setup(frame, package) if claim.rule != "not_testable" else ""
        record["page"] = evidence_page(package, claim)
        record.update(_scale_of(package, claim, record, frame, config, data_dir))
        if look is not None:
            record["look"], record["experiment"] = look.index, claim.experiment
        if record["verdict"] not in ("reproduced", "not testable here"):
            record["reason"] += skyline_note(claim, frame, frames.get(config, {}))
        if record["verdict"] == "inconclusive":
            record["reason"] += _how_to_decide(package.claims.PAPER, record, frame, profile, claim.experiment, data_dir,
                                               costs())
        judged.append(record)
    for record in judged:
        if record["verdict"] == "not reproduced":
            record["cause"] = failure_cause(record, judged, claim, inputs)
            record["reason"] += f"; {record['cause']}"
    return judged


RUN_IDS = ["algorithm", "label", "dataset", "fold", "click_model", "seed", "rounds_run"]


def _runs_of(claim: Claim, record: dict, frame) -> dict:
    """The per-run values a record rests on (:func:`.scale.claim_rows`): {metric, values: {run key: value}} and
    the runs' ids; {} for a record without cells."""
    rows = claim_rows(claim, frame, record["config"])
    if not record.get("cells") or rows.empty or "run_key" not in rows or claim.metric not in rows:
        return {}
    values = {k: (None if pd.isna(v) else float(v)) for k, v in zip(rows["run_key"], rows[claim.metric])}
    ids = {k: {c: _plain(v) for c, v in row.items()}
           for k, row in zip(rows["run_key"], rows[[c for c in RUN_IDS if c in rows]].to_dict("records"))}
    return {"run_values": {"metric": claim.metric, "values": values}, "run_ids": ids}


def _plain(value):
    """A numpy scalar as a plain Python value (JSON)."""
    return value.item() if hasattr(value, "item") else value


def _scale_of(package, claim: Claim, record: dict, frame, config: str, data_dir) -> dict:
    """The record's horizon and runs beside the paper's, and its scale (:func:`.scale.scale_fields`)."""
    scale = paper_scale(package.claims.PAPER, claim.experiment)
    stream = None
    if scale is not None and scale.horizon == WHOLE_STREAM and not claim.horizon:
        specs = claim_layout(package.claims.PAPER, "paper", data_dir, 1).get((config, claim.experiment), [])
        datasets = set(claim_rows(claim, frame, config).get("dataset", []))
        stream = min((int(s.rounds) for s in specs if s.dataset in datasets), default=None)
    return scale_fields(claim, record, claim_rows(claim, frame, config), scale, stream)


def without_data_path(reason: str, data_dir=None) -> str:
    """A missing data set's reason with the data directory named as the option that sets it, not as this machine's
    absolute path (the record is printed on the book's pages)."""
    try:
        root = str(resolve_data_dir(data_dir))
    except DataNotFoundError:
        return reason                                  # (no data directory at all: the reason says so)
    if root not in reason:
        return reason
    return reason.replace(root, "DATA_DIR") + " (DATA_DIR: the data directory, --data-dir or OLR_DATA_DIR)"


def claim_grids(paper: str | None, profile: str, data_dir=None, seeds: int | None = None,
                rankers=()) -> dict[tuple, list]:
    """{(paper, configuration, experiment): run specs} of the claims of ``paper`` (every paper for None) at
    ``profile`` (with ``rankers`` of your own): the grids :func:`paper_frames` runs."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    out = {}
    for package in _packages(paper):
        datasets, _ = find_datasets(package.experiments.MAIN_DATASETS, data_dir)
        for config in package.claims.CONFIGS:
            paper_grids = package.experiments.experiments(profile, config, datasets, data_dir=data_dir, seeds=seeds)
            grids = with_method(package, paper_grids, rankers)
            out.update({(package.claims.PAPER, config, name): specs for name, specs in grids.items() if specs})
    return out


def claims_budget(paper: str | None = None, profile: str = "quick", data_dir=None, seeds: int | None = None,
                  rankers=(), jobs: int = 1) -> Plan:
    """What ``claim_records`` would run (before any run is described): the grids are laid out with one seed and
    scaled by ``seeds``, so that ``--seeds 100000`` is planned in the time of one seed."""
    if seeds is not None and (not isinstance(seeds, int) or seeds < 1):
        raise ValueError(f"--seeds {seeds} is invalid; expected a whole number of at least 1")
    with contextlib.redirect_stderr(io.StringIO()):          # (notes are printed once, by the run itself)
        grids = claim_grids(paper, profile, data_dir, 1 if seeds else None, rankers)
    specs = [s for group in grids.values() for s in group]
    scale = seeds or 1
    return Plan(len(specs) * scale, sum(int(s.rounds) for s in specs) * scale,
                max((int(s.rounds) for s in specs), default=0), worker_count(jobs, len(specs) * scale))


def evidence_page(package, claim) -> str:
    """The book page (notebook name) that shows the runs of the claim's source, or "" if none does."""
    for key in re.findall(r"(?:Table|Figure|Theorem|Section) [\d.]*\d", claim.source):
        if key in package.claims.PAGES:
            return package.claims.PAGES[key]
    return ""


def _how_to_decide(paper: str, record: dict, frame: pd.DataFrame | None, profile: str, experiment: str | None = None,
                   data_dir=None, costs: dict | None = None) -> str:
    """The command that gives every cell about ``runs_needed`` runs at the paper's horizon, and its CPU time
    (:func:`next_runs.decide_command` on the paper's claim runs at its own profile)."""
    frozen = None if costs is None else tuple(sorted((kind, tuple(runs)) for kind, runs in costs.items()))
    price = None if costs is None else functools.partial(_layout_cost, paper, data_dir, frozen=frozen)
    return decide_command({**record, "paper": paper}, frame, profile, experiment,
                          claim_layout(paper, TARGET_PROFILE, data_dir, 1), price)


@functools.cache
def _layout_cost(paper: str, data_dir, seeds: int | None, frozen: tuple) -> tuple[float, int]:
    """(CPU seconds, runs of unknown cost) of the paper's claim runs at :data:`TARGET_PROFILE` with ``seeds``
    seeds, priced once per paper and store costs (``frozen``): every inconclusive claim of a paper asks it."""
    return grid_cost(claim_layout(paper, TARGET_PROFILE, data_dir, seeds), dict(frozen))


@functools.cache
def claim_layout(paper: str, profile: str, data_dir, seeds: int | None = 1) -> dict:
    """{(configuration, experiment): specs} of the paper's claims at ``profile`` with ``seeds`` seeds (None: the
    profile's own), laid out once per process."""
    with contextlib.redirect_stderr(io.StringIO()):             # (tuning notes: printed once, by the runs)
        grids = claim_grids(paper, profile, data_dir, seeds)
    return {(config, name): specs for (_, config, name), specs in grids.items()}


SKYLINES = {"offline_ranknet": "offline RankNet (trained on every grade)"}   # references a learner converges to


def skyline_note(claim, frame: pd.DataFrame | None, experiments: dict) -> str:
    """For a claim that a learner converges to a skyline reference (``equivalent`` to a :data:`SKYLINES` method):
    the data sets on which the reference scores below every online learner of the paper's runs (``experiments``:
    {name: run frame}, under the claim's users), where the gap measures the reference's shortfall, not the
    learner's; "" where the reference is above some learner everywhere."""
    reference, column = claim.args.get("control"), claim.args.get("column", "algorithm")
    if claim.rule != "equivalent" or reference not in SKYLINES or frame is None or frame.empty:
        return ""
    ref = frame[frame[column] == reference].groupby("dataset")[claim.metric].mean()
    users = set(frame["click_model"]) if "click_model" in frame else None
    learners = [f[[c for c in ("dataset", "click_model", column, claim.metric) if c in f]]
                for f in experiments.values() if f is not None and claim.metric in f and column in f]
    if not learners or ref.empty:
        return ""
    runs = pd.concat(learners)
    runs = runs[(runs[column] != reference) & (runs["click_model"].isin(users) if users else True)]
    online = runs.groupby(["dataset", column])[claim.metric].mean()
    notes = []
    for dataset, value in ref.items():
        means = online[online.index.get_level_values("dataset") == dataset].droplevel("dataset")
        if len(means) and (means > value).all():
            notes.append(f"on {dataset} {SKYLINES[reference]} reaches {value:.3f}, below every online learner "
                         f"(the lowest, {means.idxmin()}, {means.min():.3f})")
    if not notes:
        return ""
    return ("; the reference is the problem, not the learner: " + "; ".join(notes)
            + ": a learner that passes its skyline cannot 'converge' to it, and the gap measures how weak the "
              "reference is there")


def failure_cause(record: dict, judged: list[dict], claim: Claim | None = None, inputs: dict | None = None) -> str:
    """A failure's cause as shown by a run. A configuration is named only when, on the same runs (the data
    sets, folds and seeds both configurations ran, ``inputs``: {config: (frame, extra)}), the claim is
    decisively not reproduced in this configuration and decisively reproduced in the other; otherwise
    "cause not found", with what was tried and its verdict on the shared runs."""
    others = [r for r in judged if r is not record and r["verdict"] != "not testable here"]
    if not others:
        return "cause not found; tried: no other configuration of this claim has been run"
    tried = []
    for other in others:
        here, there, shared = _on_shared_runs(claim, record, other, inputs)
        if here == "not reproduced" and there == "reproduced":
            return (f"cause: the configuration; on the same {shared} runs the claim is not reproduced as "
                    f"`{record['config']}` and reproduced as `{other['config']}`")
        tried.append(f"`{other['config']}` on the same {shared} runs: {there} (as `{record['config']}` there: {here})")
    return "cause not found; tried: " + "; ".join(tried)


def _on_shared_runs(claim, record: dict, other: dict, inputs: dict | None) -> tuple[str, str, str]:
    """The verdicts of both configurations judged on the runs (data set, fold, seed) they share."""
    if claim is None or not inputs:
        return record["verdict"], other["verdict"], "(unknown)"
    (frame_a, extra_a), (frame_b, extra_b) = inputs[record["config"]], inputs[other["config"]]
    keys = [k for k in ("dataset", "fold", "seed") if k in frame_a and k in frame_b]
    common = frame_a[keys].drop_duplicates().merge(frame_b[keys].drop_duplicates(), on=keys)
    if common.empty:
        return record["verdict"], "no shared runs", "0"
    here = judge(claim, frame_a.merge(common, on=keys), record["config"], **extra_a)["verdict"]
    there = judge(claim, frame_b.merge(common, on=keys), other["config"], **extra_b)["verdict"]
    described = ", ".join(f"{common[k].nunique()} {k}{'s' if common[k].nunique() > 1 else ''}" for k in keys)
    return here, there, f"{len(common)} ({described})"


def record_problems(records: list[dict]) -> list[str]:
    """What breaks the verdict rule in ``records`` (the verdicts page and a test require none): a testable
    record without cells, a "reproduced" one with an interval reaching 0, a "not reproduced" one with no
    interval below 0 or without a cause, an "inconclusive" one with a decided cell."""
    problems = []
    for r in records:
        name, cells = f"{r['paper']}:{r['id']} ({r['config']})", r.get("cells") or []
        low = [c["ci_low"] if c["ci_low"] is not None else float("-inf") for c in cells]
        high = [c["ci_high"] if c["ci_high"] is not None else float("inf") for c in cells]
        if r["verdict"] != "not testable here" and not cells:
            problems.append(f"{name}: a {r['verdict']} record without cells")
        if r["verdict"] == "reproduced" and not all(v > 0 for v in low):
            problems.append(f"{name}: reproduced, but an interval reaches 0")
        if r["verdict"] == "not reproduced" and (not any(v < 0 for v in high) or any(v > 0 for v in low)):
            problems.append(f"{name}: not reproduced without an interval below 0 (or with one above)")
        if r["verdict"] == "not reproduced" and not r.get("cause"):
            problems.append(f"{name}: not reproduced without a cause or 'cause not found'")
        if r["verdict"] == "inconclusive" and (any(v > 0 for v in low) or any(v < 0 for v in high)) \
                and not withheld(r, low):
            problems.append(f"{name}: inconclusive, but a cell is decided")
        sizes = (r.get("magnitude") or {}).get("cells") or []
        if r["verdict"] == SMALLER and not (sizes and all(c["outcome"] == "smaller" for c in sizes)):
            problems.append(f"{name}: smaller than reported, but a cell's interval reaches the paper's number")
        if _has_paper_cell(r) and not r.get("magnitude"):
            problems.append(f"{name}: the paper states a number, but the record has no magnitude beside it")
        if r.get("config_role") not in ("headline", "sensitivity"):
            problems.append(f"{name}: no config_role")
    return problems


def withheld(record: dict, low: list[float]) -> bool:
    """An "inconclusive" whose cells are decided but which the rule itself withholds a verdict from, as its reason
    says: an upper bound's rate (``rate_at_most``) with the slope above it and none below (a bound's constants are
    not measured, so a faster growth contradicts nothing), or a check whose negative control is not rejected by
    the same rule (``controls``: it cannot tell the claim from its negation)."""
    above_rate = record.get("rule") == "rate_at_most" and not any(v > 0 for v in low)
    control_passed = any(c.get("verdict") != "not reproduced" for c in record.get("controls") or [])
    return above_rate or control_passed


def _has_paper_cell(record: dict) -> bool:
    """The paper states a number for one of the record's cells (a table's own s.d. rule aside): a data set the
    paper did not use (a synthetic stand-in) has none."""
    number, cells = record.get("paper_number"), record.get("cells") or []
    if number is None or not cells:
        return False
    return not isinstance(number, dict) or any(c["cell"] in number for c in cells)


def records_frame(records: list[dict]) -> pd.DataFrame:
    columns = ["paper", "id", "source", "claim", "config", "config_role", "paper_value", "ours", "setup", "runs",
               "rule", "verdict", "reason", "cells", "runs_needed", "largest_allowed", "magnitude", "thresholds",
               "cause", "page", "horizon", "paper_horizon", "runs_per_cell", "paper_runs", "scale"]
    return pd.DataFrame(records, columns=columns)


def headline(records: list[dict]) -> list[dict]:
    """One record per claim: its headline configuration's (the paper's text, where it has one)."""
    return [r for r in records if r.get("config_role") == "headline"]


def verdict_counts(records: list[dict], scale: str | None = None) -> pd.DataFrame:
    """Claims per paper and headline verdict (the dashboard's summary): one count per claim, not per
    configuration; ``scale`` ("paper" or "preview"): only the records at that scale (:mod:`.scale`), so that a
    preview is never counted with the paper-scale verdicts."""
    heads = [r for r in headline(records) if scale is None or r.get("scale") == scale]
    frame = records_frame(heads)
    if frame.empty:
        return pd.DataFrame(columns=list(VERDICTS), index=pd.Index([], name="paper"), dtype=int)
    counts = frame.pivot_table(index="paper", columns="verdict", values="id", aggfunc="count", fill_value=0)
    return counts.reindex(columns=list(VERDICTS), fill_value=0)


def differing_configurations(records: list[dict]) -> list[tuple[str, str]]:
    """(paper, id) of the claims whose verdict differs between their configurations."""
    verdicts: dict = {}
    for r in records:
        verdicts.setdefault((r["paper"], r["id"]), set()).add(r["verdict"])
    return [key for key, seen in verdicts.items() if len(seen) > 1]


def threshold_table(records: list[dict]) -> pd.DataFrame:
    """One row per threshold of ours (a claim's unstated parameter): the claim, what the threshold is, its value (with
    its base and distance where it is measured from a base other than 0: "0.767 (0.667 + 0.1)"), and the verdict at
    it, at half and at double its distance from its base; every number and verdict is the record's own."""
    rows = [{"claim": f"{r['paper']}: {r['id']}", "threshold": t["what"], "value": threshold_value(t),
             "verdict": r["verdict"],
             "at half": f"{threshold_text(t['half']['value'])}: {t['half']['verdict']}",
             "at double": f"{threshold_text(t['double']['value'])}: {t['double']['verdict']}"}
            for r in records for t in r.get("thresholds", [])]
    return pd.DataFrame(rows, columns=["claim", "threshold", "value", "verdict", "at half", "at double"])


def threshold_value(threshold: dict) -> str:
    """A threshold as the table shows it: "0.02", or, measured from a base other than 0, "0.767 (0.667 + 0.1)" (base
    and distance; a record without its base has it from its half value: half = base + (value - base) / 2)."""
    value = threshold["value"]
    base = threshold.get("base", 2 * threshold["half"]["value"] - value)
    if abs(base) <= 1e-9 * max(abs(value), 1e-300):
        return threshold_text(value)
    distance = float(f"{value - base:.10g}")
    sign = "+" if distance >= 0 else "-"
    return f"{threshold_text(value)} ({threshold_text(base)} {sign} {threshold_text(abs(distance))})"
