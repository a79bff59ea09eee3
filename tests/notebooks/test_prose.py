"""No number in a chapter's prose that no cell produced: the check (``book/_ext/prose_numbers.py``) and its use.

Every chapter of the registry (the table of contents) is checked: a sentence of its Markdown prose that
still holds a digit after glue roles, structural references, names, exponents and the allow-list of the
paper's own numbers (each with its source) are removed fails, with its line and the numbers found.
"""

from __future__ import annotations

import prose_numbers as P  # book/_ext, on the path by pytest's pythonpath setting
import pytest

from accessibility_lib.runs.registry import chapters


def failing_sentences(md: str) -> list[str]:
    """``"line N: numbers — sentence"`` for every prose sentence of ``md`` with a typed number."""
    out = []
    for line, sentence in P.prose_sentences(md):
        nums = P.typed_numbers(sentence)
        if nums:
            out.append(f"line {line}: {', '.join(nums)} — {' '.join(sentence.split())[:200]}")
    return out


@pytest.mark.parametrize(
    "sentence",
    [
        "The ball bound is C = 590.09 for Pythia-160M.",  # a typed result
        "Both models have width d = 128.",
        "It ran m = 1, 2, 4 prompt vectors and 10 targets a length.",
        "The slope is $C = 44.5$ tokens per vector.",  # a decimal inside math
        "The run took 300 steps (patience 100).",
        "A 3-layer model.",
    ],
)
def test_typed_numbers_are_found(sentence):
    assert P.typed_numbers(sentence), sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "By Thm 4.9 and Cor 4.10 (Sections 5.2 and 5.3), see chapters 3 and 5 and Fig 1.",
        "The slope is {glue:text}`c_slope` tokens per vector ({eq}`eq-fp-count`, {cite:p}`meyer2026accessible`).",
        "Pythia-160M, Qwen-2.5-0.5B, Llama-3.2-1B, SmolLM2-135M run in fp16, bf16 or fp32 on a 2-D slice of L2 balls.",
        "With $m = 1$ and $2^{-11}$, $n_{50}$ and $W_2$, the ε is $r_\\infty 2^{-11}$.",
        "The authors allow 3000 steps (patience 500), with a 95 % interval; `scripts/train_nano.py --steps 1500` ran it.",
        "ε = r∞·2^−11 and 2r/ε = 2^17 are the two conventions.",
        "1. a numbered list item",
    ],
)
def test_structural_and_allowed_numbers_pass(sentence):
    assert P.typed_numbers(sentence) == [], P.typed_numbers(sentence)


def test_sentences_skip_front_matter_code_and_math_blocks_but_keep_theorems():
    md = "\n".join(
        [
            "---",
            "jupytext: {version: 1.19}",
            "---",
            "# Title",
            "",
            "```{code-cell} ipython3",
            "x = 12345",
            "```",
            "",
            "```{math}",
            ":label: eq-x",
            "C = 590.09",
            "```",
            "",
            "```{prf:theorem} Thm 4.9",
            ":label: thm-49",
            "The count is at most 77.5 here.",
            "```",
            "Prose with 42. And more.",
        ]
    )
    texts = [s for _, s in P.prose_sentences(md)]
    assert not any("12345" in s or "590.09" in s or "1.19" in s for s in texts)
    assert any("77.5" in s for s in texts) and any("42" in s for s in texts)
    assert failing_sentences(md) and all("77.5" in f or "42" in f for f in failing_sentences(md))


def test_every_allowed_number_has_a_source():
    assert all(isinstance(v, str) and len(v) > 10 for v in P.ALLOWED.values())


@pytest.mark.parametrize("stem", [c.stem for c in chapters()])
def test_chapter_prose_has_no_typed_number(stem):
    from accessibility_lib.runs.registry import chapter

    bad = failing_sentences(chapter(stem).markdown.read_text())
    assert bad == [], f"{stem}: {len(bad)} sentences with a number no cell produced:\n" + "\n".join(bad)


def test_chapter_3_lab_notes_prose_has_no_typed_number():
    """Chapter 3's lab notes hold to the chapters' rule: every number in their prose comes from a cell."""
    from accessibility_lib.runs.registry import lab_notes

    page = next(p for p in lab_notes() if p.stem == "lab_cramming")
    bad = failing_sentences(page.markdown.read_text())
    assert bad == [], "lab_cramming: sentences with a number no cell produced:\n" + "\n".join(bad)
