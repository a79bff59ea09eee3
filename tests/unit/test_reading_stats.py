"""The reading statistics the book's budgets are checked with (book/_ext/reading_stats.py), on pages built here."""

from __future__ import annotations

import pytest
import reading_stats

PAGE = """<html><body><nav><p>Navigation is not read at all, however long its sentences are.</p></nav>
<article class="bd-article">
<h1>Title</h1>
<p>{prose}</p>
<div class="cell docutils container"><div class="cell_input"><pre>print("code is not read, nor counted")</pre></div>
<div class="cell_output"><pre>an output of four words</pre></div></div>
<table><tr><td>A table cell is a word but not a sentence of prose, however long it runs on.</td></tr></table>
{exercises}
</article></body></html>"""


def _write(tmp_path, name, prose, n_exercises=0):
    ex = "".join(
        f'<div class="exercise admonition"><p class="admonition-title">Exercise {i}</p></div>'
        for i in range(n_exercises)
    )
    (tmp_path / "book").mkdir(exist_ok=True)
    path = tmp_path / "book" / f"{name}.html"
    path.write_text(PAGE.format(prose=prose, exercises=ex))
    return path


def test_sentences_words_and_exercises_are_counted_as_documented(tmp_path) -> None:
    prose = "One two three four. A sentence of six words here. Math \\(x + y = z\\) counts as one. Ok."
    s = reading_stats.page_stats(_write(tmp_path, "03_x", prose, n_exercises=2))
    assert s.sentences == 3  # "Ok." has fewer than three words
    assert s.median == 5  # lengths 4, 6, 5 (the math is one word: "Math X counts as one.")
    assert s.exercises == 2
    # words: title 1 + prose 20 (math as written) + output 5 + table cell 17 + exercise titles 2·2; no code, no nav
    assert s.words == 1 + len(prose.split()) + 5 + 17 + 4


def test_budgets_name_each_problem(tmp_path) -> None:
    long = "Long " + " ".join(["word"] * 44) + "."
    short = "Three short words."
    _write(tmp_path, "01_a", " ".join([long] * 2 + [short] * 10), n_exercises=3)  # 2/12 = 17 % long
    _write(tmp_path, "lab_a", " ".join([long] * 5 + [short]))  # median 45
    _write(tmp_path, "05_b", short, n_exercises=3)
    _write(tmp_path, "intro", long)  # no budget
    found = {s.page: reading_stats.budget_problems(s) for s in reading_stats.site_stats(tmp_path)}
    assert found["01_a"] == ["17% of prose sentences over 40 words (cap 12%)"]
    assert found["lab_a"][0].startswith("median prose sentence 45 words")
    assert found["05_b"] == [] and found["intro"] == []
    _write(tmp_path, "02_c", short, n_exercises=1)
    assert reading_stats.budget_problems(reading_stats.page_stats(tmp_path / "book" / "02_c.html")) == [
        "1 exercises (at least 3)"
    ]


def test_a_word_cap_is_enforced(tmp_path) -> None:
    many = " ".join(["Short words here."] * 1600)  # 4,800 words of prose
    s = reading_stats.page_stats(_write(tmp_path, "04_d", many, n_exercises=3))
    assert reading_stats.budget_problems(s) == [f"{s.words} words (cap 4500)"]
    s = reading_stats.page_stats(_write(tmp_path, "06_d", many, n_exercises=3))
    assert reading_stats.budget_problems(s) == []  # chapter 6's cap is 6,000


def test_an_unbuilt_site_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="build the book first"):
        reading_stats.site_stats(tmp_path)
