"""Write book/01_theory.ipynb (chapter 1, the theory) from the cells below, without outputs.

Usage: ``.venv/bin/python scripts/make_theory_notebook.py``. Edit the cells here, not the notebook.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "book" / "01_theory.ipynb"


def md(text: str):
    return new_markdown_cell(text.strip("\n"))


def code(text: str, tags: list[str] | None = None, caption: str | None = None, name: str | None = None):
    cell = new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = tags
    if caption:
        cell.metadata["mystnb"] = {"figure": {"caption": caption, "name": name}}
    return cell


CELLS = [
    md(r"""
# Accessible sequences: what a finite-precision transformer can say

A language model maps a prompt to a next token, and greedy decoding chains those choices into a
sequence. How many *different* sequences can it be made to produce, if we are free to choose the
prompt — even a *soft* prompt of arbitrary real vectors? The answer of {cite}`meyer2026accessible`
is: far fewer than there are sequences. A model that computes at precision ε can only tell apart
finitely many prompts of $m$ vectors, while the number of token sequences of length $n$ grows like
$|V|^n$. Past a length $n^* = C\,m$, most sequences cannot be produced by *any* prompt of $m$ vectors.

This chapter states the definitions and the bound of Section 4 of the paper, computes the slope
$C$ for the paper's ten models, compares it with the measured cramming slopes, and ends with an
explorer whose sliders recompute everything in your browser.
"""),
    md(r"""
## Parameters

The cell below is the chapter's `parameters` cell (papermill injects overrides after it).
`eps_convention` names how the precision ε is chosen (a key of
`accessibility_lib.precision.CONVENTIONS`; `None` takes the preset's); `fraction_model` is the model
of the accessible-fraction figure; `m_values` the prompt lengths drawn there.
"""),
    code(
        """
# preset: "smoke", "nano" (default) or "paper"; None below means "take it from the preset"
preset = "nano"
# a key of precision.CONVENTIONS: replication (eps = r_inf * 2^-11), table1_pythia (2r/eps = 2^17), fp32, ...
eps_convention = None
# the model of the accessible-fraction figure: a row of book/data/models_list.csv, e.g. Pythia-160M
fraction_model = None
# prompt lengths m (vectors) drawn in the accessible-fraction figure, e.g. [1, 2, 4, 8]
m_values = None
""",
        tags=["parameters"],
    ),
    code(
        """
import csv
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from accessibility_lib import bounds, plotting, precision, presets
from accessibility_lib.widgets import BoundExplorer

params = presets.resolve("theory", preset, eps_convention=eps_convention,
                         fraction_model=fraction_model, m_values=m_values)
conv = precision.get(params["eps_convention"])
plotting.use_style()

# The paper's ten models (book/data/models_list.csv, source in models_list.SOURCE.txt)
data_dir = Path("data") if Path("data", "models_list.csv").exists() else Path("book", "data")  # run from book/ or the root
with open(data_dir / "models_list.csv", newline="") as f:
    models = list(csv.DictReader(f))
for row in models:
    row["d"] = int(row["Input hidden size"])
    row["V"] = int(row["Vocabulary size"])
    row["r_inf"] = float(row["L_inf (max)"])
    row["slope_exp"] = float(row["Slope exp"])
by_name = {row["Model name"]: row for row in models}
print(f"preset {params['preset']!r}; ε convention: {conv.description}")
""",
    ),
    md(r"""
## Argmax cells and accessible sequences

Write $\tau$ for the transformer: it maps a sequence of input vectors $X \in \mathbb{R}^{d\times m}$ (a soft
prompt; a prompt of token embeddings is a special case) to next-token logits $F h(X) + b$, where
$h(X) \in \mathbb{R}^d$ is the last-layer embedding (after the final norm), $F \in \mathbb{R}^{|V|\times d}$ the
unembedding and $b$ its bias. The embedding space splits into **argmax cells**

```{math}
:label: eq-argmax-cell
E_i = \{\, x : (Fx + b)_i \ge (Fx + b)_j \ \text{for all } j \,\},
```

convex polyhedra (cones through the origin when $b = 0$) — not the Voronoi cells of the rows $f_i$
of $F$, which would compare $f_i\cdot x - \|f_i\|^2/2$ instead. Chapter 2 (*argmax cells*) draws them for a real model.

Greedy decoding from $X$ produces $t = (t_1, \dots, t_n)$ when $t_1 = \arg\max \tau(X)$ and
$t_k = \arg\max \tau([X, e(t_1), \dots, e(t_{k-1})])$; call $E_t^m$ the set of prompts
$X \in B_{d\times m}(0, r)$ that do so. A model running at finite precision cannot use a prompt that only works on a set thinner than
its resolution, hence:

````{prf:definition} Accessible sequence — paper's Def 4.1
:label: def-accessible

A sequence $t$ is *accessible* at precision $\varepsilon$ with prompt length $m$ if there is a prompt
$X$ whose whole ball $B(X, \varepsilon/2)$ lies in $E_t^m$.
````

````{prf:assumption} Finite precision — paper's Assumption 4.3
:label: ass-finite-precision

$\tau$ is constant on every cube of an $\varepsilon$-grid: inputs closer than $\varepsilon$ cannot be told apart.
````
"""),
    md(r"""
## The bound for prompts of m vectors

Disjoint balls of radius $\varepsilon/2$ centred in $B_{d\times m}(0, r)$ are a *packing*; their number
$P(B_{d\times m}(0, r), \|\cdot\|, \varepsilon)$ bounds how many prompts τ can tell apart, and so how many sequences are
accessible.

````{prf:theorem} Packing bound — paper's Thm 4.5
:label: thm-packing

The number of sequences accessible at precision $\varepsilon$ with prompts of $m$ vectors in $B_d(0, r)$ satisfies

```{math}
:label: eq-packing
\#\mathrm{accessible}(m) \;\le\; P(B_{d\times m}(0,r), \|\cdot\|, \varepsilon) \;\le\; \Bigl(1 + \frac{2r}{\varepsilon}\Bigr)^{d\,m}.
```
````

````{prf:proof}
Each accessible $t$ owns a ball $B(X_t, \varepsilon/2) \subset E_t^m$, and the sets $E_t^m$ of different $t$
are disjoint (greedy decoding is deterministic), so these balls are disjoint: their centres form an
$\varepsilon$-packing of $B_{d\times m}(0, r)$. The balls lie in $B_{d\times m}(0, r + \varepsilon/2)$, so comparing
volumes, $\#\mathrm{accessible}\cdot(\varepsilon/2)^{dm} \le (r + \varepsilon/2)^{dm}$, which is {eq}`eq-packing`.
````

Comparing with the $|V|^n$ sequences of length $n$:

````{prf:corollary} Length threshold — paper's Cor 4.6
:label: cor-threshold

Inaccessible sequences of length $n$ exist as soon as $n > n^* = C\,m$, with

```{math}
:label: eq-slope
C = \frac{d \,\ln(1 + 2r/\varepsilon)}{\ln |V|},
```

and the accessible fraction of length-$n$ sequences is at most

```{math}
:label: eq-fraction
\ln \mathrm{fraction}(n) \;\le\; \min\bigl(0,\; d\,m \ln(1 + 2r/\varepsilon) - n \ln|V|\bigr).
```
````

````{prf:proof}
Take logarithms in {eq}`eq-packing` and divide by the number $|V|^n$ of sequences of length $n$.
````

Past $n^*$ the bound falls by $\ln|V|$ nats per extra token: a cliff, not a slope. Every quantity is
astronomically large (for Pythia-160M, $P \approx e^{6388}$ at $m = 1$), so the library computes in log space
(`accessibility_lib.bounds`, natural logs).

````{prf:remark} Sampling does not help — paper's Remark 3.2
:label: rem-sampling

If $t$ is not greedily accessible, then every stochastic decoding produces $t$ with probability below $1/2$.
````

````{prf:proof}
Fix any prompt. Since $t$ is not greedily produced from it, at the first step $k$ where the greedy
token differs from $t_k$, the wanted token $t_k$ is not the argmax: the argmax token has a probability
at least as large, and the two sum to at most 1, so $p(t_k \mid \text{prompt}, t_{<k}) \le 1/2$, strictly
when the argmax is unique. The probability of producing $t$ is the product of the $n$ step
probabilities, each $\le 1$, so it is below $1/2$ as well.
````
"""),
    md(r"""
## Computing it

Under the chapter's ε convention the bounds depend on $r$ and $\varepsilon$ only through $2r/\varepsilon$. For
Pythia-160M ($d = 768$, $|V| = 50304$) with the replication code's convention $\varepsilon = r_\infty 2^{-11}$
(so $2r/\varepsilon = 4096$):
"""),
    code(
        """
row = by_name[params["fraction_model"]]
r = row["r_inf"]
eps = conv.eps(r=r, r_inf=row["r_inf"])
C = bounds.ball_slope(row["d"], r, eps, row["V"])
print(f"{row['Model name']}: d = {row['d']}, |V| = {row['V']}, r = r∞ = {r}, ε = {eps:.6g}, 2r/ε = {2 * r / eps:.6g}")
print(f"ln P (m = 1) = {bounds.log_packing_ball(row['d'], r, eps, 1):.2f} nats")
print(f"C = {C:.2f} tokens per prompt vector; measured slope {row['slope_exp']}, ratio {C / row['slope_exp']:.2f}")
""",
    ),
    md(r"""
{numref}`fig-fraction` shows the bound {eq}`eq-fraction` against n for several prompt lengths $m$:
flat at 1 up to the threshold $n^* = C\,m$ (dashed), then a straight fall on a log scale.
"""),
    code(
        """
ns = np.arange(0, int(1.6 * C * max(params["m_values"])) + 2)
fig, ax = plt.subplots()
for i, m in enumerate(params["m_values"]):
    log10_frac = [bounds.log_accessible_fraction(row["d"], r, eps, row["V"], m, int(n)) / math.log(10) for n in ns]
    color = plotting.PALETTE[i % len(plotting.PALETTE)]
    ax.plot(ns, log10_frac, color=color, label=f"m = {m}")
    ax.axvline(C * m, color=color, ls="--", lw=1)
ax.set_xlabel("sequence length n (tokens)")
ax.set_ylabel("log10 accessible fraction (bound)")
ax.set_title(f"{row['Model name']}, {conv.name}: dashed lines at n* = C·m")
ax.legend()
plt.show()
""",
        tags=["hide-input"],
        caption="Bound on the fraction of length-n sequences that are accessible (log scale), Cor 4.6; dashed: the thresholds n* = C·m.",
        name="fig-fraction",
    ),
    md(r"""
The slope $C$ is linear in the width $d$ and only logarithmic in the precision and the vocabulary
({numref}`fig-slope-d`): doubling $d$ doubles the number of tokens one prompt vector can pin down.
"""),
    code(
        """
ds = np.unique(np.geomspace(1, 8192, 60).astype(int))
ratio = 4096.0  # the replication convention's 2r/ε; the dots use the chapter's convention
fig, ax = plt.subplots()
for i, V in enumerate([50304, 151936, 262144]):
    ax.plot(ds, [bounds.ball_slope(int(d), 1.0, 2.0 / ratio, V) for d in ds],
            color=plotting.PALETTE[i], label=f"|V| = {V}, 2r/ε = 4096")
for row_ in models:
    eps_ = conv.eps(r=row_["r_inf"], r_inf=row_["r_inf"])
    ax.plot(row_["d"], bounds.ball_slope(row_["d"], row_["r_inf"], eps_, row_["V"]), "o", color="black", ms=4)
ax.set_xscale("log"); ax.set_yscale("log")
ax.set_xlabel("d (embedding width)"); ax.set_ylabel("C (tokens per prompt vector)")
ax.set_title(f"dots: the paper's ten models under {conv.name}")
ax.legend()
plt.show()
""",
        tags=["hide-input"],
        caption="Ball slope C of Cor 4.6 against the width d, for three vocabulary sizes; dots: the paper's ten models.",
        name="fig-slope-d",
    ),
    md(r"""
## The paper's models

The table gives $C$ for each model under the chapter's ε convention (with $r = r_\infty$, the largest
absolute coordinate of sampled last-layer embeddings), its ratio to the measured cramming slope,
and the ratio the paper prints in the ball row of its Table 1.
"""),
    code(
        """
# Table 1 of the paper, ball row (theoretical slope / measured slope)
TABLE1_BALL = {"Pythia-160M": 9.24, "Pythia-410M": 9.79, "Pythia-1B": 7.77, "Qwen2-0.5B": 14.1,
               "Qwen2-1.5B": 20.4, "Llama-3.2-1B": 14.3, "Gemma-3-270m": 11.52}
header = ["model", "d", "|V|", "r∞", "C", "measured slope", "C / measured", "Table 1 (ball)", "implied log2(2r/ε)"]
table_rows = []
for row_ in models:
    eps_ = conv.eps(r=row_["r_inf"], r_inf=row_["r_inf"])
    C_ = bounds.ball_slope(row_["d"], row_["r_inf"], eps_, row_["V"])
    paper = TABLE1_BALL.get(row_["Model name"])
    # 2r/ε that reproduces the paper's ratio: ratio·slope = d·ln(1 + 2r/ε)/ln|V|
    implied = None if paper is None else math.log2(math.expm1(paper * row_["slope_exp"] * math.log(row_["V"]) / row_["d"]))
    table_rows.append([row_["Model name"], row_["d"], row_["V"], row_["r_inf"], f"{C_:.2f}", row_["slope_exp"],
                       f"{C_ / row_['slope_exp']:.2f}", "—" if paper is None else paper,
                       "—" if implied is None else f"{implied:.1f}"])
# one table, two renderings: HTML for the book and JupyterLab, Markdown text for papermill/nbval readers
cell = 'style="padding: 0.25em 0.6em; white-space: nowrap"'
html = "".join(f"<th {cell}>{h}</th>" for h in header)
html = f"<table><caption>Ball slope under {conv.name}</caption><thead><tr>{html}</tr></thead><tbody>" + "".join(
    "<tr>" + "".join(f"<td {cell}>{v}</td>" for v in r_) + "</tr>" for r_ in table_rows) + "</tbody></table>"
text = "\\n".join(["| " + " | ".join(header) + " |"] + ["| " + " | ".join(str(v) for v in r_) + " |" for r_ in table_rows])
display({"text/html": html, "text/plain": text}, raw=True)
""",
        tags=["hide-input"],
    ),
    md(r"""
**The discrepancy.** Under the replication code's convention $\varepsilon = r_\infty 2^{-11}$ the ratio $2r/\varepsilon$ is
4096 for every model, so $C = d \ln 4097 / \ln|V|$ does not depend on the embeddings at all: Pythia-160M gets
$C = 590.09$, ratio 6.53, and the larger Pythias 6.02 / 9.94 / 11.10 (1.4B / 2.8B / 6.9B) — the values
the replication notebook prints. The paper's Table 1 ball row is **not** that convention. Solving
ratio × measured slope $= d\ln(1 + 2r/\varepsilon)/\ln|V|$ for $2r/\varepsilon$ (last column) shows that 9.24 (Pythia-160M)
and 7.77 (Pythia-1B) correspond to $2r/\varepsilon = 2^{17}$, while the other columns imply other precisions —
about $2^{16.8}$ for Pythia-410M, $2^{19.2}$ for Qwen-0.5B, $2^{18.2}$ for Qwen-1.5B, $2^{16.3}$ for
Llama-1B and $2^{14.4}$ for Gemma-270M (the paper's ratios have three digits, so the last digit of the exponent is
uncertain) — that the paper does not state. $C$ depends on
$\varepsilon$ only through $\ln(1 + 2r/\varepsilon)$, so these choices move $C$ by tens of percent, not orders of magnitude; but a bound is only as reproducible as its ε, so this book
always prints the convention beside the number (`eps_convention` parameter; `table1_pythia` is
$2r/\varepsilon = 2^{17}$).

In every case the bound is *above* the measured slope — it must be, it is an upper bound — and by
a factor of 6–20: the ball is a loose model of where embeddings live. Chapters 3 and 5 tighten it
with the measured support shape (ellipsoid, cone) and unequal cell volumes.
"""),
    md(r"""
## Explore the bound

Move the sliders: the readout and the curve are recomputed in your browser (also in the static
HTML page, which has no Python behind it) with the same formulas as `accessibility_lib.bounds`.
ε and |V| move on a log scale. The starting point is Pythia-160M under the replication convention
(r = 1, ε = 2^−11, so 2r/ε = 4096).
"""),
    code(
        """
explorer = BoundExplorer(d=768, r=1.0, eps=2.0**-11, vocab_size=50304, m=1, n=600)
explorer
""",
    ),
    md(r"""
## What it means

A prompt of $m$ vectors carries at most $d\,m\ln(1 + 2r/\varepsilon)$ nats, and each token of output costs
$\ln|V|$ of them: the model can be steered to say only about $e^{d m \ln(1+2r/\varepsilon)}$ different
things. The threshold is linear in $m$ with slope $C$ — the same linear law the cramming experiments of chapter 3
measure {cite}`kuratov2025cramming`. Letting m grow without bound does not rescue the model: with
positional-encoding-free attention a prompt acts through its empirical measure, and the count of
accessible sequences stays finite however long the prompt (Thm 4.9). Chapter 4 (*mean field*,
`book/04_mean_field.ipynb`) derives that bound,
$\ln\ln \#\mathrm{accessible} \le d\ln(1 + 2r/\varepsilon) + \ln(1 + \ln(1 + (2r/\varepsilon)^q))$,
and its consequence for copying {cite}`jelassi2024repeat`.
"""),
]


def main() -> None:
    nb = new_notebook(cells=CELLS)
    for i, cell in enumerate(nb.cells):  # stable ids: regenerating gives no spurious diff
        cell["id"] = f"theory-{i:02d}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    OUT.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
