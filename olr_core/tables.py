"""Tables for readers: what every table of the book's pages goes through before it is shown.

:func:`reader_table` turns a data frame into a styled table (class ``olr-table``, styled by the book's
``book/_static/olr.css`` and, for a notebook opened on its own, by the table's own styles) with

- padded cells, and numbers right-aligned in figures of one width, so that neighbouring columns never run together;
- no index column (a named index becomes an ordinary first column; a row counter is dropped);
- column names in words (``click_model`` -> "user", ``paper_mean`` -> "paper mean", :func:`olr_core.names.column_name`)
  and the names of methods, users, data sets and metrics in the cells (:func:`olr_core.names.in_words`); a file
  name or a code span shown as code;
- blanks for missing values (never "NaN" or "None"), "infinite" for an infinite one, never a negative zero;
- numbers to the precision their noise supports (:mod:`olr_core.formatting`): a value with a standard deviation
  beside it (``noise={"mean": "sd"}``) is printed to the decimal of the s.d.'s second significant digit, other
  numbers to ``digits`` significant digits (large ones whole, with thousands separators);
- headers that wrap between words, so that a wide table grows taller instead of hiding columns behind a horizontal
  scroll; a table with more than ``max_columns`` columns and fewer rows is shown transposed.
"""

from __future__ import annotations

import html
import numbers
import re

import numpy as np
import pandas as pd

from .claims import VERDICTS
from .formatting import INFINITE, decimals_for, fixed, is_missing, is_number, significant
from .names import DISPLAY_NAMES, column_name, display_name, in_words

TABLE_CLASS = "olr-table"
CELL_PADDING = "padding: 0.3em 0.7em"
HEADER_STYLE = [
    {"selector": "", "props": "border-collapse: collapse; margin: 0.4em 0 1em"},
    {"selector": "th", "props": f"white-space: normal; overflow-wrap: normal; word-break: normal; "
                                f"text-align: left; vertical-align: bottom; {CELL_PADDING}"},
    {"selector": "td", "props": f"white-space: normal; overflow-wrap: anywhere; word-break: normal; "
                                f"vertical-align: top; {CELL_PADDING}"},
    {"selector": "caption", "props": "caption-side: top; text-align: left"},
]
NUMBER_STYLE = "text-align: right; font-variant-numeric: tabular-nums"
# a number stays on one line ("876 ± 40 %"); a rank after it ("(3)") may go to the next, and a number column's
# header wraps between words like any header, so that a table of many number columns still fits the page
NUMBER_CLASS = "olr-number"
NUMBER_KEPT = {"selector": f"span.{NUMBER_CLASS}", "props": "white-space: nowrap"}
RANK_AFTER = re.compile(r"^(.*?)(\s*\(\d[\d,]*\))?$", re.S)


# any cell may wrap rather than push its table past the page, except a verdict, which keeps its words
KEEP_WORDS = "overflow-wrap: normal; white-space: nowrap; min-width: 9em"
VERDICT_WORD = re.compile(r"\b(" + "|".join(sorted({w for v in VERDICTS for w in v.split()} - {"not", "than", "here"}))
                          + r")\b")
# a cell a reader reads as a number: "0.665", "-1,234", "876 ± 40", "+1.9 %*", "12 (5)", "infinite"
NUMBER_CELL = re.compile(r"^(?:[-+−]?[\d,]*\.?\d+(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?(?:\s*±\s*[\d,]*\.?\d+)?|(?:minus )?infinite"
                         r"|not estimable)\s*%?\*?(?:\s*\(\d[\d,]*\))?$")
def column_label(name) -> str:
    """A column name in words (:func:`olr_core.names.column_name`): an algorithm's id becomes its display name
    (``pairrank_c`` -> "PairRank_C"), ``click_model`` "user", ``paper_mean`` "paper mean"; tuple headers join."""
    if isinstance(name, tuple):
        return " ".join(column_label(part) for part in name if str(part))
    if is_algorithm(name):
        return display_name(name)
    return " ".join(column_name(name).split())


def is_algorithm(value) -> bool:
    """``value`` is an algorithm's id, possibly with parameters ("mgd_dsp(dsp_lambda=0.5)")."""
    return isinstance(value, str) and value.partition("(")[0] in DISPLAY_NAMES


NAME_COLUMNS = {"algorithm", "method", "ranker", "learner", "label", "name"}   # columns whose values name methods


_missing = is_missing
noise_decimals = decimals_for         # (the name the pages know)


def _infinite_text(value) -> str | None:
    return (INFINITE if value > 0 else f"minus {INFINITE}") if np.isinf(value) else None


def fixed_text(value, decimals: int) -> str:
    """``value`` with ``decimals`` decimals and thousands separators; blank when missing, "infinite" when infinite,
    never "-0.0"."""
    if _missing(value):
        return ""
    return _infinite_text(value) or fixed(float(value), decimals)


def significant_text(value, digits: int = 3) -> str:
    """``value`` to at most ``digits`` significant digits, without padding zeros (0.01 stays "0.01"; a number of
    ``digits`` or more integer digits: whole, with thousands separators: 42164.341 -> "42,164"; a tiny one
    "2.5 × 10⁻⁷"); blank when missing, "infinite" when infinite, never "-0.0"."""
    if _missing(value):
        return ""
    if not is_number(value):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    return _infinite_text(value) or significant(float(value), digits)


def cell_text(value, digits: int = 3, decimals: int | None = None) -> str:
    """One cell as a reader sees it: text with names in words (:func:`olr_core.names.in_words`), numbers by
    :func:`fixed_text` (``decimals`` given) or :func:`significant_text`; missing values blank; True/False as
    "yes"/"no"."""
    if _missing(value):
        return ""
    if isinstance(value, str):
        return in_words(value)
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    if is_number(value):
        return significant_text(value, digits) if decimals is None else fixed_text(value, decimals)
    return in_words(str(value))


def readable_frame(frame: pd.DataFrame, digits: int = 3, noise: dict | None = None,
                   index_label: str = "name", decimals: int | None = None) -> pd.DataFrame:
    """``frame`` as text for readers: the index as columns (a plain row counter dropped), column names in words,
    every value formatted by :func:`cell_text`; ``noise``: {value column: s.d. column, or the rows' s.d.s} (a value
    printed to the decimals of its row's s.d., :func:`noise_decimals`; an s.d. column itself too); ``index_label``:
    the header of an unnamed index of labels; ``decimals``: a fixed number of decimals for the numbers without an
    s.d. (else ``digits`` significant digits)."""
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"reader_table takes a pandas DataFrame or Series, not {type(frame).__name__}")
    frame = _index_as_columns(frame, index_label)
    noise = dict(noise or {})
    noise.update({sd: sd for sd in list(noise.values()) if isinstance(sd, str) and sd in frame})
    out = {}
    for name in frame.columns:
        sds = noise.get(name)
        sds = frame[sds] if isinstance(sds, str) and sds in frame else sds
        places = [noise_decimals(s) for s in sds] if sds is not None and not isinstance(sds, str) \
            else [decimals] * len(frame)
        values = frame[name].map(lambda v: display_name(v) if is_algorithm(v) else v) \
            if str(name) in NAME_COLUMNS else frame[name]
        label = column_label(name)
        label = label if label not in out else " ".join(str(name).replace("_", " ").split())   # two names, one word
        out[label] = [cell_text(v, digits, d) for v, d in zip(values, places)]
    return pd.DataFrame(out, columns=list(out))


def _index_as_columns(frame: pd.DataFrame, index_label: str) -> pd.DataFrame:
    unnamed = all(n is None for n in frame.index.names)
    if unnamed and (frame.index.nlevels == 1 and pd.api.types.is_integer_dtype(frame.index)):
        return frame.reset_index(drop=True)       # a row counter (0-17 twice after a concat), not a label
    names = [n if n is not None else (index_label if i == 0 else f"{index_label} {i + 1}")
             for i, n in enumerate(frame.index.names)]
    return frame.reset_index(names=names)


def reader_table(frame: pd.DataFrame, digits: int = 3, noise: dict | None = None, caption: str | None = None,
                 max_columns: int = 9, index_label: str = "name", decimals: int | None = None):
    """The styled table a page displays (see the module's docstring): no index, words for names, blanks for
    missing values, no negative zero, precision fitting the noise; transposed when it has more than
    ``max_columns`` columns and fewer rows than columns."""
    caption = caption if caption is not None else getattr(frame, "attrs", {}).get("caption")
    text = readable_frame(frame, digits, noise, index_label, decimals)
    if text.shape[1] > max_columns and len(text) < text.shape[1]:
        text = _transposed(text)
    return styled(text, caption)


def number_columns(text: pd.DataFrame) -> list[int]:
    """The positions of the columns whose every filled cell reads as a number (:data:`NUMBER_CELL`)."""
    def numeric(column):
        filled = [str(v).strip() for v in column if str(v).strip()]
        return bool(filled) and all(NUMBER_CELL.match(v) for v in filled)
    return [i for i, name in enumerate(text.columns) if numeric(text.iloc[:, i])]


def cell_html(text: str) -> str:
    """A cell's text as HTML: escaped, its `code` spans as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text), quote=False))


def number_html(text: str) -> str:
    """A number cell's HTML: the number unbroken (:data:`NUMBER_CLASS`), a rank after it free to wrap."""
    number, rank = RANK_AFTER.match(str(text)).groups()
    if not number.strip():
        return cell_html(text)
    return f'<span class="{NUMBER_CLASS}">{cell_html(number)}</span>{cell_html(rank or "")}'


def styled(text: pd.DataFrame, caption: str | None = None):
    """The one look of the book's result tables, for a frame of cell texts: class ``olr-table``, padded cells,
    numbers right-aligned and unbroken, headers wrapping between words, verdicts unbroken, code spans as code."""
    numbers_at = number_columns(text)
    shown = text.map(cell_html)
    for i in numbers_at:
        shown.iloc[:, i] = text.iloc[:, i].map(number_html)
    shown.columns = [cell_html(c) for c in shown.columns]
    styles = HEADER_STYLE + [NUMBER_KEPT] + [{"selector": f"td.col{i}, th.col{i}", "props": NUMBER_STYLE}
                                             for i in numbers_at]
    styler = (shown.style.hide(axis="index").set_table_styles(styles)
              .set_table_attributes(f'class="{TABLE_CLASS}"'))
    styler = styler.map(lambda v: KEEP_WORDS if isinstance(v, str) and VERDICT_WORD.search(v) else "")
    return styler.set_caption(cell_html(in_words(caption))) if caption else styler


def _transposed(text: pd.DataFrame) -> pd.DataFrame:
    """Rows become columns, headed by the first column's values (by as many leading columns, joined by " · ", as
    make every header unique: a dataset repeated over click models heads "MQ2008 · perfect"); the old column names
    become the first column."""
    lead = next((k for k in range(1, text.shape[1]) if _joined(text, k).is_unique), 1)
    heads = list(_joined(text, lead))
    if len(set(heads)) < len(heads):            # identical rows: number the repeats, a header must be unique
        heads = [h if heads[:i].count(h) == 0 else f"{h} ({heads[:i].count(h) + 1})" for i, h in enumerate(heads)]
    body = text.iloc[:, lead:].T
    body.columns = heads
    return body.reset_index(names=[" · ".join(str(c) for c in text.columns[:lead]) or "column"])


def _joined(text: pd.DataFrame, leading: int) -> pd.Series:
    return text.iloc[:, :leading].astype(str).agg(" · ".join, axis=1)


def params_text(params: dict) -> str:
    """Hyper-parameters per method in words, not as a dict: {"pairrank_c": {"alpha": 0.01}} -> "PairRank_C: alpha
    0.01" (methods by their display names, methods without parameters left out, "; " between methods)."""
    parts = [f"{display_name(method)}: " + ", ".join(f"{column_label(k)} {_param_value(v)}" for k, v in values.items())
             for method, values in params.items() if values]
    return "; ".join(parts) if parts else "the defaults"


def _param_value(value) -> str:
    """A hyper-parameter as set (0.01, 10, 49), without padding zeros."""
    return format(value, "g") if is_number(value) and not _missing(value) else cell_text(value)


def mean_sd_text(means, sds) -> list[str]:
    """"mean ± s.d." per row, both to the decimals the s.d. supports (:func:`noise_decimals`): "876 ± 40"; a mean
    whose runs all agree "0.693 ± 0" (3 significant digits, its s.d. is 0); without an s.d. (one run) the mean
    alone; blank without a mean."""
    out = []
    for mean, sd in zip(means, sds):
        places = noise_decimals(sd)
        if _missing(mean):
            out.append("")
        elif places is None:
            out.append(cell_text(mean) + (" ± 0" if not _missing(sd) and sd == 0 and np.isfinite(mean) else ""))
        else:
            out.append(f"{fixed_text(mean, places)} ± {fixed_text(sd, places)}")
    return out


def mean_sd_table(stats: pd.DataFrame, index, columns=None, spread: str = "std") -> pd.DataFrame:
    """A table of "mean ± spread" cells (:func:`mean_sd_text`) from the per-group statistics of
    :func:`olr_core.experiments.mean_ci` (``spread``: its ``std`` or its interval half-width ``ci``), rows
    ``index`` and columns ``columns`` (one column "mean ± spread" without)."""
    cells = stats.assign(cell=mean_sd_text(stats["mean"], stats[spread]))
    if columns is None:
        label = "mean ± s.d." if spread == "std" else "mean ± 95 % interval"
        return cells.set_index(index)[["cell"]].rename(columns={"cell": label})
    return cells.pivot_table(index=index, columns=columns, values="cell", aggfunc="first", sort=False)


MEAN_SPREAD = re.compile(r"^\s*([-+]?[\d,]*\.?\d+)\s*±\s*([\d,]*\.?\d+)")


def _decimals(number: str) -> int:
    return len(number.partition(".")[2])


def noise_digit_problems(cells) -> list[str]:
    """The cells "mean ± spread" (text as printed) whose digits do not fit the noise: the mean with other decimals
    than its spread, or a spread with decimals printed to more than two significant digits ("0.412 ± 0.0131")."""
    out = []
    for cell in cells:
        match = MEAN_SPREAD.match(str(cell))
        if not match:
            continue
        mean, spread = match.groups()
        digits = len(spread.replace(",", "").replace(".", "").lstrip("0"))
        if spread == "0":                   # runs that all agree: the mean as computed, its s.d. exactly 0
            continue
        if _decimals(mean) != _decimals(spread) or (_decimals(spread) > 0 and digits > 2):
            out.append(str(cell))
    return out


def mean_sd_columns(frame: pd.DataFrame, by, values, spread: str = "std") -> pd.DataFrame:
    """One "mean ± spread" column per column of ``values`` (rows: the groups ``by``), each from
    :func:`olr_core.experiments.mean_ci` over the rows of ``frame`` (one row a run, or a seed's mean)."""
    from .experiments import mean_ci

    by = [by] if isinstance(by, str) else list(by)
    columns = {value: mean_sd_table(mean_ci(frame, by, value), by, spread=spread).iloc[:, 0] for value in values}
    return pd.DataFrame(columns)
