"""Every number in a chapter's prose comes from a cell, or is the paper's own, cited: the check.

A chapter's Markdown prose (outside its code cells) may contain a digit only where the digit is

* produced by a cell: ``{glue:text}`name``` (and the other glue roles) paste what an executed cell
  computed — removed before the check (Markdown a cell builds never appears in the source at all);
* structural: a theorem, corollary, definition, section, figure, table, equation, chapter or step
  number ("Thm 4.9", "Section 5.2", "chapters 3 and 5"), a numbered-list marker, a label or citation
  role, inline code (a name, a path, a command), part of a name ("fp16", "Pythia-160M", "L2", "2-D",
  "n50"), an exponent or subscript ("2^−11", "$n_{50}$", "$W_2$"), a power of two written as one
  ("2^17"), or an integer up to 10 inside math (``$m = 1$``, ``$\\frac{1}{2}$``);
* on the allow-list :data:`ALLOWED`: a number the paper or its replication code states, each with its
  source, or a fixed convention of the book (the 95 % interval), with its reason.

Anything else is a number typed into prose: it goes stale when a parameter changes, and is reported.

:func:`prose_sentences` splits a MyST notebook's Markdown into sentences (headings, list items and
table rows included; YAML front matter, code cells, ``{math}`` and code blocks excluded; the prose of
``{prf:...}`` and admonition directives kept); :func:`typed_numbers` returns the sentences that still
hold a digit after the removals above, each with the numbers found. Used by
``tests/notebooks/test_prose.py``.
"""

from __future__ import annotations

import re

__all__ = ["ALLOWED", "prose_sentences", "strip_allowed", "typed_numbers"]

#: Numbers chapters may type, each with its source. Keys are matched literally in a sentence (after
#: markup removal); the longest first.
ALLOWED: dict[str, str] = {
    # the paper itself
    "ICML 2026": "the paper's venue",
    "arXiv 2605.22223": "the paper's arXiv number",
    # the authors' replication code and its published results (paper §5; their repository)
    "3000 steps": "the authors' cramming budget (their sweep script: up to 3000 steps)",
    "patience 500": "the authors' cramming patience (their sweep script)",
    "20 targets": "the authors' targets per (m, length) point (paper §5)",
    "betas (0.9, 0.9)": "the authors' AdamW betas (their sweep script; paper §5)",
    "weight decay 0.01": "the authors' AdamW weight decay (their sweep script)",
    "4096": "2r/ε = 2·r∞/(r∞·2^-11) of the authors' convention (their bound notebook)",
    "ln 4097": "ln(1 + 4096), the authors' per-coordinate count (their bound notebook)",
    "10k random prompts": "the paper's sample size for the support shape (paper Section 5.2)",
    "100,000 most frequent": "the size of the authors' random-words list (their word file; models.text.TOP_WORDS)",
    "the paper: 20": "the paper's targets per (m, length) point (paper §5)",
    "against their 20": "the authors' targets per (m, length) point (paper §5)",
    "fail even at n = 10": "the replication code's fp16 autocast without a gradient scaler, as reviewed for this book "
    "(Llama and Gemma); a reading of their code, not re-measured here",
    "uses 0.1 on SmolLM2-135M": "the learning rate of Progressive Cramming (tarasov2026progressive, cited beside it)",
    "k = 1…6": "the authors' regression range for the cells' slope: median S_k on k = 1…6 (their bound notebook)",
    "100 % exact match": "the paper's stopping criterion for copying ('100 % training accuracy', its copying experiment, Section 5)",
    "100 % training accuracy": "the paper's stopping criterion for copying, quoted (its copying experiment, Section 5)",
    # fixed conventions of the book, not measurements
    "95 %": "the confidence level of every interval in the book",
    "50 %": "the definition of n50 (the length crammed half of the time)",
    "5 % quantile": "the lower quantile reported beside every median effective ε",
}

_STRUCT_WORDS = (
    r"Theorem|Theorems|Thm|Corollary|Corollaries|Cor|Lemma|Definition|Def|Assumption|Remark|Proposition|Prop|"
    r"Section|Sections|Sec|§|Fig|Figs|Figure|Figures|Table|Tables|Eq|Eqs|Equation|Equations|Appendix|"
    r"[Cc]hapter|[Cc]hapters|[Ss]tep|[Ss]teps|[Ii]tem|[Ii]tems|Algorithm|Example|Exercise|[Pp]art"
)
_NUM = r"\d+(?:\.\d+)*[a-z]?"
_STRUCT = re.compile(
    rf"(?<![A-Za-z])(?:{_STRUCT_WORDS})\.?\s*(?:{_NUM})(?:\s*(?:,|and|or|to|–|-|/)\s*(?:(?:{_STRUCT_WORDS})\.?\s*)?(?:{_NUM}))*"
)
_ROLE = re.compile(r"\{[a-z:\-]+\}`[^`]*`")  # {glue:text}`x`, {eq}`x`, {cite:p}`x`, {numref}`x`, ...
_CODE = re.compile(r"``[^`]+``|`[^`]+`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PROSE_DIRECTIVES = re.compile(r"^\{(prf:[a-z]+|note|warning|tip|important|admonition|hint|caution|seealso)\}")


def _exponent_ok(base: str, exponent: str) -> bool:
    """An exponent is structural on a base 2, 10 or e-free power (2^{-11}, 10^{3}) or when it is a small integer."""
    digits = re.findall(r"\d+", exponent)
    return base in ("2", "10") or all(int(x) <= 10 for x in digits)


def _math_digits(math: str) -> list[str]:
    """Numbers inside math that are not structural (see the module docstring)."""
    body = re.sub(r"\\[dt]?frac\s*(\d)(\d)", r" \1 / \2 ", math)  # \tfrac12
    found: list[str] = []

    def exponent(m: re.Match) -> str:
        base, exp = m.group(1) or "", m.group(2) or m.group(3) or ""
        if not _exponent_ok(base, exp):
            found.extend(x for x in re.findall(r"\d+", exp) if int(x) > 10)
        return " " if base in ("2", "10") else (base + " ")

    body = re.sub(r"(\d*)\^\s*(?:\{([^{}]*)\}|(-?\d+))", exponent, body)  # exponents, with their base
    body = re.sub(r"_\s*(?:\{[^{}]*\}|\d+)|\\[a-zA-Z]+", " ", body)  # subscripts (labels), commands
    for m in _NUMBER.finditer(body):
        tok = m.group(0)
        if re.fullmatch(r"\d+", tok) and int(tok) <= 10:
            continue
        found.append(tok)
    return found


_OPERATOR = set("+−×·/^()≤≥<>|")  # a hyphen only counts with a space before it ("n - 1", not "3-layer")


def _text_digits(text: str) -> list[str]:
    """Numbers in plain text that are not part of a name, an exponent, a power of two or a small formula constant."""
    out = []
    for m in _NUMBER.finditer(text):
        tok, a, b = m.group(0), m.start(), m.end()
        before = text[a - 1] if a else " "
        before2 = text[a - 2] if a > 1 else " "
        after = text[b] if b < len(text) else " "
        after2 = text[b + 1] if b + 1 < len(text) else " "
        if before.isalpha() or before in "_⁻" or text[b : b + 4] == "-bit":
            continue  # fp16, L2, n_50, a 4-bit file
        if before == "^" or (before in "-−" and before2 == "^"):  # an exponent: on base 2 or 10, or small
            base = re.search(r"(\d*)\^[-−]?$", text[:a])
            if _exponent_ok(base.group(1) if base else "", tok):
                continue
        if before in "-." and (before2.isalpha() or before2.isdigit() and _name_run(text, a - 1)):
            continue  # Pythia-160M, GPT-2, Llama-3.2-1B
        if after.isalpha() or (after in "-" and after2.isupper()) or after == "^":
            continue  # 160M, 2-D, 2^…  (a power of two)
        if tok in ("0", "1"):
            continue  # the constants of bounds and probabilities: "below 1", "at distance 0"
        if re.fullmatch(r"\d+", tok) and int(tok) <= 10:
            left, right = text[:a].rstrip()[-1:], text[b:].lstrip()[:1]
            spaced_minus = text[b:].startswith((" - ", " -")) or text[:a].endswith(" - ")
            if left in _OPERATOR or right in _OPERATOR or spaced_minus:
                continue  # a constant of a formula written in text: 2n + 3, |V| + 4, ln(1 + 2r/ε)
        out.append(tok)
    return out


def _name_run(text: str, i: int) -> bool:
    """Whether the token ending at text[i] (a '-' or '.') belongs to a hyphenated name such as Qwen-2.5-0.5B."""
    j = i - 1
    while j >= 0 and (text[j].isalnum() or text[j] in ".-"):
        j -= 1
    return any(c.isalpha() for c in text[j + 1 : i])


def strip_allowed(sentence: str) -> str:
    """The sentence with roles, inline code, link targets, structural references and allowed numbers removed."""
    s = _ROLE.sub(" ", sentence)
    s = _CODE.sub(" ", s)
    s = _LINK.sub(r"\1", s)
    s = _STRUCT.sub(" ", s)
    for key in sorted(ALLOWED, key=len, reverse=True):
        s = s.replace(key, " ")
    return s


def typed_numbers(sentence: str) -> list[str]:
    """The numbers of a prose sentence that no cell produced and no rule allows (empty when it passes)."""
    s = strip_allowed(sentence)
    s = re.sub(r"^\s*(?:\d+[.)]|[-*+])\s+", " ", s)  # a list marker
    found = []
    for m in _MATH.finditer(s):
        found += _math_digits(m.group(0).strip("$"))
    found += _text_digits(_MATH.sub(" ", s))
    return found


def prose_sentences(md: str) -> list[tuple[int, str]]:
    """(line number, sentence) of the prose of a MyST Markdown notebook.

    Excluded: the YAML front matter, ``+++`` cell breaks, HTML comments, code cells and every fenced block
    except prose directives (``{prf:theorem}`` and the like, whose ``:option:`` lines are dropped).
    """
    lines = md.splitlines()
    i = 0
    if lines and lines[0].strip() == "---":
        i = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), 0) + 1
    keep: list[tuple[int, str]] = []
    fence: str | None = None
    prose_block = False
    for k in range(i, len(lines)):
        line = lines[k]
        m = re.match(r"^\s*(`{3,}|~{3,})(.*)$", line)
        if fence is None and m:
            fence, prose_block = m.group(1), bool(_PROSE_DIRECTIVES.match(m.group(2).strip()))
            keep.append((k + 1, ""))
            continue
        if (
            fence is not None
            and m
            and m.group(1).startswith(fence[0])
            and len(m.group(1)) >= len(fence)
            and not m.group(2).strip()
        ):
            fence, prose_block = None, False
            keep.append((k + 1, ""))
            continue
        if fence is not None and not prose_block:
            continue
        if line.strip() == "+++" or (prose_block and re.match(r"^\s*:[a-z\-]+:", line)):
            keep.append((k + 1, ""))
            continue
        keep.append((k + 1, line))
    text_lines = [(n, re.sub(r"<!--.*?-->", "", t)) for n, t in keep]
    sentences: list[tuple[int, str]] = []
    para: list[tuple[int, str]] = []

    def flush() -> None:
        if not para:
            return
        start, body = para[0][0], " ".join(t.strip() for _, t in para)
        body = re.sub(r"^(?:\d+[.)]|[-*+])\s+", "", body)  # a list marker
        for piece in re.split(r"(?<=[.!?:;])\s+(?=[A-Z*(\[`$])", body):
            if piece.strip():
                sentences.append((start, piece))
        para.clear()

    for n, t in text_lines:
        stripped = t.strip()
        if not stripped:
            flush()
        elif stripped.startswith(("#", "|", "- ", "* ", "+ ")) or re.match(r"^\d+[.)]\s", stripped):
            flush()  # a heading, table row or list item starts a paragraph of its own
            para.append((n, t))
            if stripped.startswith(("#", "|")):
                flush()
        else:
            para.append((n, t))
    flush()
    return sentences
