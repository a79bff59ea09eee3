"""accessibility_lib.figures.tables: a '|' inside a cell never splits a Markdown table.

The check parses the helper's output with the Markdown parser the book is built with (markdown-it, as
MyST uses it, with the dollarmath plugin) and counts the cells of each row; the cell text must come back
as given (``ln|V|``, not ``ln``).
"""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from accessibility_lib.figures.tables import html_table, md_cell, md_table


def _parse(text: str) -> list[list[str]]:
    """Rows of the first table in ``text`` as lists of cell texts (header row first)."""
    md = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)
    rows, row, cell = [], None, None
    for tok in md.parse(text):
        if tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            cell = ""
        elif tok.type == "inline" and cell is not None:
            cell = "".join(c.content for c in tok.children)
        elif tok.type in ("th_close", "td_close"):
            row.append(cell)
            cell = None
        elif tok.type == "tr_close":
            rows.append(row)
    return rows


def test_a_pipe_in_a_cell_stays_in_its_cell():
    how = "d·ln(1 + 2r/ε)/ln|V|"  # chapter 5's "how" column
    table = md_table(["method", "C", "how"], [["ball", 590.09, how], ["cone", "1|2", "$\\ln|V|$"]]).data
    rows = _parse(table)
    assert [len(r) for r in rows] == [3, 3, 3]  # unescaped, row 1 would have 4 cells and lose "V|"
    assert rows[1] == ["ball", "590.09", how]
    assert rows[2] == ["cone", "1|2", "\\ln|V|"]


def test_escaping_is_idempotent_and_rows_are_one_line():
    assert md_cell("a|b") == "a\\|b" == md_cell("a\\|b")  # an already escaped pipe is left as it is
    assert md_cell(None) == "" and md_cell("two\nlines") == "two lines"
    rows = _parse(md_table(["\\|V\\|", "x"], [["a|b", "line\nbreak"]]).data)
    assert rows == [["|V|", "x"], ["a|b", "line break"]]


def test_bad_tables_are_refused_with_what_was_wrong():
    with pytest.raises(ValueError, match="empty header"):
        md_table([], [])
    with pytest.raises(ValueError, match="row 1 has 1 cells but the header has 2 columns"):
        md_table(["a", "b"], [[1, 2], [3]])


def test_html_table_escapes_markup():
    html = html_table([{"name": "<b>x</b> & y", "v": 1}], index="v").data
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in html and html.index(">v<") < html.index(">name<")
