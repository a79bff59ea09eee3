"""Sphinx extension of the book's build: search snippets that work from ``file://`` and hold only content.

Sphinx's search page (``searchtools.js``) fetches each result's page to cut a snippet from it. A browser
refuses ``fetch`` on ``file://`` (Chromium: "blocked by CORS policy"), which is where the README tells
readers to open the site, so results showed titles only; and over http the snippets were cut from the whole
``[role=main]`` block, page furniture (buttons, "Contents", prev/next), hidden code and raw ``\\(C\\)`` included.

After an html build this extension reads every written page, keeps its article (``article.bd-article``)
without code-cell inputs (hidden or shown), navigation, buttons, scripts, styles, SVG and images, turns TeX into
plain text (:func:`tex_to_text`), strips every attribute but ``id`` (the section anchors Sphinx's summaries
look up) and writes the result to ``_static/search_pages.js`` as ``window.BOOK_SEARCH_PAGES`` (docname →
HTML). The search page alone loads it and ``book/_theme/search_offline.js``, which answers Sphinx's fetch
of a page from it; Sphinx's own ``htmlToText`` and ``makeSearchSummary`` then run unchanged.

Enabled in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PAGES_JS = "search_pages.js"
SHIM_JS = "search_offline.js"

#: removed from a page before it is indexed for snippets: hidden/removed code, navigation and furniture
REMOVE = (
    "script",
    "style",
    "noscript",
    "svg",
    "img",
    "nav",
    "button",
    "summary",
    "form",
    ".cell_input",  # code, hidden or shown: a snippet shows what the page says, not its code
    ".tag_hide-cell",
    ".tag_remove-cell",
    ".headerlink",
    ".prev-next-area",
    ".toggle-details__summary",
    ".widget-fallback",
)
_BLOCK = {"p", "div", "section", "li", "td", "th", "tr", "dt", "dd", "pre", "table", "ul", "ol", "dl",
          "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "figure", "figcaption", "caption", "br"}  # fmt: skip

_TEX_SYMBOLS = {
    "varepsilon": "ε", "epsilon": "ε", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ",
    "theta": "θ", "lambda": "λ", "mu": "μ", "pi": "π", "sigma": "σ", "Sigma": "Σ", "sum": "Σ", "prod": "Π",
    "tau": "τ", "phi": "φ", "varphi": "φ", "omega": "ω", "Omega": "Ω", "rho": "ρ", "eta": "η", "kappa": "κ",
    "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "approx": "≈", "sim": "~", "infty": "∞", "to": "→", "rightarrow": "→", "mapsto": "↦", "in": "∈",
    "subseteq": "⊆", "subset": "⊂", "cup": "∪", "cap": "∩", "pm": "±", "ldots": "…", "dots": "…",
    "cdots": "⋯", "lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖", "langle": "⟨", "rangle": "⟩",
    "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "partial": "∂", "ast": "*", "star": "*", "nabla": "∇", "forall": "∀",
    "exists": "∃", "mid": "|", "colon": ":", "quad": " ", "qquad": " ", ",": " ", ";": " ", "!": "", " ": " ",
}  # fmt: skip
_TEX_DROP = ("left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr", "displaystyle", "mathrm", "mathbf",
             "mathbb", "mathcal", "mathit", "operatorname", "text", "textrm", "boldsymbol", "tag", "label")  # fmt: skip


def tex_to_text(tex: str) -> str:
    """TeX of an inline or display formula as the plain text a search snippet can show.

    Delimiters (``\\(\\)``, ``\\[\\]``, ``$``) go, ``\\frac{a}{b}`` becomes ``a/b`` (parenthesised when longer
    than one symbol), Greek letters and relations become their Unicode characters, font and sizing commands
    are dropped, and braces vanish: ``\\(C = \\frac{d\\,\\ln(1 + 2r/\\varepsilon)}{\\ln |V|}\\)`` →
    ``C = (d ln(1 + 2r/ε))/(ln |V|)``. Unknown commands keep their name without the backslash.

    >>> tex_to_text(r"\\(n^* = C\\,m\\)")
    'n^* = C m'
    >>> tex_to_text(r"\\(\\frac{1}{2}\\)")
    '1/2'
    """
    s = tex.strip()
    for a, b in (("\\(", "\\)"), ("\\[", "\\]"), ("$$", "$$"), ("$", "$")):
        if s.startswith(a) and s.endswith(b) and len(s) >= len(a) + len(b):
            s = s[len(a) : len(s) - len(b)]
            break
    s = s.replace("&amp;", "&").replace("&", " ").replace("\\\\", " ")

    def group(i: int) -> tuple[str, int]:  # the {...} group starting at s[i] (or one character)
        while i < len(s) and s[i] == " ":
            i += 1
        if i >= len(s):
            return "", i
        if s[i] != "{":
            if s[i] == "\\":
                m = re.match(r"\\([A-Za-z]+|.)", s[i:])
                return s[i : i + m.end()], i + m.end()
            return s[i], i + 1
        depth, j = 0, i
        while j < len(s):
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1 : j], j + 1
            j += 1
        return s[i + 1 :], len(s)

    while (k := s.find("\\frac")) >= 0 or (k := s.find("\\tfrac")) >= 0 or (k := s.find("\\dfrac")) >= 0:
        start = s.index("frac", k) + 4
        num, i = group(start)
        den, j = group(i)
        wrap = lambda x: x if len(re.sub(r"\\[A-Za-z]+|[{}\s]", "x", x)) <= 1 else f"({x})"  # noqa: E731
        s = s[:k] + f"{wrap(num)}/{wrap(den)}" + s[j:]

    def command(m: re.Match) -> str:
        name = m.group(1)
        if name in _TEX_SYMBOLS:
            return _TEX_SYMBOLS[name]
        if name in _TEX_DROP:
            return ""
        return name if len(name) > 1 else ""

    s = re.sub(r"\\([A-Za-z]+|[|,;! ])", command, s)
    s = s.replace("{", "").replace("}", "")
    return re.sub(r"\s+", " ", s).strip()


def page_text_html(html: str) -> str:
    """One built page as the small HTML Sphinx's snippet code reads: ``<div role="main">`` + its article.

    Keeps text and the ``id`` of every element (section anchors); removes :data:`REMOVE`; math becomes
    :func:`tex_to_text`; block elements end with a space so their texts do not run together.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    body = soup.select_one("article.bd-article") or soup.select_one('[role="main"]') or soup.body or soup
    for selector in REMOVE:
        for el in body.select(selector):
            el.decompose()
    for el in body.select(".math"):
        el.replace_with(" " + tex_to_text(el.get_text()) + " ")
    for el in list(body.find_all(True)):
        if el.get("id"):
            el.attrs = {"id": el["id"]}
            el.name = "div" if el.name in _BLOCK else "span"
            el.append(" ")
        else:
            if el.name in _BLOCK:
                el.append(" ")
            el.unwrap()
    text = re.sub(r"[ \t\r\f\v]*\n\s*", "\n", body.decode_contents())
    return '<div role="main">' + re.sub(r"[ \t]{2,}", " ", text) + "</div>"


def _write_pages(app: Any, exception: Exception | None) -> None:
    if exception is not None or getattr(app.builder, "format", None) != "html":
        return
    pages = {}
    for docname in sorted(app.env.found_docs):
        path = Path(app.builder.get_outfilename(docname))
        if path.is_file():
            pages[docname] = page_text_html(path.read_text(encoding="utf-8"))
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    body = json.dumps(pages, ensure_ascii=False).replace("</", "<\\/")  # no "</script>" inside the script
    (static / PAGES_JS).write_text(f"window.BOOK_SEARCH_PAGES = {body};\n", encoding="utf-8")


def _search_page_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if pagename == "search":
        app.add_js_file(PAGES_JS)
        app.add_js_file(SHIM_JS)


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _search_page_scripts)
    app.connect("build-finished", _write_pages)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
