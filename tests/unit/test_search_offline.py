"""The search page's snippet text (``book/_ext/sphinx_search_offline.py``): what is kept and what is not."""

from __future__ import annotations

import pytest
import sphinx_search_offline as S  # book/_ext, on the path by pytest's pythonpath setting
from bs4 import BeautifulSoup

PAGE = """<html><body>
<nav class="bd-docs-nav">Skip to main content Back to top</nav>
<main role="main"><div class="bd-header-article"><button>Ctrl+K</button></div>
<article class="bd-article">
<section id="cramming"><h1>Cramming<a class="headerlink" href="#cramming">#</a></h1>
<p>Past <span class="math notranslate nohighlight">\\(n^\\ast = C\\,m\\)</span> tokens some targets are out of reach.</p>
<div class="cell tag_hide-input docutils container">
<details class="admonition hide above-input"><summary><p>Show code cell source</p></summary>
<div class="cell_input docutils container"><pre>import secret_module</pre></div></details>
<div class="cell_output docutils container"><pre>n50 = 1.83 tokens</pre></div></div>
<div class="cell tag_remove-input docutils container"><div class="cell_input"><pre>hidden_call()</pre></div></div>
<section id="real-models"><h2>Real models</h2><table><tr><td>SmolLM2</td><td>21.7</td></tr></table>
<script>var x = "</script>";</script><svg><text>tick 0.5</text></svg></section>
</section></article>
<div class="prev-next-area">previous next</div></main></body></html>"""


def _text(html: str) -> str:
    return BeautifulSoup(html, "html.parser").get_text(" ")


def test_snippet_page_keeps_content_and_anchors_only():
    out = S.page_text_html(PAGE)
    assert out.startswith('<div role="main">')
    soup = BeautifulSoup(out, "html.parser")
    assert soup.select_one('[role="main"] #real-models') is not None  # Sphinx's anchored summaries
    assert "Real models" in soup.select_one("#real-models").get_text()
    text = _text(out)
    for kept in ("Cramming", "n^* = C m", "n50 = 1.83 tokens", "SmolLM2", "21.7"):
        assert kept in text, kept
    for gone in ("Skip to main content", "Ctrl+K", "Show code cell source", "secret_module", "hidden_call",
                 "previous next", "tick 0.5", "\\(", "#", "var x"):  # fmt: skip
        assert gone not in text, gone
    assert "SmolLM2 21.7" in " ".join(text.split())  # table cells do not run together


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"\(C = \frac{d\,\ln(1 + 2r/\varepsilon)}{\ln |V|}\)", "C = (d ln(1 + 2r/ε))/(ln |V|)"),
        (r"\[n > C\,m, \qquad m \geq 1\]", "n > C m, m ≥ 1"),
        (r"\((1+2r/\varepsilon)^{dm}\)", "(1+2r/ε)^dm"),
        (r"\(\frac{1}{2}\)", "1/2"),
        (r"\(\mathrm{ln}\,|V|^{-n}\)", "ln |V|^-n"),
        (r"\(\left\lVert x \right\rVert \le r\)", "‖ x ‖ ≤ r"),
        (r"\(\frac{a}{\)", "a/"),  # an unclosed group ends the formula instead of looping
    ],
)
def test_tex_to_text(tex, text):
    assert S.tex_to_text(tex) == text
