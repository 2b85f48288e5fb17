"""``olr book --plan``: the runs each page would compute and their estimated cost, executing nothing."""

from __future__ import annotations

import os
from pathlib import Path

from .execute import BuildContext
from .manifest import Page, load_pages, project_root, select_pages


def page_specs(root: Path, page: Page, profile: str, data_dir: str | None = None) -> list:
    """The run specs ``page`` would compute at ``profile`` (:func:`olr_core.plan.page_specs`), its data seen as
    its page process would see it (the context's environment, applied to this process)."""
    from olr_core.plan import page_specs as notebook_specs

    os.environ.update(BuildContext.create(root, profile, data_dir).environment())
    return notebook_specs(page.path, page.parameters(profile))


def book_plan(profile: str, only: str | None = None, data_dir=None, cores: int | None = None, store=None) -> str:
    """Per page of the manifest (or those ``only`` names), the runs it would compute that the store lacks."""
    from olr_core.experiments import ResultStore
    from olr_core.plan import format_plan, plan_groups

    root = project_root()
    context = BuildContext.create(root, profile, data_dir)
    groups = {page.name: page_specs(root, page, profile, data_dir) for page in select_pages(load_pages(root), only)}
    rows = plan_groups(groups, store or ResultStore(context.results_dir), context.data_dir)
    return format_plan(rows, f"olr book --profile {profile}", cores or os.cpu_count() or 1)
