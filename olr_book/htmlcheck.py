"""Checks of the built HTML book, run by ``olr book`` after every build (so CI fails on a regression).

Every page with math must load exactly one MathJax script (pages without math need none), no
page may load a script from the network, its
scripts must stay under a size budget, and the generated (notebook) pages must show code
only behind a toggle (unless a cell is tagged ``show-input``: code that is the page's subject) and
never the parameter cells (the provenance box says what ran). No Markdown table may reach the
reader as text (a paragraph of ``| a | b |`` rows: Markdown a cell printed that did not render), and no table cell
"mean ± s.d." may print its mean past the noise (:func:`olr_core.tables.noise_digit_problems`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SCRIPT_BUDGET_BYTES = 3_000_000          # all scripts of one page together, the search index apart
# The search index (``searchindex.js``, loaded by every page) is the book's words, not code: it grows with the
# text (181 kB at 2026-11-28), so it has a budget of its own instead of eating the code's.
SEARCH_INDEX = "searchindex.js"
SEARCH_INDEX_BUDGET_BYTES = 1_000_000
NETWORK_PREFIXES = ("http://", "https://", "//")


@dataclass
class PageReport:
    page: str
    mathjax_scripts: int
    network_scripts: list
    script_bytes: int
    visible_code_cells: int
    parameter_cells: int
    has_math: bool = True
    raw_tables: int = 0
    noisy_cells: list = field(default_factory=list)
    search_index_bytes: int = 0

    def problems(self) -> list[str]:
        out = []
        if self.mathjax_scripts > 1 or (self.has_math and self.mathjax_scripts != 1):
            expected = "exactly 1 on a page with math" if self.has_math else "at most 1"
            out.append(f"{self.mathjax_scripts} MathJax scripts (expected {expected})")
        if self.network_scripts:
            out.append(f"scripts from the network: {', '.join(self.network_scripts)}")
        if self.script_bytes > SCRIPT_BUDGET_BYTES:
            out.append(f"{self.script_bytes / 1e6:.1f} MB of scripts (budget {SCRIPT_BUDGET_BYTES / 1e6:.1f} MB)")
        if self.search_index_bytes > SEARCH_INDEX_BUDGET_BYTES:
            out.append(f"{self.search_index_bytes / 1e6:.1f} MB of search index (budget "
                       f"{SEARCH_INDEX_BUDGET_BYTES / 1e6:.1f} MB)")
        if self.visible_code_cells:
            out.append(f"{self.visible_code_cells} code cell(s) shown without a toggle")
        if self.parameter_cells:
            out.append(f"{self.parameter_cells} parameter cell(s) rendered")
        if self.raw_tables:
            out.append(f"{self.raw_tables} Markdown table(s) shown as text")
        if self.noisy_cells:
            out.append(f"{len(self.noisy_cells)} table cell(s) printed past their noise: "
                       + ", ".join(repr(c) for c in self.noisy_cells[:3]))
        return out


def is_raw_table(text: str) -> bool:
    """A paragraph that is a Markdown table left unrendered: a row of cells between pipes, then a header
    rule (``|---|`` or, after smart quotes, ``|—|``)."""
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) < 2 or not (lines[0].startswith("|") and lines[0].endswith("|")):
        return False
    rule = lines[1]
    return rule.startswith("|") and set(rule) <= set("|-—–: ") and any(c in rule for c in "-—–")


def check_page(path: Path, root: Path) -> PageReport:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    sources = [tag.get("src") for tag in soup.find_all("script") if tag.get("src")]
    network = [s for s in sources if s.startswith(NETWORK_PREFIXES)]
    size = index = 0
    for src in sources:
        local = (path.parent / src.split("?")[0]).resolve()
        if src not in network and local.is_file():
            if local.name == SEARCH_INDEX:
                index += local.stat().st_size
            else:
                size += local.stat().st_size
    size += sum(len(tag.get_text()) for tag in soup.find_all("script") if not tag.get("src"))
    cells = soup.select("div.cell")
    visible = [c for c in cells if c.select_one("div.cell_input") is not None
               and not ({"tag_hide-input", "tag_remove-input", "tag_show-input"} & set(c.get("class", [])))]
    parameters = soup.select("div.tag_parameters, div.tag_injected-parameters")
    has_math = soup.select_one(".math, span.math, div.math, mjx-container") is not None
    raw_tables = sum(is_raw_table(p.get_text()) for p in soup.find_all("p"))
    return PageReport(str(path.relative_to(root)), sum("mathjax" in s.lower() for s in sources), network, size,
                      len(visible), len(parameters), has_math, raw_tables, noisy_cells(soup), index)


def noisy_cells(soup) -> list[str]:
    """The table cells of a parsed page (or notebook output) whose "mean ± s.d." is printed past its noise."""
    from olr_core.tables import noise_digit_problems

    return noise_digit_problems(td.get_text().strip() for td in soup.find_all("td"))


def notebook_noise_problems(path: Path) -> list[str]:
    """The "mean ± s.d." cells printed past their noise in the HTML outputs of an executed notebook (``path``)."""
    import json

    from bs4 import BeautifulSoup

    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    html = ["".join(out.get("data", {}).get("text/html", "")) for cell in cells for out in cell.get("outputs", [])]
    return noisy_cells(BeautifulSoup("".join(html), "html.parser"))


def check_book(html_root: Path) -> list[str]:
    """One line per problem found in the built book (empty when every page passes)."""
    html_root = Path(html_root)
    problems = []
    for page in sorted(html_root.rglob("*.html")):
        if any(part.startswith("_") for part in page.relative_to(html_root).parts[:-1]) or page.name in (
                "genindex.html", "search.html"):
            continue
        problems += [f"{page.relative_to(html_root)}: {p}" for p in check_page(page, html_root).problems()]
    return problems


def claim_link_problems(page: Path) -> list[str]:
    """Every claim row of a verdict table on ``page`` (a row whose first cell opens with the claim's id, in bold or
    in its ``olr-id`` span) must link (``a.claim-evidence``) to a page of the built book that has the link's anchor."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    problems, targets = [], {}
    for row in soup.select("tr"):
        first = row.find("td")
        name = first.select_one("b, .olr-id") if first is not None else None
        if name is None or first.find(string=True) is not name.find(string=True):
            continue                                       # not a claim row
        link = first.select_one("a.claim-evidence")
        path, _, fragment = link.get("href", "").partition("#") if link else ("", "", "")
        target = (page.parent / path).resolve() if path else page.resolve()
        if link is None or not fragment:
            problems.append(f"claim {name.get_text()}: its row links to no page anchor")
        elif not target.is_file():
            problems.append(f"claim {name.get_text()}: {link['href']} names a page that was not built")
        else:
            if target not in targets:
                text = target.read_text(encoding="utf-8")
                targets[target] = {tag.get("id") for tag in BeautifulSoup(text, "html.parser").find_all(id=True)}
            if fragment not in targets[target]:
                problems.append(f"claim {name.get_text()}: {link['href']} has no anchor #{fragment}")
    return problems


def check_claim_links(html_root: Path, pages=("book/generated/claims.html",)) -> list[str]:
    """One line per claim row of the verdict tables on ``pages`` (paths under ``html_root``; the verdicts page by
    default, the chapters too if named) whose link does not reach an existing page anchor."""
    html_root = Path(html_root)
    problems = []
    for name in pages:
        page = html_root / name
        if not page.is_file():
            problems.append(f"{name}: the page was not built")
            continue
        problems += [f"{name}: {p}" for p in claim_link_problems(page)]
    return problems
