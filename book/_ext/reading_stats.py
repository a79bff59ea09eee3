"""How a built page reads: words, prose sentences and exercises of every page of the built site.

The book holds itself to a reader's budgets (a chapter is finished in half an hour; its sentences parse):

| page | words | median prose sentence | prose sentences over 40 words | exercises |
|---|---|---|---|---|
| chapters 01, 02, 04 | ≤ 4,500 | ≤ 24 words | ≤ 12 % | ≥ 3 |
| chapters 03, 05, 06, 07 | ≤ 6,000 | ≤ 24 words | ≤ 12 % | ≥ 3 |
| lab notes (``lab_*``) | no cap | ≤ 24 words | ≤ 12 % | — |

What is counted, on each ``<site>/book/*.html`` page, inside its ``<article>`` only (navigation, code-cell
inputs, scripts, styles and drawings left out):

- *words*: every word a reader meets (prose, tables, captions, outputs);
- *prose sentences*: the text of paragraphs and list items outside tables, inline math replaced by one
  token, split after ``.``, ``!`` or ``?`` followed by a space and a capital or an opening bracket or quote;
  pieces under three words are not sentences;
- *exercises*: sphinx-exercise's exercise blocks (``<div class="exercise …">``).

Usage: ``python book/_ext/reading_stats.py _build/html [--budgets]`` prints a table (``--budgets``: only the
pages outside their budgets; exit status 1 when any is). ``tests/site`` checks the budgets on the site the
suite builds.
"""

from __future__ import annotations

import html
import re
import statistics
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["PageStats", "page_stats", "site_stats", "budget_problems", "WORD_CAPS"]

#: chapters' word caps by chapter number; other chapters get :data:`DEFAULT_WORD_CAP`
WORD_CAPS = {"01": 4500, "02": 4500, "04": 4500}
DEFAULT_WORD_CAP = 6000
MEDIAN_CAP = 24  # words, median prose sentence
LONG_SENTENCE = 40  # words: a sentence longer than this is "long"
LONG_SHARE_CAP = 0.12  # at most this share of prose sentences are long
MIN_EXERCISES = 3

_SKIP_TAGS = {"script", "style", "svg", "nav", "noscript"}
_SKIP_CLASSES = {"cell_input", "headerlink", "toggle-button", "copybtn"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
_INLINE_MATH = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", re.S)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[“\"‘'])")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.article = 0
        self.skipping = 0  # depth inside a skipped element
        self.table = 0
        self.prose_depth = 0
        self.block: list[str] = []
        self.blocks: list[str] = []
        self.text: list[str] = []
        self.exercises = 0

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "article":
            self.article += 1
        if not self.article:
            return
        if self.skipping:
            self.skipping += tag not in _VOID
            return
        if tag in _SKIP_TAGS or classes & _SKIP_CLASSES:
            self.skipping = 0 if tag in _VOID else 1
            return
        if tag == "table":
            self.table += 1
        if tag == "div" and "exercise" in classes:
            self.exercises += 1
        if tag in ("p", "li") and not self.table:
            if self.prose_depth == 0:
                self.block = []
            self.prose_depth += 1

    def handle_endtag(self, tag):
        if not self.article:
            return
        if self.skipping:
            self.skipping -= 1
            return
        if tag == "article":
            self.article -= 1
        elif tag == "table":
            self.table = max(0, self.table - 1)
        elif tag in ("p", "li") and self.prose_depth and not self.table:
            self.prose_depth -= 1
            if self.prose_depth == 0:
                self.blocks.append(" ".join(self.block))

    def handle_data(self, data):
        if self.article and not self.skipping:
            self.text.append(data)
            if self.prose_depth:
                self.block.append(data)


@dataclass(frozen=True)
class PageStats:
    """Reading statistics of one built page.

    Attributes:
        page: the file stem (``03_cramming``, ``lab_cramming``, ``intro``).
        words: words in the article. sentences: prose sentences (≥ 3 words each).
        median: median prose sentence (words). long_share: share of prose sentences over 40 words.
        exercises: exercise blocks.
    """

    page: str
    words: int
    sentences: int
    median: float
    long_share: float
    exercises: int

    @property
    def minutes(self) -> float:
        """Reading time at 200 words a minute."""
        return self.words / 200


def sentences(text: str) -> list[str]:
    """The prose sentences of a block of text (inline math counts as one word).

    >>> sentences("A short one. Then x = \\\\(a + b\\\\) holds here! ok")
    ['A short one.', 'Then x = X holds here! ok']
    """
    flat = re.sub(r"\s+", " ", _INLINE_MATH.sub("X", html.unescape(text))).strip()
    return [s for s in _SPLIT.split(flat) if len(s.split()) >= 3]


def page_stats(path: str | Path) -> PageStats:
    """The reading statistics of one built HTML page."""
    path = Path(path)
    reader = _Reader()
    reader.feed(path.read_text(encoding="utf-8"))
    lengths = sorted(len(s.split()) for b in reader.blocks for s in sentences(b))
    return PageStats(
        page=path.stem,
        words=len(" ".join(reader.text).split()),
        sentences=len(lengths),
        median=statistics.median(lengths) if lengths else 0.0,
        long_share=sum(n > LONG_SENTENCE for n in lengths) / len(lengths) if lengths else 0.0,
        exercises=reader.exercises,
    )


def site_stats(site: str | Path) -> list[PageStats]:
    """Statistics of every page under ``<site>/book/`` (a built site, e.g. ``_build/html``), by name.

    Raises:
        FileNotFoundError: no ``book/*.html`` under ``site``.
    """
    found = sorted(Path(site, "book").glob("*.html"))
    if not found:
        raise FileNotFoundError(f"no built pages under {Path(site, 'book')}: build the book first (make book)")
    return [page_stats(p) for p in found]


def budget_problems(stats: PageStats) -> list[str]:
    """What of a page's reading budgets it exceeds (empty when none; pages other than chapters and lab notes have none)."""
    is_chapter = bool(re.match(r"\d\d_", stats.page))
    if not is_chapter and not stats.page.startswith("lab_"):
        return []
    out = []
    if is_chapter:
        cap = WORD_CAPS.get(stats.page[:2], DEFAULT_WORD_CAP)
        if stats.words > cap:
            out.append(f"{stats.words} words (cap {cap})")
        if stats.exercises < MIN_EXERCISES:
            out.append(f"{stats.exercises} exercises (at least {MIN_EXERCISES})")
    if stats.median > MEDIAN_CAP:
        out.append(f"median prose sentence {stats.median:g} words (cap {MEDIAN_CAP})")
    if stats.long_share > LONG_SHARE_CAP:
        out.append(f"{stats.long_share:.0%} of prose sentences over {LONG_SENTENCE} words (cap {LONG_SHARE_CAP:.0%})")
    return out


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    rows = site_stats(args[0])
    if "--budgets" in argv:
        bad = [(r.page, budget_problems(r)) for r in rows]
        bad = [(p, why) for p, why in bad if why]
        for page, why in bad:
            print(f"{page}: {', '.join(why)}")
        return 1 if bad else 0
    print(f"{'page':<18}{'words':>7}{'min':>6}{'sent':>6}{'median':>8}{'>40':>7}{'exerc':>7}  budgets")
    for r in rows:
        why = budget_problems(r)
        print(
            f"{r.page:<18}{r.words:>7}{r.minutes:>6.1f}{r.sentences:>6}{r.median:>8g}{r.long_share:>7.0%}"
            f"{r.exercises:>7}  {'; '.join(why) if why else 'ok'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
