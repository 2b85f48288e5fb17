"""The built book checked in a real browser (headless Chromium from Debian's packages, driven by Selenium).

``python -m olr_book.browsercheck _build/html`` (``make browser-test``) opens every page and reports:

- a JavaScript console error, a request that failed, or one that leaves the machine (every URL must
  be ``file:`` or ``data:``);
- math not typeset: a ``.math`` element of the page without a rendered MathJax container in it, or raw
  TeX delimiters (``\\(``, ``\\[``, ``$$``, ``$\\name``) left in the text outside code;
- an image that did not load (``naturalWidth`` 0) or has no alt text;
- headings that skip a level (an ``h4`` right after an ``h2``);
- a generated page whose code toggle does not open its code, and a search page that finds nothing for
  a word every chapter uses;
- what a reader should never see: a verdict word broken across two lines (the rectangles of its
  letters on two lines) or overflowing the element that holds it (an element width check), text that is a raw
  Python dict (``{'``), an absolute file-system path, ``NaN``, ``inf``, ``n/a``, a number in e-notation
  (``-5.32e-13``) or a negative zero (``-0.0``), and a table whose first column is an unnamed index (row
  headers under an empty header cell) or that is wider than the page's main column (columns behind a
  horizontal scroll);
- a number with more significant digits than its noise supports: "mean ± s.d." whose mean has other decimals
  than its s.d. or whose s.d. shows more than two significant digits, and "estimate [low, high]" printed past
  two significant digits of the interval's width (:func:`olr_core.formatting.interval_digit_problems`);
- a result table without cell padding (its columns run together: "847 ± 3876" for "847 ± 38 | 76");
- a snake_case identifier (``epsilon_greedy``, ``final:cosine_to_reference``) or literal Markdown (a backtick,
  ``**bold**``, ``[text](link)``) in prose: names and markup are for code, where they stay. Code the
  authors wrote is not reader text: code cells and inline code in prose are left out of these checks;
- a link in the page's text to a local page that does not exist or to an anchor that page does not have;
- the verdict table (``table.olr-verdicts``) with a word broken inside (the rectangles of its letters on two
  lines) or a claim's row taller than :data:`MAX_ROW_PX` at the check's width of :data:`WIDE_PX`;
- a figure (an image in the page's main column) without a caption, without the book's number ("Figure 12.") at
  the start of its caption, naming a figure of its own ("Figure 3") without saying whose (the paper's), or shown
  at less than :data:`MIN_FIGURE_SCALE` of its drawn width (labels too small to read);
- two series of one figure (its ``data-series``, :func:`olr_core.plotting.figure_series`; of one row, where each row
  of small multiples has its own legend) told apart by colour only and indistinguishable under simulated
  deuteranopia or protanopia (:func:`olr_core.colours.confusable`);
- a page wider than the window at :data:`NARROW_PX` (a phone): anything that makes the page scroll sideways;
- an intro or verdicts page whose first screen does not state the verdict counts with their scale (the summary's
  lead, ``.olr-answer``).

It saves screenshots of the intro, a chapter and the verdicts page under ``--screenshots``. The browser
never reaches the network: pages are opened from disk, and a request elsewhere is reported, not made.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from olr_core.formatting import interval_digit_problems
from olr_core.tables import noise_digit_problems

from .htmlcheck import check_claim_links

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:", "chrome-extension:", "devtools:")
VERDICT_WORDS = ("reproduced", "partly", "smaller", "reported", "inconclusive", "testable")
# Text a reader should never meet (outside code cells): a name, and a JavaScript regular expression.
READER_TEXT = {
    "raw dict": r"\{'",
    "absolute path": r"(?:^|[\s(\['\"=,;])(?:/(?:home|work|tmp|usr|var|root|opt|mnt|srv|data|Users|private)"
                     r"(?:/[\w.\-]+)+|[A-Za-z]:\\[\w.\-])",
    "NaN": r"\bNaN\b",
    "inf": r"(?<![\w-])[-+]?inf\b",
    "n/a": r"\bn/a\b",
    "e-notation": r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]\d+\b",
    "negative zero": r"(?<![\w.])[-\u2212]0(?:\.0+)?(?![\d.])",
}
# In prose (text outside code, pre and math): a code identifier, and Markdown that was never rendered.
SNAKE_CASE = re.compile(r"(?<![A-Za-z0-9_])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![A-Za-z0-9_])")
MARKDOWN = {"backtick": re.compile(r"`"), "bold": re.compile(r"\*\*[^*\s]|[^*\s]\*\*"),
            "link": re.compile(r"\[[^\]\n]+\]\([^)\s]+\)"), "heading": re.compile(r"(?m)^\s*#{1,6} \S")}
MIN_PADDING = 4          # px of horizontal padding a table cell needs (left + right) for its column to stand apart
SCREENSHOTS = {"intro": "book/intro.html", "chapter": "book/pairrank.html", "verdicts": "book/generated/claims.html"}
WIDE_PX, NARROW_PX = 1400, 400       # the reader's desktop and phone widths
MAX_ROW_PX = 600                     # a claim's row of the verdict table (its details folded) at WIDE_PX
MIN_FIGURE_SCALE = 0.6               # a figure shown narrower than this share of its drawn width is too small
VERDICT_TABLE = "table.olr-verdicts"
ANSWER_PAGES = ("book/intro.html", "book/generated/claims.html")   # their first screen states the verdict counts
FIRST_SCREEN_PX = 1000

# Runs in the page after MathJax has typeset it: every check that reads the DOM, in one round trip.
PAGE_PROBE = r"""
const done = arguments[arguments.length - 1];
const VERDICT_WORDS = __VERDICT_WORDS__;
const READER_TEXT = __READER_TEXT__;
const ready = (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise
                                                                             : Promise.resolve();
const settle = () => new Promise(r => setTimeout(r, 50));
ready.then(settle).then(() => {
  const math = [...document.querySelectorAll('.math')];
  const unrendered = math.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 60));
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const raw = [];
  const pattern = /\\\(|\\\[|\$\$|\$\\[a-zA-Z]/;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest('pre, code, script, style, mjx-container, .math, textarea')) continue;
    if (pattern.test(node.textContent)) raw.push(node.textContent.trim().slice(0, 60));
  }
  const images = [...document.images].map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0,
                                                alt: (i.getAttribute('alt') || '').trim()}));
  const levels = [...document.querySelectorAll('main h1, main h2, main h3, main h4, main h5, main h6')]
                 .map(h => +h.tagName[1]);
  const skips = [];
  for (let i = 1; i < levels.length; i++)
    if (levels[i] > levels[i - 1] + 1) skips.push(`h${levels[i - 1]} -> h${levels[i]}`);
  const shown = node => !node.parentElement.closest('script, style, textarea, .cell_input, mjx-container, .math, '
                                                    + 'noscript, .headerlink, p code, li code, td code');
  const splits = [];
  const texts = [];
  const words = new RegExp(`\\b(${VERDICT_WORDS.join('|')})\\b`, 'gi');
  const textWalker = document.createTreeWalker(document.querySelector('main') || document.body,
                                               NodeFilter.SHOW_TEXT);
  while (textWalker.nextNode()) {
    const node = textWalker.currentNode;
    if (!shown(node) || !node.textContent.trim()) continue;
    texts.push(node.textContent);
    for (const m of node.textContent.matchAll(words)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) splits.push(m[0]);
      const box = node.parentElement.getBoundingClientRect();      // the element width check
      const word = range.getBoundingClientRect();
      if (word.width > 0 && (word.right > box.right + 1 || word.left < box.left - 1)) splits.push(m[0]);
    }
  }
  const whole = texts.join('\n');
  const reader = [];
  for (const [name, source] of Object.entries(READER_TEXT)) {
    const m = whole.match(new RegExp(source, 'm'));
    if (m) reader.push([name, whole.slice(Math.max(0, m.index - 20), m.index + 40).replace(/\s+/g, ' ')]);
  }
  const indexTables = [...document.querySelectorAll('main table')].filter(t => {
    const body = [...t.querySelectorAll('tbody tr')];
    const head = [...t.querySelectorAll('thead tr')];
    return body.length && body.every(r => r.cells.length && r.cells[0].tagName === 'TH')
           && head.every(r => !r.cells.length || !r.cells[0].textContent.trim());
  }).length;
  const main = document.querySelector('main') || document.body;
  const wide = [...document.querySelectorAll('main table')].filter(
    t => t.getBoundingClientRect().width > main.getBoundingClientRect().width + 1).length;
  const links = [...document.querySelectorAll('main a[href]')].map(a => a.href).filter(h => h.startsWith('file:'));
  const noise = [...document.querySelectorAll('main td')].map(c => c.textContent.trim()).filter(t => t.includes('±'));
  const codeLike = 'code, pre, kbd, samp, script, style, textarea, .cell_input, mjx-container, .math, .headerlink, '
                   + 'noscript, .highlight';
  const prose = [];
  const proseWalker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  while (proseWalker.nextNode()) {
    const node = proseWalker.currentNode;
    if (node.textContent.trim() && !node.parentElement.closest(codeLike)) prose.push(node.textContent);
  }
  const padding = c => parseFloat(getComputedStyle(c).paddingLeft) + parseFloat(getComputedStyle(c).paddingRight);
  const unpadded = [...main.querySelectorAll('table')].filter(t => !t.parentElement.closest(codeLike)).filter(t => {
    const row = t.querySelector('tbody tr') || t.querySelector('tr');
    return row && row.cells.length > 1 && [...row.cells].some(c => padding(c) < __MIN_PADDING__);
  }).map(t => ((t.querySelector('th, td') || {}).textContent || '').trim().slice(0, 40));
  const brokenWords = [];
  for (const table of document.querySelectorAll(__VERDICT_TABLE__)) {
    const inTable = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    while (inTable.nextNode()) {
      const node = inTable.currentNode;
      if (node.parentElement.closest('style')) continue;
      for (const m of node.textContent.matchAll(/[\p{L}\p{N}_]+/gu)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) brokenWords.push(m[0]);
      }
    }
  }
  const tallRows = [...document.querySelectorAll(__VERDICT_TABLE__ + ' tbody')].map(
    b => [(b.querySelector('[id]') || b).id || b.textContent.trim().slice(0, 30),
          Math.round(b.getBoundingClientRect().height)]);
  const figureCaptions = [...document.querySelectorAll('main img')].map(i => {
    const figure = i.closest('figure, .olr-figure');        // a chapter's captioned figure container too
    const caption = figure ? figure.querySelector('figcaption, .olr-caption') : null;
    return {src: (i.getAttribute('src') || '').slice(0, 60), caption: caption ? caption.textContent.trim() : '',
            shown: i.getBoundingClientRect().width, drawn: i.naturalWidth};
  });
  const series = [...document.querySelectorAll('main [data-series]')].map(
    e => [(e.querySelector('figcaption, .olr-caption') || e).textContent.trim().slice(0, 40),
          e.getAttribute('data-series')]);
  const answer = document.querySelector('.olr-answer strong');
  const answerTop = answer ? Math.round(answer.getBoundingClientRect().top + window.scrollY) : null;
  done({math: math.length, unrendered, raw, images, skips, splits, reader, indexTables, links, wide, noise,
        text: whole, prose, unpadded, brokenWords, tallRows, figureCaptions, series, answerTop});
}).catch(e => done({error: String(e)}));
"""
PAGE_PROBE = PAGE_PROBE.replace("__VERDICT_WORDS__", json.dumps(VERDICT_WORDS)).replace(
    "__READER_TEXT__", json.dumps(READER_TEXT)).replace("__MIN_PADDING__", str(MIN_PADDING)).replace(
    "__VERDICT_TABLE__", json.dumps(VERDICT_TABLE))
EMPTY_PROBE = {"math": 0, "unrendered": [], "raw": [], "images": [], "skips": [], "splits": [], "reader": [],
               "indexTables": 0, "links": [], "wide": 0, "noise": [], "text": "", "prose": [], "unpadded": [],
               "brokenWords": [], "tallRows": [], "figureCaptions": [], "series": [], "answerTop": None}
# At the phone's width: how far the page reaches beyond the window, and the element that reaches furthest.
NARROW_PROBE = r"""
const width = document.documentElement.clientWidth, scroll = document.scrollingElement.scrollWidth;
const clipped = e => {
  for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
    if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(a).overflowX)) return true;
  return false;
};
let widest = '', right = width;
if (scroll > width + 1) {
  for (const e of document.querySelectorAll('body *')) {
    const box = e.getBoundingClientRect();
    if (box.width > 0 && box.right > right + 1 && getComputedStyle(e).position !== 'fixed' && !clipped(e)) {
      right = box.right;
      widest = e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className.trim()
                                          ? '.' + e.className.trim().split(/\s+/).join('.') : '');
    }
  }
}
return {scroll, width, widest};
"""


@dataclass
class PageResult:
    page: str
    problems: list = field(default_factory=list)


def driver(width: int = WIDE_PX, height: int = 1000):
    """Headless Chromium with its console and network logs recorded (no Selenium Manager: the driver is Debian's)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists():
            raise FileNotFoundError(f"{path} is missing: install Debian's chromium and chromium-driver "
                                    "(make browser-test does, as root)")
    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--allow-file-access-from-files"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_script_timeout(30)
    return browser


def _requests(browser) -> tuple[list[str], list[str]]:
    """URLs requested since the last call, and the requests that failed (with the reason)."""
    urls, failed, by_id = [], [], {}
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            by_id[params["requestId"]] = params["request"]["url"]
            urls.append(params["request"]["url"])
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(f"{by_id.get(params['requestId'], '?')} ({params.get('errorText', 'failed')})")
    return urls, failed


def check_page(browser, path: Path, root: Path) -> PageResult:
    result = PageResult(str(path.relative_to(root)))
    browser.get(path.resolve().as_uri())
    probe = browser.execute_async_script(PAGE_PROBE)
    if "error" in probe:
        result.problems.append(f"the page probe failed: {probe['error']}")
        probe = EMPTY_PROBE
    for entry in browser.get_log("browser"):
        if entry["level"] == "SEVERE":
            result.problems.append(f"console error: {entry['message'][:200]}")
    urls, failed = _requests(browser)
    result.problems += [f"failed request: {f}" for f in failed]
    result.problems += [f"request leaves the machine: {u}" for u in urls if not u.startswith(LOCAL_SCHEMES)]
    if probe["unrendered"]:
        result.problems.append(f"{len(probe['unrendered'])} of {probe['math']} formulas not typeset, first: "
                               f"{probe['unrendered'][0]!r}")
    result.problems += [f"raw TeX in the text: {text!r}" for text in probe["raw"][:3]]
    for image in probe["images"]:
        if not image["ok"]:
            result.problems.append(f"image did not load: {image['src']}")
        if not image["alt"]:
            result.problems.append(f"image without alt text: {image['src']}")
    result.problems += [f"heading levels skip: {s}" for s in probe["skips"]]
    result.problems += reader_problems(probe)
    if result.page in ANSWER_PAGES:
        result.problems += answer_problems(probe)
    result.problems += [f"link to a missing page or anchor: {link}" for link in broken_links(probe["links"])]
    return result


def broken_links(links: list[str]) -> list[str]:
    """The ``file:`` links (as the browser resolved them) whose file does not exist or has no element with the
    link's anchor as its id (every claim row's link must land on its page's figure or table)."""
    from urllib.parse import unquote, urlsplit

    broken, ids = [], {}
    for link in dict.fromkeys(links):
        parts = urlsplit(link)
        path = Path(unquote(parts.path))
        if not path.exists():
            broken.append(link)
        elif parts.fragment and path.suffix == ".html":
            if path not in ids:
                ids[path] = set(re.findall(r"""\bid=["']([^"']+)["']""", path.read_text(encoding="utf-8",
                                                                                       errors="replace")))
            if unquote(parts.fragment) not in ids[path]:
                broken.append(link)
    return broken


def reader_problems(probe: dict) -> list[str]:
    """What a reader should never meet: broken verdict words, raw dicts, absolute paths, NaN, negative zeros,
    unnamed index columns, "mean ± s.d." cells printed past their noise, a verdict table that breaks words or
    rows too tall, and figures without number or caption, too small, or unreadable to a colour-blind reader."""
    out = [f"verdict word broken across lines or overflowing its box: {w!r}" for w in sorted(set(probe["splits"]))]
    out += [f"{name} in the text: {snippet.strip()!r}" for name, snippet in probe["reader"]]
    if probe["indexTables"]:
        out.append(f"{probe['indexTables']} table(s) with an unnamed index column")
    if probe["wide"]:
        out.append(f"{probe['wide']} table(s) wider than the page (columns behind a horizontal scroll)")
    out += [f"table cell printed past its noise (decimals beyond its s.d.'s second significant digit): {c!r}"
            for c in noise_digit_problems(probe.get("noise", []))]
    out += [f"number printed past its noise (beyond two significant digits of its s.d. or interval): {c!r}"
            for c in text_noise_problems(probe.get("text", ""), set(probe.get("noise", [])))]
    if probe.get("unpadded"):
        out.append(f"{len(probe['unpadded'])} result table(s) without cell padding (their columns run together), "
                   f"first cells: {', '.join(repr(t) for t in probe['unpadded'][:3])}")
    out += prose_problems(probe.get("prose", []))
    return out + verdict_table_problems(probe) + figure_problems(probe)


def text_noise_problems(text: str, cells: set) -> list[str]:
    """The numbers of a page's text printed past their noise: "estimate [low, high]" beyond two significant digits of
    the interval's width, and "mean ± s.d." beyond the s.d.'s second significant digit (outside the table cells
    ``cells`` already reported)."""
    spreads = [m.group(0) for m in SPREAD_IN_TEXT.finditer(text)]
    found = [c for c in noise_digit_problems(spreads) if not any(c in cell for cell in cells)]
    return list(dict.fromkeys(found + interval_digit_problems(text)))


SPREAD_IN_TEXT = re.compile(r"(?<![\w.])[-+\u2212]?[\d,]*\.?\d+\s*±\s*[\d,]*\.?\d+")


def prose_problems(texts: list[str], shown: int = 5) -> list[str]:
    """Code identifiers (snake_case) and literal Markdown in prose (text outside code, pre and math), one line per
    kind with its count and the first few; a word that is a web address is left alone."""
    words = [w for text in texts for w in text.split() if "://" not in w and not w.startswith("www.")]
    snake = [m.group(0) for w in words for m in SNAKE_CASE.finditer(w)]
    out = []
    if snake:
        first = ", ".join(list(dict.fromkeys(snake))[:shown])
        out.append(f"{len(snake)} code identifier(s) in prose, not in words: {first}")
    joined = "\n".join(texts)
    for kind, pattern in MARKDOWN.items():
        hits = [joined[max(0, m.start() - 20): m.end() + 20].replace("\n", " ") for m in pattern.finditer(joined)]
        if hits:
            out.append(f"{len(hits)} literal Markdown {kind}(s) in the text: {hits[0]!r}")
    return out


def answer_problems(probe: dict) -> list[str]:
    """The intro and the verdicts page open with the answer: the verdict counts with their scale (the summary's
    lead, ``.olr-answer``) within the first screen."""
    top = probe.get("answerTop")
    if top is None:
        return ["the answer (the verdict counts with their scale) is missing from the page"]
    return [] if top < FIRST_SCREEN_PX else [f"the answer starts {top} px down, below the first screen "
                                             f"({FIRST_SCREEN_PX} px at {WIDE_PX} px)"]


def verdict_table_problems(probe: dict) -> list[str]:
    """Words broken inside the verdict table, and claim rows taller than :data:`MAX_ROW_PX`."""
    out = [f"word broken inside the verdict table: {w!r}" for w in sorted(set(probe.get("brokenWords", [])))]
    return out + [f"verdict row {name!r} is {height} px tall at {WIDE_PX} px (at most {MAX_ROW_PX})"
                  for name, height in probe.get("tallRows", []) if height > MAX_ROW_PX]


FIGURE_NUMBER = re.compile(r"^Figure \d+\.")
OTHERS_FIGURE = re.compile(r"(?<!paper's )(?<!paper’s )\bFig(?:ure|\.) ?\d+")


def figure_problems(probe: dict) -> list[str]:
    """Figures without a caption, without the book's number, naming another figure without saying whose, shown
    too small to read, or with two series a colour-blind reader cannot tell apart."""
    from olr_core.colours import confusable

    out = []
    for f in probe.get("figureCaptions", []):
        caption = f["caption"]
        if not caption:
            out.append(f"figure without a caption: {f['src']}")
        elif not FIGURE_NUMBER.match(caption):
            out.append(f"figure without the book's number at the start of its caption: {caption[:50]!r}")
        elif OTHERS_FIGURE.search(FIGURE_NUMBER.sub("", caption, count=1)):
            out.append(f"figure caption names a figure without saying whose (write \"the paper's Figure N\"): "
                       f"{caption[:60]!r}")
        if f["drawn"] and f["shown"] < MIN_FIGURE_SCALE * f["drawn"]:
            out.append(f"figure shown at {f['shown'] / f['drawn']:.0%} of its drawn width, too small to read: "
                       f"{caption[:40]!r}")
    for caption, text in probe.get("series", []):
        try:
            series = json.loads(text)
        except (TypeError, ValueError):
            out.append(f"figure with unreadable data-series: {caption!r}")
            continue
        out += [f"figure {caption!r}: {a} and {b} look alike under simulated deuteranopia or protanopia "
                f"(colour distance {d})" for a, b, d in confusable(series)]
    return out


def narrow(browser, on: bool) -> None:
    """Lay pages out at :data:`NARROW_PX` (a phone; Chromium's windows cannot be that narrow, so its viewport is
    emulated), or back at the window's own width."""
    if on:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": NARROW_PX, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    else:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def narrow_problems(browser, path: Path, root: Path) -> list[str]:
    """The page at :data:`NARROW_PX`: anything wider than the window (the page scrolls sideways)."""
    browser.get(path.resolve().as_uri())
    probe = browser.execute_script(NARROW_PROBE)
    if probe["scroll"] <= probe["width"] + 1:
        return []
    return [f"{path.relative_to(root)}: horizontal overflow at {NARROW_PX} px: the page is {probe['scroll']} px "
            f"wide (widest: {probe['widest'] or 'unknown'})"]


def check_code_toggle(browser, path: Path) -> list[str]:
    """A generated page's first hidden code cell opens when its toggle is clicked."""
    browser.get(path.resolve().as_uri())
    opened = browser.execute_script("""
        const box = document.querySelector('details.hide.above-input, details.hide');
        if (!box) return null;
        box.querySelector('summary').click();
        const code = box.querySelector('pre');
        return box.open && code !== null && code.getBoundingClientRect().height > 0;""")
    if opened is None:
        return [f"{path.name}: no code toggle found"]
    return [] if opened else [f"{path.name}: the code toggle does not show the code"]


def check_search(browser, root: Path, word: str = "regret") -> list[str]:
    """The search page finds a word every reproduction chapter uses."""
    browser.get((root / "search.html").resolve().as_uri() + f"?q={word}")
    hits = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        let waited = 0;
        const poll = () => {
          const n = document.querySelectorAll('#search-results li, ul.search li').length;
          if (n > 0 || waited > 15000) done(n); else { waited += 250; setTimeout(poll, 250); }
        };
        poll();""")
    return [] if hits else [f"search.html finds nothing for {word!r}"]


CLAIMS_PAGE = "book/generated/claims.html"


def check_book(root: Path, screenshots: Path | None = None, pages: list[Path] | None = None) -> list[str]:
    """Every problem found in the built book at ``root`` (one line each); screenshots saved on the way."""
    root = Path(root)
    pages = pages if pages is not None else sorted(p for p in root.rglob("*.html")
                                                   if not {"_static", "_sources", "_images"} & set(p.parts)
                                                   and p.name not in ("search.html", "genindex.html"))
    if not pages:
        return [f"{root}: no HTML pages (build the book first: make book)"]
    problems = []
    browser = driver()
    try:
        for page in pages:
            problems += [f"{r.page}: {p}" for r in [check_page(browser, page, root)] for p in r.problems]
        generated = [p for p in sorted((root / "book" / "generated").glob("*.html")) if p in pages]
        if generated:
            problems += check_code_toggle(browser, generated[0])
        if (root / "search.html").exists():
            problems += check_search(browser, root)
        if (root / CLAIMS_PAGE).exists():                    # every verdict row reaches its page's anchor
            problems += check_claim_links(root, pages=(CLAIMS_PAGE,))
        narrow(browser, True)
        for page in pages:
            problems += narrow_problems(browser, page, root)
        if screenshots is not None and (root / CLAIMS_PAGE).exists():
            screenshots.mkdir(parents=True, exist_ok=True)
            browser.get((root / CLAIMS_PAGE).resolve().as_uri())
            browser.save_screenshot(str(screenshots / f"verdicts-{NARROW_PX}.png"))
        narrow(browser, False)
        if screenshots is not None:
            screenshots.mkdir(parents=True, exist_ok=True)
            for name, relative in SCREENSHOTS.items():
                if (root / relative).exists():
                    browser.get((root / relative).resolve().as_uri())
                    browser.execute_async_script(PAGE_PROBE)
                    browser.save_screenshot(str(screenshots / f"{name}.png"))
    finally:
        browser.quit()
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="check the built book in headless Chromium")
    parser.add_argument("root", nargs="?", default="_build/html")
    parser.add_argument("--screenshots", default="_build/screenshots")
    args = parser.parse_args(argv)
    try:
        problems = check_book(Path(args.root), Path(args.screenshots))
    except FileNotFoundError as err:
        print(f"browser check: {err}", file=sys.stderr)
        return 2
    pending = [line for line in problems if any(rule in line for rule in NOT_YET_ENFORCED)]
    enforced = [line for line in problems if line not in pending]
    for line in enforced:
        print(f"browser check: {line}", file=sys.stderr)
    for line in pending:
        print(f"browser check (reported, not yet enforced, #47): {line}", file=sys.stderr)
    pages = sum(1 for _ in Path(args.root).rglob("*.html"))
    print(f"browser check: {pages} HTML files under {args.root}, {len(enforced)} problem(s), {len(pending)} reported "
          "under #47's new rules, not yet enforced")
    return 1 if enforced else 0


# #47's reader rules found 46 problems on the first full build of the merged pages; the pages are mended (and the PDF
# link), so every rule is enforced. A new rule that finds problems on built pages may be named here for a while: its
# problems are then printed, not enforced (the planted-fault tests keep every rule itself tested).
NOT_YET_ENFORCED: tuple[str, ...] = ()


if __name__ == "__main__":
    sys.exit(main())
