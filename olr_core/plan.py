"""What a build still has to compute, and what it would cost (``olr book --plan``, ``olr claims --plan``),
from the run specs alone and the store's record of the CPU seconds of the runs it holds."""

from __future__ import annotations

from .experiments import ResultStore
from .experiments.runner import spec_key


def claim_grids(paper: str | None, profile: str, data_dir=None, seeds: int | None = None) -> dict[tuple, list]:
    """{(paper, configuration, experiment): run specs} of the claims of ``paper`` (every paper for None) at
    ``profile``: the grids :func:`..reproductions.verdicts.paper_frames` computes."""
    from .data.registry import find_datasets
    from .reproductions.verdicts import PROFILES, _modules

    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    out = {}
    for module in _modules(paper):
        datasets, _ = find_datasets(module.MAIN_DATASETS, data_dir)
        for config in module.CONFIGS:
            grids = module.experiments(profile, config, datasets, data_dir=data_dir, seeds=seeds)
            out.update({(module.PAPER, config, name): specs for name, specs in grids.items() if specs})
    return out


def claim_run_keys(paper: str | None, profile: str, data_dir=None, store: ResultStore | None = None) -> list[str]:
    """The keys of the claims' runs of ``paper`` at ``profile`` that ``store`` holds (in grid order, once each)."""
    store = store or ResultStore()
    keys = (spec_key(s, data_dir) for specs in claim_grids(paper, profile, data_dir).values() for s in specs)
    return [k for k in dict.fromkeys(keys) if store.has(k)]
