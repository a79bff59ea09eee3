"""Tables for the chapters: one Markdown-table helper and one HTML-table helper.

A cell that prints a table calls :func:`md_table` (or :func:`html_table` where a wide table needs
scrolling); both escape what would break the table (a ``|`` inside a cell, as in ``ln|V|``).
"""

from __future__ import annotations


def html_table(rows: list[dict], index: str | None = None):
    """An ``IPython.display.HTML`` table of ``rows`` (dicts with the same keys), first column ``index``."""
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


def _cell(value) -> str:
    """A table cell's text with the characters that would break a Markdown table escaped."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def md_table(header: list, rows: list[list]):
    """A Markdown table (``IPython.display.Markdown``): ``header`` cells, then one row per list.

    Every cell is escaped: a ``|`` inside a cell (as in ``ln|V|``) no longer splits the row.

    Example:
        >>> md_table(["a", "b"], [[1, "ln|V|"]]).data
        '| a | b |\\n|---|---|\\n| 1 | ln\\\\|V\\\\| |'
    """
    from IPython.display import Markdown

    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return Markdown("\n".join(lines))
