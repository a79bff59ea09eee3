"""Write book/02_argmax_cells.ipynb (chapter 2, argmax cells and the paper's Fig 1), without outputs.

Usage: ``.venv/bin/python scripts/make_argmax_cells_notebook.py``. Edit the cells here, not the notebook.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parent.parent / "book" / "02_argmax_cells.ipynb"


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
# Argmax cells: where each next token wins

A language model's last step is linear. The transformer turns a prompt into one vector
$h(X) \in \mathbb{R}^d$, the last-layer embedding at the last position (after the final norm), and
the next-token logits are $W_U\,h(X) + b_U$. Greedy decoding keeps the largest logit. So the whole
embedding space $\mathbb{R}^d$ is cut into regions, one per token, inside which that token is the
greedy choice. These **argmax cells** are the geometric objects that the paper's counting argument
{cite}`meyer2026accessible` is about: a sequence is producible only if the prompt can steer $h$ into
the right cell, step after step.

This chapter defines the cells, shows why they are *not* the Voronoi cells of the rows of $W_U$ (the
object the paper's replication code measured), reproduces the paper's Fig 1 — a 2-D slice of the
cells through three last-layer embeddings — on a real model, counts the cells, and ends with an
explorer of precomputed slices that works without a kernel.
"""),
    md(r"""
## Parameters

`model_name` is any name accepted by `accessibility_lib.models.load_model` (the default preset uses
SmolLM2-135M, fetched once by `python -m accessibility_lib.fetch smollm2-135m`; the paper preset
uses Qwen2.5-0.5B, as in the paper's figure). `resolution` is the number of pixels per side of the
main slice, `extent` its half-width in units of the anchors' spread, `zooms` the extents of the
explorer's frames.
"""),
    code(
        """
# preset: "smoke", "nano" (default: SmolLM2-135M on 2 CPU cores) or "paper"; None = take it from the preset
preset = "nano"
model_name = None           # "nano", "smollm2-135m", "gemma-3-270m", a folder or a hub id
prompts = None              # the three prompts whose last-layer embeddings span the plane
resolution = None           # pixels per side of the main slice
extent = None               # half-width of the main slice, in units of the anchors' spread
zooms = None                # extents of the explorer's frames
explorer_resolution = None  # pixels per side of the explorer's frames
n_labels = None             # cells drawn in colour (the rest is "other", grey)
n_samples = None            # natural-text windows whose embeddings give the principal-component plane
device = None               # "cpu" or "cuda"
""",
        tags=["parameters"],
    ),
    code(
        """
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import HTML, Markdown, display

from accessibility_lib import cell_plots, cells, models, plotting, presets, text

params = presets.resolve("argmax_cells", preset, model_name=model_name, prompts=prompts, resolution=resolution,
                         extent=extent, zooms=zooms, explorer_resolution=explorer_resolution, n_labels=n_labels,
                         n_samples=n_samples, device=device)
plotting.use_style()
t_start = time.perf_counter()
h = models.load_model(params["model_name"], device=params["device"])
print(f"preset {params['preset']!r}: {params['model_name']} ({type(h.model).__name__}), "
      f"d = {h.d_model}, |V| = {h.d_vocab}, loaded in {time.perf_counter() - t_start:.1f} s")
""",
    ),
    md(r"""
## The cells

````{prf:definition} Argmax cell
:label: def-argmax-cell

For the unembedding $W_U \in \mathbb{R}^{|V|\times d}$ with rows $f_i$ and bias $b_U$, the argmax cell of
token $i$ is

```{math}
:label: eq-cell
E_i = \{\, x \in \mathbb{R}^d : f_i\cdot x + b_i \ \ge\ f_j\cdot x + b_j \ \text{ for all } j \,\}.
```
````

Each $E_i$ is an intersection of $|V|-1$ half-spaces, hence a convex polyhedron; with $b_U = 0$ it
is a cone with apex at the origin (scaling $x$ does not change the argmax). Many cells are empty:
a token whose row is a convex combination of others (plus bias) never wins.

It is tempting to picture "the region of $f_i$" as the set of points closest to $f_i$, i.e. the
Voronoi cell of $f_i$. That is a different partition:

````{prf:proposition} Voronoi cells are argmax cells of a different bias
:label: prop-voronoi

$\arg\min_i \|x - f_i\| = \arg\max_i \bigl(f_i\cdot x - \tfrac12\|f_i\|^2\bigr)$. Hence the Voronoi
cells of the rows of $W_U$ are the argmax cells of $W_U$ with bias $-\tfrac12\|f_i\|^2$ in place of
$b_U$. In particular the two partitions coincide when $b_i + \tfrac12\|f_i\|^2$ is the same for all $i$
(for $b_U = 0$: when all rows have equal norm).
````

````{prf:proof}
$\|x - f_i\|^2 = \|x\|^2 - 2 f_i\cdot x + \|f_i\|^2$, and $\|x\|^2$ does not depend on $i$, so minimising
it over $i$ is maximising $f_i\cdot x - \tfrac12\|f_i\|^2$. If the offsets $b_i + \tfrac12\|f_i\|^2$ are
all equal, the argmax score $f_i\cdot x + b_i$ and the Voronoi score differ by the same constant for every $i$,
so they have the same argmax.
````

Conversely, when two tokens $i, j$ share a boundary in one partition and their offsets differ, the
other score breaks their tie on that boundary in favour of one of them, so the boundary moves by
$\bigl|(b_i + \tfrac12\|f_i\|^2) - (b_j + \tfrac12\|f_j\|^2)\bigr| / \|f_i - f_j\|$: a slab of points changes
hands.

Real unembeddings have rows of very different norms (frequent tokens tend to have long rows), so a
long row wins an argmax far from itself, where its Voronoi cell would give way to shorter neighbours.
"""),
    code(
        """
norms = h.W_U.float().norm(dim=1).cpu().numpy()
fig, ax = plt.subplots(figsize=(6.4, 2.8))
ax.hist(norms, bins=80, color=plotting.PALETTE[0])
ax.set_xlabel(r"row norm $\\|f_i\\|$")
ax.set_ylabel("tokens")
ax.set_yscale("log")
plt.show()
print(f"row norms of W_U: min {norms.min():.2f}, median {np.median(norms):.2f}, max {norms.max():.2f} "
      f"(max/min = {norms.max() / norms.min():.1f})")
""",
        tags=["hide-input"],
        caption="Norms of the rows of the unembedding $W_U$. They are far from equal, so Voronoi and argmax cells differ.",
        name="fig-row-norms",
    ),
    md(r"""
## A slice through three prompts

We cannot draw $\mathbb{R}^d$, but we can draw a plane in it. Following the paper's Fig 1, take three
prompts, compute their last-layer embeddings $a_1, a_2, a_3$, and take the plane through them:
$x(u, v) = o + u\,e_1 + v\,e_2$ with $o$ the centroid and $e_1, e_2$ orthonormal. On that plane the
logits are affine in the plane coordinates,

```{math}
:label: eq-plane-logits
(W_U x(u,v) + b_U)_i = \underbrace{f_i\cdot o + b_i}_{a_i} + u\,\underbrace{f_i\cdot e_1}_{p_i} + v\,\underbrace{f_i\cdot e_2}_{q_i},
```

so a slice is a 2-D problem with three numbers per token. The maximum of the affine functions
$a_i + u p_i + v q_i$ is the support function of the points $(p_i, q_i, a_i)$ in the direction $(u, v, 1)$:
a token's cell meets the plane exactly when its point is a vertex of their convex hull on the "upper"
side. The library (`cells.argmax_slice`) finds those vertices with Qhull and takes the grid's argmax over
them only; this gives the slice at any resolution in a fraction of a second, and the number of cells
that meet the *whole* (infinite) plane. The cell below also checks the shortcut against the direct
argmax over all $|V|$ logits in $d$ dimensions (`cells.argmax_tokens`) on a sample of pixels.
"""),
    code(
        """
ids, mask = h.encode(params["prompts"])
anchors = h.final_embeddings(ids, attention_mask=mask)                # (3, d_model)
own = h.forward_logits(ids, attention_mask=mask).argmax(1)            # the model's greedy next tokens
mine = cells.argmax_tokens(anchors, h.W_U, h.b_U)                      # the argmax cells of the anchors
assert torch.equal(own.cpu(), mine), (own, mine)
plane = cells.plane_through(anchors)

t0 = time.perf_counter()
sl = cells.argmax_slice(plane, h.W_U, h.b_U, resolution=params["resolution"], extent=params["extent"])
t_slice = time.perf_counter() - t0

# check: the direct argmax over all tokens in d dimensions, on 1500 random pixels
rng = np.random.default_rng(0)
pix = rng.integers(0, params["resolution"], size=(1500, 2))
pts = plane.points(np.stack([sl.u[pix[:, 1]], sl.v[pix[:, 0]]], axis=1))
direct = cells.argmax_tokens(pts, h.W_U, h.b_U).numpy()
agree = float(np.mean(direct == sl.tokens[pix[:, 0], pix[:, 1]]))

names = [repr(p) for p in params["prompts"]]
display(Markdown("\\n".join(
    [f"| prompt | greedy next token |", "|---|---|"]
    + [f"| {n} | `{h.token_str(int(t))}` |" for n, t in zip(names, mine)]
    + ["", f"Slice of {params['resolution']}² pixels in {t_slice:.2f} s; agreement with the direct "
       f"{h.d_model}-dimensional argmax on 1500 pixels: {100 * agree:.2f}%."])))
""",
        tags=["hide-input"],
    ),
    code(
        """
fig, ax = plt.subplots(figsize=(8.2, 5.6))
cell_plots.draw_cells(ax, sl, h.token_str, k=params["n_labels"], anchor_names=names)
ax.set_title(f"Argmax cells of {params['model_name']} on the plane of three prompts")
plt.show()
""",
        tags=["hide-input"],
        caption="The paper's Fig 1 for this chapter's model: a 2-D slice of the argmax cells through the last-layer "
        "embeddings of three prompts (stars). The largest cells in colour with their token and share of the "
        "picture; all other cells grey. Each coloured region is the set of embeddings whose greedy next token "
        "is that token.",
        name="fig-argmax-slice",
    ),
    md(r"""
Each star sits in the cell of its prompt's greedy continuation, and the cells are large convex
polygons: in this plane, a handful of tokens own almost everything. The picture is a slice of
polyhedra in $d$ dimensions, so cells that look small or absent here may be large elsewhere.

## Voronoi is not argmax

The paper's replication code assigned points to the nearest row of $W_U$. On the same plane, the
Voronoi assignment ({prf:ref}`prop-voronoi`) gives a different picture:
"""),
    code(
        """
fig, axes = plt.subplots(1, 3, figsize=(12.5, 4.2), gridspec_kw={"width_ratios": [1, 1, 1]})
shown, _ = cell_plots.top_tokens(sl.tokens, params["n_labels"])  # same colours as the previous figure
cell_plots.draw_cells(axes[0], sl, h.token_str, shown=shown, legend=False, title="argmax cells")
cell_plots.draw_cells(axes[1], sl, h.token_str, shown=shown, tokens=sl.voronoi, legend=False, title="Voronoi cells of the rows of $W_U$")
axes[1].set_ylabel("")
cell_plots.draw_disagreement(axes[2], sl)
axes[2].set_ylabel("")
plt.show()
""",
        tags=["hide-input"],
        caption="Left: argmax cells (as in the previous figure). Middle: Voronoi (nearest-row) cells of the rows of "
        "$W_U$ on the same plane, a token in the same colour in both (grey: tokens outside the previous figure's legend). Right: in black, the pixels where "
        "the two assignments give different tokens.",
        name="fig-voronoi-vs-argmax",
    ),
    md(r"""
## Counting cells

How many tokens own a piece of the plane? Inside the picture we count distinct tokens; on the whole
infinite plane the hull count of the previous section gives the exact number. We also slice along
the two principal directions of the last-layer embeddings of natural text (windows of held-out text,
`accessibility_lib.text.natural_targets`), a plane where typical embeddings actually live.
"""),
    code(
        """
windows = text.natural_targets(h.tokenizer, n_tokens=12, count=params["n_samples"], seed=0)
samples = torch.cat([h.final_embeddings(windows[i : i + 16]) for i in range(0, len(windows), 16)])  # (n, d_model)
pca = cells.pca_plane(samples)
sl_pca = cells.argmax_slice(pca, h.W_U, h.b_U, resolution=params["resolution"], extent=params["extent"])

rows = []
for label, s in [("plane of the three prompts", sl), ("principal plane of natural text", sl_pca)]:
    rows.append(f"| {label} | {s.n_cells} | {np.unique(s.voronoi).size} | {100 * s.frac_differ:.1f}% "
                f"| {s.n_cells_plane} | {s.n_voronoi_plane} |")
display(Markdown("\\n".join(
    ["| slice | argmax cells in the picture | Voronoi cells in the picture | pixels that differ "
     "| argmax cells meeting the whole plane | Voronoi cells meeting the whole plane |",
     "|---|---|---|---|---|---|"] + rows)))
""",
        tags=["hide-input"],
    ),
    code(
        """
fig, ax = plt.subplots(figsize=(8.2, 5.6))
cell_plots.draw_cells(ax, sl_pca, h.token_str, k=params["n_labels"])
ax.scatter(pca.anchors_uv[:, 0], pca.anchors_uv[:, 1], s=6, color="black", alpha=0.6, label="text embeddings")
ax.set_title("Argmax cells on the principal plane of natural-text embeddings")
plt.show()
""",
        tags=["hide-input"],
        caption="Argmax cells on the plane through the mean of natural-text last-layer embeddings, spanned by their "
        "two principal directions; black dots are the embeddings' projections.",
        name="fig-pca-slice",
    ),
    md(r"""
## Explorer

The explorer below holds precomputed slices (no kernel needed): choose a plane and move the slider
to zoom out. Far from the origin the bias matters less and the cells look more and more like the
cones of the bias-free case; the number of distinct tokens in the frame is given in each caption.
"""),
    code(
        """
groups = {}
for label, pl in [("three prompts", plane), ("principal plane of text", pca)]:
    frames = []
    for z in params["zooms"]:
        s = cells.argmax_slice(pl, h.W_U, h.b_U, resolution=params["explorer_resolution"], extent=z, voronoi=False)
        fig, ax = plt.subplots(figsize=(7.0, 4.4))
        cell_plots.draw_cells(ax, s, h.token_str, k=params["n_labels"], anchor_names=names if pl is plane else None)
        frames.append((f"extent {z:g} × scale, {s.n_cells} cells in the frame", cell_plots.figure_png(fig)))
    groups[label] = frames
display(HTML(cell_plots.slice_explorer_html(groups, uid="argmax-explorer")))
print(f"chapter computed in {time.perf_counter() - t_start:.0f} s")
""",
        tags=["hide-input"],
    ),
    md(r"""
## What it means

- The next-token map of a transformer factors through a partition of $\mathbb{R}^d$ into at most $|V|$
  convex cells; the model's depth only decides *where* a prompt lands, the unembedding decides what that
  place means.
- In any plane, only a small number of tokens own territory, and a few own most of it. Which sequences
  a model can be steered to produce depends on how the map $X \mapsto h(X)$ reaches these cells — the
  subject of the following chapters.
- The nearest-row (Voronoi) picture is a convenient proxy, but with unequal row norms it assigns a large
  share of the plane to the wrong token; measurements of cell volumes must use the argmax with bias.
"""),
]


def main() -> None:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    OUT.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
