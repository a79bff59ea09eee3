"""A convention name printed by a chapter means that convention's r and ε, and nothing else.

:func:`accessibility_lib.theory.precision.check_printed` decides, from a printed (name, r, ε) — or 2r/ε —
and the model's radii, whether the numbers are that convention's; ``book/_ext/convention_tables.py``
applies it to every table a chapter prints (run on each executed chapter by
``tests/notebooks/test_notebooks.py``). Expected values here are written out by hand from the conventions'
definitions (book/conventions.md): ``rinf_fp16`` r = r∞, ε = r∞·2^-11 (2r/ε = 4096); ``l2_fp16`` r = r₂
(largest L2 norm), ε = r∞·2^-11 (2r/ε = 4096·r₂/r∞); ``u_fp16``/``u_bf16``/``u_fp32`` r = r₂, ε = r₂·2^-11 /
2^-8 / 2^-24 (2r/ε = 4096 / 512 / 2^25); ``table1_pythia`` r = r₂, ε = r₂·2^-16 (2r/ε = 2^17).
"""

from __future__ import annotations

import re

import convention_tables as T  # book/_ext, on the path by pytest's pythonpath setting
import pytest

from accessibility_lib.runs.registry import chapters
from accessibility_lib.theory import precision as P

R2, RINF = 12.345, 3.21  # a model's radii: largest L2 norm, largest |coordinate|


@pytest.mark.parametrize(
    "name,r,eps",
    [
        ("rinf_fp16", RINF, RINF / 2048),
        ("l2_fp16", R2, RINF / 2048),
        ("u_fp16", R2, R2 / 2048),
        ("u_bf16", R2, R2 / 256),
        ("u_fp32", R2, R2 * 2.0**-24),
        ("table1_pythia", R2, R2 * 2.0**-16),
    ],
)
def test_each_convention_accepts_its_own_pair_printed_to_four_digits(name, r, eps):
    assert P.check_printed(name, f"{r:.4g}", f"{eps:.4g}", r_l2=R2, r_inf=RINF).ok
    assert name in P.identify(f"{r:.4g}", f"{eps:.4g}", r_l2=R2, r_inf=RINF)


def test_the_chapter_6_and_7_mistake_is_caught():
    """r = max L2 and ε = r∞·2^-11 (l2_fp16) printed under the authors' name rinf_fp16."""
    c = P.check_printed("rinf_fp16", f"{R2:.4g}", f"{RINF / 2048:.4g}", r_l2=R2, r_inf=RINF)
    assert not c.ok and c.matches == ("l2_fp16",)
    assert any("is not r∞" in p for p in c.problems)
    # without the radii, the ratio alone decides for every constant-ratio convention: 2r/ε = 6,988 is not 4096
    assert not P.check_printed("rinf_fp16", ratio="6,988").ok
    assert P.check_printed("l2_fp16", ratio="6,988").ok  # l2_fp16's 2r/ε = 4096·r₂/r∞ ≥ 4096
    assert not P.check_printed("l2_fp16", ratio="4000").ok  # below 4096: impossible for r = max L2
    assert not P.check_printed("u_bf16", ratio="4096").ok and P.check_printed("u_bf16", ratio="512").ok
    assert not P.check_printed("table1_pythia", ratio="4096").ok and P.check_printed("table1_pythia", ratio="131072").ok


def test_printed_precision_is_honoured_but_not_more():
    eps = RINF / 2048  # 0.00156738...
    assert P.check_printed("rinf_fp16", "3.21", "0.001567", r_l2=R2, r_inf=RINF).ok  # rounded, within half a unit
    assert not P.check_printed("rinf_fp16", "3.21", "0.001577", r_l2=R2, r_inf=RINF).ok  # one unit off in digit 4
    assert not P.check_printed("rinf_fp16", 3.21, eps * 1.001, r_l2=R2, r_inf=RINF).ok  # floats are exact
    with pytest.raises(ValueError, match="unknown|must be one of"):
        P.check_printed("replication", 1.0, 1.0)
    with pytest.raises(ValueError, match="needs r and eps"):
        P.check_printed("rinf_fp16", r=1.0)
    with pytest.raises(ValueError, match="printed number"):
        P.check_printed("rinf_fp16", "n/a", "1")


CH6_STYLE = """ε convention `rinf_fp16`: the authors' code.

| setting | d | r | 2r/ε | ln ln #accessible |
|---|---|---|---|---|
| width 32 | 32 | 9.50 | 6988 | 3 |
"""

CH3_STYLE = """| ε convention | r | r∞ | r (max L2) | ε | 2r/ε | C |
|---|---|---|---|---|---|---|
| **rinf_fp16** | 3.21 | 3.21 | 12.35 | 0.001567 | 4096 | 1.0 |
| l2_fp16 | 12.35 | 3.21 | 12.35 | 0.001567 | 1.576e+04 | 1.0 |
| u_bf16 | 12.35 | 3.21 | 12.35 | 0.04822 | 512 | 1.0 |
| table1_pythia | — | 3.21 | 12.35 | — | — | — |
"""


def test_scanner_flags_a_table_printed_under_the_wrong_name():
    assert T.convention_problems(CH3_STYLE) == []  # every row is its convention's ("—" rows skipped)
    assert T.convention_problems(CH6_STYLE.replace("rinf_fp16", "l2_fp16")) == []
    bad6 = T.convention_problems(CH6_STYLE, "ch6")
    assert len(bad6) == 1 and "printed as rinf_fp16" in bad6[0] and "fit l2_fp16" in bad6[0]
    swapped = CH3_STYLE.replace("**rinf_fp16** | 3.21", "**rinf_fp16** | 12.35")  # r = r₂ under the r∞ name
    assert len(T.convention_problems(swapped)) == 1
    wrong_eps = CH3_STYLE.replace(
        "| u_bf16 | 12.35 | 3.21 | 12.35 | 0.04822 | 512", "| u_bf16 | 12.35 | 3.21 | 12.35 | 0.001567 | 512"
    )
    assert len(T.convention_problems(wrong_eps)) == 1  # ε of another convention, 2r/ε not recomputed by hand


CH6_REAL = """ε convention `l2_fp16`: r = the largest L2 norm, ε = r∞·2^-11, so 2r/ε = 2^12·r/r∞ (above the 4096 of \
`rinf_fp16`, the authors' code, which takes r = r∞).

| setting | d | r | 2r/ε | ln ln #accessible |
|---|---|---|---|---|
| width 32 | 32 | 9.50 | 6988 | 3 |
"""


def test_a_paragraph_naming_two_keys_is_read_by_the_one_it_introduces():
    """Chapter 6's paragraph introduces `l2_fp16` and mentions `rinf_fp16`: the table is checked as l2_fp16."""
    assert T.check_tables(CH6_REAL) == (1, [])
    n, bad = T.check_tables(CH6_REAL.replace("6988", "4000"))  # below 4096: impossible for r = max L2
    assert n == 1 and len(bad) == 1 and "printed as l2_fp16" in bad[0]
    swapped = CH6_REAL.replace("ε convention `l2_fp16`", "ε convention `rinf_fp16`")
    assert len(T.check_tables(swapped)[1]) == 1  # the introduced key decides, not the one mentioned
    two = "Keys `l2_fp16` and `rinf_fp16`.\n\n| d | r | 2r/ε |\n|---|---|---|\n| 32 | 9.5 | 6988 |\n"
    assert T.check_tables(two) == (0, [])  # neither introduced: ambiguous, not checked (and not counted)


def test_check_tables_counts_the_rows_it_read():
    assert T.check_tables(CH3_STYLE)[0] == 3  # the "—" row is not counted
    assert T.check_tables("| a | b |\n|---|---|\n| 1 | 2 |\n") == (0, [])


def test_scanner_reads_executed_notebook_outputs():
    nb = {"cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {"text/markdown": CH6_STYLE}}]},
                    {"cell_type": "code", "outputs": [{"output_type": "stream", "name": "stdout", "text": ["x = 1\n"]}]}]}  # fmt: skip
    texts = T.notebook_markdown(nb)
    assert [i for i, _ in texts] == [0, 1]
    assert T.convention_problems(texts[0][1])


_RATIO_IN_PROSE = re.compile(r"2r/(?:ε|\\varepsilon)\$?\s*=\s*\$?([0-9][0-9,]*(?:\.[0-9]+)?)")


def prose_ratio_problems(md: str) -> list[str]:
    """Sentences of a chapter's Markdown (outside code cells) naming exactly one ε convention and a 2r/ε that
    is not that convention's."""
    from prose_numbers import prose_sentences  # book/_ext

    out = []
    for line, sentence in prose_sentences(md):
        names = set(T._KEY_RE.findall(sentence))
        ratios = _RATIO_IN_PROSE.findall(sentence)
        if len(names) == 1 and ratios:
            name = names.pop()
            for q in ratios:
                c = P.check_printed(name, ratio=q)
                if not c.ok:
                    out.append(f"line {line}: {sentence.strip()[:160]} — {'; '.join(c.problems)}")
    return out


def test_prose_ratio_check_can_fail():
    assert prose_ratio_problems("Under `rinf_fp16` the ratio 2r/ε = 4096 for every model.\n") == []
    assert prose_ratio_problems("Under `rinf_fp16` (the authors' code) 2r/ε = 6,988.\n")


@pytest.mark.parametrize("stem", [c.stem for c in chapters()])
def test_chapter_prose_names_conventions_by_their_ratios(stem):
    from accessibility_lib.runs.registry import chapter

    assert prose_ratio_problems(chapter(stem).markdown.read_text()) == []
