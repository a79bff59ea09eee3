"""Tables for the chapters: one Markdown-table helper and one HTML-table helper.

A cell that prints a table calls :func:`md_table` (or :func:`html_table` for a table built from dicts);
both escape what would break the table: a ``|`` inside a Markdown cell (as in ``ln|V|``) would end the
cell and shift every later one, and ``<``/``&`` inside an HTML cell would be read as markup. The built
site's stylesheet (``book/_theme/book.css``) lets a table that is wider than the text column scroll
inside its own box.

Example:
    >>> print(md_table(["how", "C"], [["d·ln(1 + 2r/ε)/ln|V|", 590.09]]).data)
    | how | C |
    |---|---|
    | d·ln(1 + 2r/ε)/ln\\|V\\| | 590.09 |
"""

from __future__ import annotations

import re

__all__ = ["md_cell", "md_table", "html_table"]

_PIPE = re.compile(r"(?<!\\)\|")  # a '|' not already escaped


def md_cell(value: object) -> str:
    """``value`` as the text of one Markdown table cell.

    Every ``|`` not already written as ``\\|`` is escaped (so escaping twice changes nothing), and line
    breaks become spaces (a Markdown table row is one line). ``None`` becomes an empty cell.
    """
    text = "" if value is None else str(value)
    return _PIPE.sub(r"\\|", " ".join(text.splitlines()))


def md_table(header: list, rows: list) -> object:
    """An ``IPython.display.Markdown`` table: one header row, then ``rows``.

    Args:
        header: the column titles (any objects, shown with ``str``).
        rows: a list of rows, each a list or tuple with one value per column.

    Returns:
        ``IPython.display.Markdown`` whose ``.data`` is the table's text; every cell escaped by :func:`md_cell`.

    Raises:
        ValueError: an empty header, or a row whose length differs from the header's (naming the row).
    """
    from IPython.display import Markdown

    header = list(header)
    if not header:
        raise ValueError("md_table needs at least one column title in header, got an empty header")
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(rows):
        row = list(row)
        if len(row) != len(header):
            raise ValueError(f"md_table row {i} has {len(row)} cells but the header has {len(header)} columns: {row!r}")
        lines.append("| " + " | ".join(md_cell(c) for c in row) + " |")
    return Markdown("\n".join(lines))


def html_table(rows: list[dict], index: str | None = None):
    """An ``IPython.display.HTML`` table of ``rows`` (dicts with the same keys), first column ``index``.

    Every header and cell is HTML-escaped. A missing key gives an empty cell.
    """
    import html

    from IPython.display import HTML

    if not rows:
        return HTML("<p>(no rows)</p>")
    cols = list(rows[0])
    if index in cols:
        cols.remove(index)
        cols.insert(0, index)
    pad = 'style="padding: 0.25em 0.6em"'
    head = "".join(f"<th {pad}>{html.escape(str(c))}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td {pad}>{html.escape(str(r.get(c, '')))}</td>" for c in cols) + "</tr>" for r in rows
    )
    return HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
