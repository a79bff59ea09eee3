"""What a built page shows: its figures and tables, each named by its label, its caption or its header row.

The book moved its record from the chapters to the lab notes without dropping anything it computes; this module
lists the figures and tables of a built site so a test can find every one of a reference list on some page.

- a *figure*: a ``<figure>`` (a captioned cell output or a ``{figure}``), named by its ``id`` (the ``name:`` label
  in the chapter) and its caption text (the caption number such as "Fig. 3" left out);
- a *table*: a ``<table>`` outside a figure, named by its ``<caption>`` text where it has one, and always by its
  header row (the text of its first row's cells).

Usage: ``python book/_ext/site_inventory.py _build/html PAGE [PAGE …]`` prints the inventory of those pages as JSON.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["Item", "page_inventory", "find", "norm"]


def norm(text: str) -> str:
    """Text as compared: whitespace collapsed, caption numbers ("Fig. 12", "Table 3") and digits dropped, lower case.

    Digits go because a page's numbers change with what it was executed on; the words of a caption or a header
    say which figure or table it is.

    >>> norm("Fig. 3  The n50 against m (20 targets)")
    'the n against m ( targets)'
    """
    text = re.sub(r"^\s*(fig\.|figure|table)\s*\d+[.:]?\s*", "", text.strip(), flags=re.I)
    return re.sub(r"\s+", " ", re.sub(r"\d", "", text)).strip().lower()


@dataclass
class Item:
    """One figure or table of a page: ``kind`` "figure" or "table", ``page`` its file stem, ``label`` its id
    (figures; may be empty), ``caption`` its caption text, ``header`` a table's first-row cells (tables)."""

    kind: str
    page: str
    label: str = ""
    caption: str = ""
    header: list[str] = field(default_factory=list)


class _Reader(HTMLParser):
    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.items: list[Item] = []
        self.figure: Item | None = None
        self.fig_depth = 0
        self.table: Item | None = None
        self.in_caption = False
        self.caption_number = 0
        self.row = -1  # index of the table row being read
        self.cell: list[str] | None = None
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = set((a.get("class") or "").split())
        if self.skip:
            self.skip += 1
            return
        if tag in ("script", "style", "svg"):
            self.skip = 1
            return
        if tag == "figure":
            if self.figure is None:
                self.figure = Item("figure", self.page, label=a.get("id", ""))
            self.fig_depth += 1
        elif tag == "table" and self.figure is None and self.table is None:
            self.table = Item("table", self.page)
            self.row = -1
        elif tag in ("figcaption", "caption"):
            self.in_caption = True
        elif tag == "span" and "caption-number" in cls and self.in_caption:
            self.caption_number = 1
        elif self.caption_number and tag == "span":
            self.caption_number += 1
        elif tag == "tr" and self.table is not None:
            self.row += 1
        elif tag in ("th", "td") and self.table is not None and self.row == 0:
            self.cell = []

    def handle_endtag(self, tag):
        if self.skip:
            self.skip -= 1
            return
        if tag == "figure" and self.figure is not None:
            self.fig_depth -= 1
            if self.fig_depth == 0:
                self.figure.caption = self.figure.caption.strip()
                self.items.append(self.figure)
                self.figure = None
        elif tag == "table" and self.table is not None:
            self.table.caption = self.table.caption.strip()
            self.items.append(self.table)
            self.table = None
        elif tag in ("figcaption", "caption"):
            self.in_caption = False
        elif tag == "span" and self.caption_number:
            self.caption_number -= 1
        elif tag in ("th", "td") and self.cell is not None and self.table is not None:
            self.table.header.append(re.sub(r"\s+", " ", "".join(self.cell)).strip())
            self.cell = None

    def handle_data(self, data):
        if self.skip:
            return
        if self.in_caption and not self.caption_number:
            target = self.figure if self.figure is not None else self.table
            if target is not None:
                target.caption += data
        if self.cell is not None:
            self.cell.append(data)


def page_inventory(path: str | Path) -> list[Item]:
    """The figures and tables of one built HTML page, in page order (a table inside a figure is not listed)."""
    path = Path(path)
    reader = _Reader(path.stem)
    article = path.read_text(encoding="utf-8")
    reader.feed(article)
    return reader.items


def find(want: dict, items: list[Item]) -> Item | None:
    """The item of ``items`` that shows the reference item ``want`` (a dict of :class:`Item`'s fields), or None.

    A figure is found by its label, else by its caption; a table by its caption where the reference has one, else by
    its header row (both compared after :func:`norm`).
    """
    for it in items:
        if it.kind != want["kind"]:
            continue
        if want["kind"] == "figure":
            if want.get("label") and it.label == want["label"]:
                return it
            if want.get("caption") and norm(it.caption) == norm(want["caption"]):
                return it
        else:
            if want.get("caption") and norm(it.caption) == norm(want["caption"]):
                return it
            if want.get("header") and [norm(h) for h in it.header] == [norm(h) for h in want["header"]]:
                return it
    return None


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    site, pages = Path(argv[0]), argv[1:]
    out = [asdict(it) for p in pages for it in page_inventory(site / "book" / f"{p}.html")]
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
