"""Where each parameter of a configuration other than a paper's text comes from.

A configuration such as DSP's or PairRank's ``code`` sets parameters the way the authors' public
scripts set them. Each such value is written as :class:`Cited` ``(value, "owner/repo/path:LINE")``
beside the parameter, so that the reproduction-choices tables print the file and line it was read
from (:func:`citation_rows`). The repositories were read at the commits in :data:`COMMITS`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

HCDM = "HCDM/OnlineLearningToRank"      # the framework of the DSP, PairRank and neural papers' authors
PAIRRANK = "yilingjia/PairRank"          # the PairRank authors' release of that framework
COMMITS = {HCDM: "bfb9d70", PAIRRANK: "ca4ab72"}


class Cited(NamedTuple):
    """A parameter value and the place in the authors' code it was read from ("repo/path:LINE[, ...]")."""

    value: Any
    source: str


def plain(params: dict) -> dict:
    """``params`` with every :class:`Cited` value replaced by the value itself."""
    return {key: value.value if isinstance(value, Cited) else value for key, value in params.items()}


def uncited(params: dict) -> list[str]:
    """The keys of ``params`` whose value carries no citation (a test keeps this empty)."""
    return [key for key, value in params.items() if not isinstance(value, Cited) or not value.source]


def citation_rows(config: str, scope: str, params: dict, choice: str = "") -> list[dict]:
    """One table row per cited parameter: configuration, choice, applies to, parameter, value, source."""
    return [{"configuration": config, "choice": choice, "applies to": scope, "parameter": key,
             "value": value.value, "authors' code": value.source}
            for key, value in params.items() if isinstance(value, Cited)]


def citation_table(rows: list[dict]) -> pd.DataFrame:
    """The rows of :func:`citation_rows` as the table a chapter's reproduction choices print."""
    columns = ["configuration", "choice", "applies to", "parameter", "value", "authors' code"]
    table = pd.DataFrame(rows, columns=columns)
    return table.drop(columns=[c for c in ("choice",) if not table[c].astype(bool).any()])
