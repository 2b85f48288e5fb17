"""The paper-scale ledger: each paper's claim records computed at the paper profile, shipped in the repository.

``ledger/<paper>.json`` holds, for one paper, every claim record (verdict, cells with their margins and
intervals, horizon and runs beside the paper's, :mod:`.scale`), the per-run value each record rests on keyed
by its run key, each run's ids, and how it was made: profile, code fingerprint (the hash of the run-changing
source that every run key contains, :func:`olr_core.experiments.spec.code_fingerprint`), package version,
date, machine and CPU seconds. No trace is stored: the file is the verdicts' evidence, not a results store.

The file ends in a SHA-256 checksum of its content: a corrupt or hand-edited ledger is refused
(:class:`LedgerError`, one line naming the file and the command that remakes it). A ledger is written whole to
a temporary file and renamed over the old one, so an interrupted write leaves the old ledger; the runs
themselves are stored in the results store as each finishes, so an interrupted computation loses none.

A ledger run whose key the current code would not give again (the code, version or data changed) is
*stale*: :func:`stale_records` names the claims resting on such runs and the command that refreshes them.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import tempfile
from pathlib import Path

from .. import __version__, settings
from ..experiments import ResultStore
from ..experiments.costs import LEDGER_KIND
from ..experiments.runner import spec_key
from ..experiments.spec import code_fingerprint

FORMAT = 1
LEDGER_DIR = Path(__file__).resolve().parents[2] / "ledger"


class LedgerError(ValueError):
    """A ledger that cannot be trusted (corrupt, edited, or of another format); its message is one line."""


def ledger_dir() -> Path:
    """Where the ledgers are: ``$OLR_LEDGER_DIR`` or the repository's ``ledger/``."""
    return Path(settings.ledger_dir() or LEDGER_DIR)


def ledger_path(paper: str) -> Path:
    return ledger_dir() / f"{paper}.json"


def refresh_command(paper: str) -> str:
    return f"olr claims {paper} --profile paper --write-ledger --data-dir DATA_DIR"


def _checksum(body: dict) -> str:
    """SHA-256 of the body's canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def machine() -> str:
    """The computing machine, as a reader can compare it: processor, cores, system, Python."""
    return (f"{platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}").replace("  ", " ")


def tuning_choices(paper: str) -> dict[str, dict | None]:
    """{tuning page: its stored choice, None where it has not run} of the tuning pages whose choices set the
    parameters of ``paper``'s claim runs (none for the papers run at fixed parameters): the tuning the ledger's
    runs were made with."""
    from .neural import experiments as neural
    from .pairrank import experiments as pairrank

    files = {"pairrank_tuning": pairrank.tuned_path, "neural_tuning": neural.tuned_path}
    used = {"pairrank": ("pairrank_tuning",), "neural": ("pairrank_tuning", "neural_tuning")}.get(paper, ())
    return {page: pairrank.stored_choice(files[page](), page) for page in used}


def build_ledger(paper: str, profile: str, records: list[dict], store: ResultStore | None = None,
                 wall_seconds: float | None = None, command: str = "") -> dict:
    """The ledger of ``paper`` from its records computed with ``keep_runs`` (:func:`.verdicts.claim_records`):
    the records without their runs, each with ``run_values`` ({metric, values: {run key: value}}); the runs'
    ids and CPU seconds once in ``runs``; the profile, code fingerprint, version, date, machine and total CPU
    seconds of the runs; ``tuned``: the tuning pages' choices the runs' parameters came from
    (:func:`tuning_choices`)."""
    store = store or ResultStore()
    runs, kept = {}, []
    for record in records:
        ids = record.get("run_ids") or {}
        for key, described in ids.items():
            runs.setdefault(key, {**described, "cpu_seconds": _cpu_seconds(store, key)})
        kept.append({k: v for k, v in record.items() if k != "run_ids"})
    return {"format": FORMAT, "paper": paper, "profile": profile, "code": code_fingerprint(),
            "version": __version__, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine(), "cpu_seconds": round(sum(r["cpu_seconds"] or 0.0 for r in runs.values()), 1),
            "wall_seconds": None if wall_seconds is None else round(wall_seconds, 1), "command": command,
            "tuned": tuning_choices(paper), "records": kept, "runs": runs}


def design_fields(spend) -> dict:
    """A budgeted ledger's design (:class:`olr_core.adaptive.Spend`): the budget and its priced spend, and
    ``looks``, {experiment: the look it ended at, its seeds and two-sided level}, from which its runs are keyed
    again (:func:`ledger_runs`)."""
    return {"budget": {"cpu_seconds": round(spend.budget, 1), "spent": round(spend.spent, 1),
                       "profile_cost": round(spend.profile_cost, 1)},
            "looks": {exp: {"index": look.index, "seeds": look.seeds, "level": look.level}
                      for (_, exp), look in sorted(spend.looks.items())}}


def run_costs() -> dict[tuple[str, str], list]:
    """{(``LEDGER_KIND`` + algorithm, data set): [(rounds, CPU seconds)]} of every ledger run: what a plan prices
    a kind of run with when this store has never run it (a fresh clone's paper-profile plan)."""
    from .verdicts import PAPERS

    costs = {}
    for paper in PAPERS:
        book = read_ledger(paper)
        for run in (book or {}).get("runs", {}).values():
            if run.get("cpu_seconds") is not None and run.get("rounds_run"):
                costs.setdefault((LEDGER_KIND + run["algorithm"], run["dataset"]), []).append(
                    (int(run["rounds_run"]), float(run["cpu_seconds"])))
    return costs


def _cpu_seconds(store: ResultStore, key: str) -> float | None:
    """The CPU seconds the stored run took (None where the store does not hold it)."""
    return round(store.run_seconds(key)[1], 3) if store.has(key) else None


def write_ledger(ledger: dict, path: Path | None = None) -> Path:
    """Write ``ledger`` with its checksum, atomically (:func:`write_checked`)."""
    return write_checked(ledger, Path(path or ledger_path(ledger["paper"])))


def write_checked(body: dict, path: Path) -> Path:
    """Write ``body`` as strict JSON ending in its checksum, atomically (a temporary file in the same folder renamed
    over the old), gzipped where ``path`` ends in ``.gz``; NaN and infinities (an unbounded interval) become null."""
    import gzip

    from ..claims import json_safe

    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.loads(json.dumps(json_safe(body), allow_nan=False, default=_json_default))   # plain, strict JSON
    text = json.dumps({**body, "checksum": _checksum(body)}, sort_keys=True, indent=1, allow_nan=False) + "\n"
    data = gzip.compress(text.encode(), mtime=0) if path.suffix == ".gz" else text.encode()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(temporary, 0o644)                    # (mkstemp makes it private; a ledger is shared)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def read_ledger(paper: str, path: Path | None = None) -> dict | None:
    """The ledger of ``paper`` (None where there is none), its checksum verified; :class:`LedgerError` (one line
    naming the file and the fix) where it is corrupt, edited by hand or of another format."""
    return read_owned(Path(path or ledger_path(paper)), "paper", paper, FORMAT, refresh_command(paper))


def read_owned(path: Path, key: str, owner: str, form: int, remake: str) -> dict | None:
    """The checked ledger file ``path`` (None where there is none) whose ``key`` names ``owner`` (a paper, or a
    figure ledger's page) in format ``form``; :class:`LedgerError` (one line naming the file and the command
    ``remake`` that remakes it) where it is corrupt, edited, of another format or of another owner."""
    if not path.exists():
        return None
    fix = f"remake it with `{remake}` (or restore it with `git checkout -- {path.name}`)"
    stored = read_checked(path, fix)
    if stored.get("format") != form or stored.get(key) != owner:
        raise LedgerError(f"{path}: a ledger of format {stored.get('format')} for {stored.get(key)!r}, "
                          f"expected format {form} for {owner!r}; {fix}")
    return stored


def read_checked(path: Path, fix: str) -> dict:
    """The JSON object of ``path`` (gzipped where it ends in ``.gz``) without its checksum, verified;
    :class:`LedgerError` (one line naming the file and ``fix``) where it is unreadable, has no checksum or one
    its content does not match."""
    import gzip

    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        stored = json.loads(raw.decode())
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise LedgerError(f"{path}: unreadable ({type(err).__name__}); {fix}") from None
    if not isinstance(stored, dict) or "checksum" not in stored:
        raise LedgerError(f"{path}: no checksum, not a ledger; {fix}")
    claimed = stored.pop("checksum")
    if _checksum(json.loads(json.dumps(stored, sort_keys=True))) != claimed:
        raise LedgerError(f"{path}: checksum mismatch (the file was edited or is corrupt); {fix}")
    return stored


def current_runs(paper: str, profile: str, data_dir=None, seeds: int | None = None,
                 tuned: dict | None = None, looks: dict | None = None) -> tuple[set[str], set[str]]:
    """The run keys the current code gives the paper's claim runs at ``profile`` (laid out, nothing run), and the
    data sets those runs use: the ones found here (a run on a data set this machine lacks cannot be keyed).
    ``tuned``: the tuning choices to lay them out with (a ledger's ``tuned``), not this store's; ``looks``:
    {experiment: {"seeds": n, ...}} of a budgeted ledger, whose experiments ran at their last look's seeds."""
    from .pairrank.experiments import pinned_tuning
    from .verdicts import claim_grids

    seeds_of = {exp: look["seeds"] for exp, look in (looks or {}).items()}
    specs = []
    with pinned_tuning(tuned):
        for n in {seeds, *seeds_of.values()}:
            specs += [s for (_, _, exp), group in claim_grids(paper, profile, data_dir, n).items()
                      if seeds_of.get(exp, seeds) == n for s in group]
    return {spec_key(s, data_dir) for s in specs}, {s.dataset for s in specs}


def ledger_runs(book: dict, data_dir=None) -> tuple[set[str], set[str]]:
    """:func:`current_runs` laid out as ``book`` (a ledger) was computed: its profile, seeds, tuning and looks."""
    return current_runs(book["paper"], book["profile"], data_dir, book.get("seeds"), book.get("tuned"),
                        book.get("looks"))


def current_keys(paper: str, profile: str, data_dir=None, seeds: int | None = None) -> set[str]:
    """:func:`current_runs`' keys."""
    return current_runs(paper, profile, data_dir, seeds)[0]


def stale_records(ledger: dict, keys: set[str], datasets: set[str] | None = None) -> list[dict]:
    """The ledger's records that rest on a run whose key is not among ``keys`` (:func:`current_keys`): each
    {id, config, stale_runs}; empty where every run would get the same key today. With ``datasets`` (the data
    sets found here), a run on another data set is not judged: it cannot be keyed on this machine."""
    stale = []
    for record in ledger["records"]:
        values = (record.get("run_values") or {}).get("values", {})
        missing = [k for k in values if k not in keys and _checkable(ledger, k, datasets)]
        if missing:
            stale.append({"id": record["id"], "config": record["config"], "stale_runs": len(missing)})
    return stale


def _checkable(ledger: dict, key: str, datasets: set[str] | None) -> bool:
    return datasets is None or ledger["runs"].get(key, {}).get("dataset") in datasets


def unchecked_datasets(ledger: dict, datasets: set[str]) -> list[str]:
    """The ledger's data sets not found here, whose runs' keys could not be checked."""
    return sorted({r.get("dataset") for r in ledger["runs"].values()} - set(datasets) - {None})


def stale_note(paper: str, stale: list[dict]) -> str:
    """One line naming the stale claims and the command that refreshes them ("" where none is stale)."""
    if not stale:
        return ""
    names = ", ".join(sorted({s["id"] for s in stale}))
    return (f"{paper}: {len({s['id'] for s in stale})} claims of the ledger rest on runs the current code would key "
            f"differently (stale: {names}); refresh with `{refresh_command(paper)}`")


def ledger_records(ledger: dict, stale: list[dict] | None = None) -> list[dict]:
    """The ledger's records for printing: each with ``source_of_verdict`` ("ledger"), the ledger's date and code,
    and ``stale`` (True where :func:`stale_records` names it)."""
    stale_ids = {(s["id"], s["config"]) for s in stale or []}
    return [{**r, "ledger": {"date": ledger["date"], "code": ledger["code"], "profile": ledger["profile"]},
             "stale": (r["id"], r["config"]) in stale_ids} for r in ledger["records"]]


SMOKE = ("agrees", "disagrees", "quick run undecided", "no quick run")


def smoke_check(ledger_record: dict, quick: dict | None) -> str:
    """This build's quick record beside the ledger's verdict: "agrees" (the same verdict), "disagrees" (the quick
    runs decide otherwise), "quick run undecided" (inconclusive on the quick runs, where the ledger decides: fewer
    runs, not a contradiction) or "no quick run" (this build has no testable quick record of the claim)."""
    if quick is None or quick.get("verdict") == "not testable here":
        return "no quick run"
    if quick["verdict"] == ledger_record["verdict"]:
        return "agrees"
    return "quick run undecided" if quick["verdict"] == "inconclusive" else "disagrees"


def book_records(quick: list[dict], papers, data_dir=None) -> tuple[list[dict], dict[str, str]]:
    """The records the book shows, and one note per paper saying where they come from. A paper with a ledger
    shows the ledger's records (without their per-run values), each with ``smoke``: this build's quick record of
    the same claim and configuration beside it (:func:`smoke_check`) and ``quick_verdict``; the note gives the
    ledger's date, code and CPU seconds, and names the stale claims with the command that refreshes them. A paper
    without a ledger (or with one refused, :class:`LedgerError`) shows this build's quick records, which the
    horizon rule marks as previews where they are shorter or fewer than the paper's runs."""
    shown, notes = [], {}
    for paper in papers:
        mine = [r for r in quick if r["paper"] == paper]
        try:
            book = read_ledger(paper)
        except LedgerError as err:
            book, notes[paper] = None, f"ledger refused: {err}; showing this build's quick runs, as previews"
        if book is None:
            shown += [{**r, "verdict_source": "this build"} for r in mine]
            notes.setdefault(paper, f"no ledger yet: this build's quick runs, shown as previews (write it with "
                                    f"`{refresh_command(paper)}`)")
            continue
        keys, datasets = ledger_runs(book, data_dir)
        stale, unchecked = stale_records(book, keys, datasets), unchecked_datasets(book, datasets)
        quick_of = {(r["id"], r["config"]): r for r in mine}
        for r in ledger_records(book, stale):
            q = quick_of.get((r["id"], r["config"]))
            shown.append({**{k: v for k, v in r.items() if k != "run_values"}, "verdict_source": "ledger",
                          "smoke": smoke_check(r, q), "quick_verdict": q["verdict"] if q else None})
        notes[paper] = (f"ledger of {book['date'][:10]} ({book['profile']} profile, code {book['code']}, "
                        f"{len(book['runs']):,} runs, {book['cpu_seconds']:,.0f} CPU s on {book['machine']})"
                        + (f"; {stale_note(paper, stale)}" if stale else "")
                        + (f"; runs on {', '.join(unchecked)} (not found here) not checked for staleness"
                           if unchecked else ""))
    return shown, notes
