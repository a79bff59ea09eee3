"""The paper's numbers, in one place, each with its source.

Meyer, Michelessa, Chaux, Tan, *How Many Different Outputs Can a Transformer Generate?* (ICML 2026,
arXiv 2605.22223) and its public replication repository
(github.com/mario-michelessa/transformers_accessibility). The files behind this module are shipped in
``accessibility_lib/data/paper/`` with a ``SOURCE.txt`` each. Chapters, widgets and the capacity card
read the paper's facts from here, so a number is transcribed once.

Example:
    >>> models()["Pythia-160M"].d_model, models()["Pythia-160M"].d_vocab
    (768, 50304)
    >>> MEASURED_SLOPES["Pythia-160M"]
    (90.37, 44.13)
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from functools import lru_cache

from accessibility_lib.ground.paths import DATA_DIR

__all__ = [
    "PaperModel",
    "models",
    "table1",
    "TABLE1_COLUMNS",
    "MEASURED_SLOPES",
    "slope_source_disagreements",
    "Slope",
    "measured_slope",
    "AUTHORS_N50_M1",
    "EMBED_PROMPTS",
    "AUTHORS_SWEEP_MIN_LENGTH",
    "AUTHORS_CRAMMING_STEPS",
    "AUTHORS_CRAMMING_TARGETS",
    "AUTHORS_EMBED_LENGTHS",
    "TABLE1_ROW_RATIOS",
    "AUTHORS_CONV_SLOPES",
    "AUTHORS_CONV_SLOPE_ORDER_BUG",
    "cells_ratio_own_slope",
    "cramming_curves",
    "DATA_DIR",
]

DATA_DIR = DATA_DIR / "paper"

#: Measured cramming slopes (tokens per prompt vector), (PG19 natural, random) — paper §5, read off its
#: cramming figures (Fig 4 and appendix). "Random" is the authors' random-words target kind.
MEASURED_SLOPES: dict[str, tuple[float, float]] = {
    "Pythia-160M": (90.37, 44.13),
    "Pythia-410M": (111.14, 69.32),
    "Pythia-1B": (261.42, 137.22),
    "Qwen2.5-0.5B": (71.02, 36.65),
    "Qwen2.5-1.5B": (79.56, 36.38),
    "Llama-3.2-1B": (137.77, 71.30),
    "Gemma-3-270m": (44.54, 22.97),
    "Gemma-3-1B": (39.50, 7.02),
}


def slope_source_disagreements(rel_tol: float = 0.02) -> list[tuple[str, float, float, str | None]]:
    """Models whose natural-text slope differs between the paper's figures and the authors' models list.

    The two sources are :data:`MEASURED_SLOPES` (read off the paper's cramming figures) and the "Slope exp"
    column of the authors' models list (:func:`models`). Where they differ by more than ``rel_tol``, the
    list's value of another model that matches the figures' value within ``rel_tol`` is named (a
    possible mislabel).

    Returns:
        (model, figures' slope, list's slope, list model whose slope matches the figures' or None), in
        tokens per prompt vector.
    """
    listed = models()
    out = []
    for name, (fig, _) in MEASURED_SLOPES.items():
        if name not in listed:
            continue
        lst = listed[name].slope_natural
        if abs(fig - lst) > rel_tol * max(abs(fig), abs(lst)):
            twin = next(
                (o for o, pm in listed.items() if o != name and abs(pm.slope_natural - fig) <= rel_tol * fig), None
            )
            out.append((name, fig, lst, twin))
    return out


@dataclass(frozen=True)
class Slope:
    """A measured cramming slope of the paper, with where it was read (:func:`measured_slope`).

    Attributes:
        value: tokens per prompt vector. source: ``"figures"`` (the paper's cramming figures) or ``"list"``
            (the authors' models list). other: the other source's value where the two differ by more than
            the list's printed precision (half a unit of its one decimal; else None): chapters print it
            beside ``value``, once.
    """

    value: float
    source: str
    other: float | None = None

    def describe(self) -> str:
        """``"261.4 (paper's figures; the authors' list: 287.4)"``-style text."""
        where = {"figures": "the paper's figures", "list": "the authors' models list"}[self.source]
        if self.other is None:
            return f"{self.value:.1f} ({where})"
        alt = "the authors' list" if self.source == "figures" else "the paper's figures"
        return f"{self.value:.1f} ({where}; {alt}: {self.other:.1f})"


def measured_slope(name: str, kind: str = "natural") -> Slope:
    """The one source of the paper's measured cramming slopes, for every chapter and widget.

    The paper's cramming figures (:data:`MEASURED_SLOPES`) where they have the model; the authors' models
    list (:func:`models`, "Slope exp", natural text only) for the models the figures do not show
    (Pythia-1.4B, 2.8B, 6.9B). Where both have the model and differ by more than the list's rounding to
    one decimal (Pythia-1B: 261.42 in the figures, 287.4 in the list; Pythia-410M: 111.14 and 112.4),
    :attr:`Slope.other` carries the list's value.

    Args:
        name: a models-list name (e.g. ``"Pythia-1B"``). kind: ``"natural"`` or ``"random"``.

    Raises:
        ValueError: an unknown model or kind, or a random-words slope the figures do not give.

    Example:
        >>> measured_slope("Pythia-1B")
        Slope(value=261.42, source='figures', other=287.4)
        >>> measured_slope("Pythia-1.4B").source
        'list'
    """
    if kind not in ("natural", "random"):
        raise ValueError(f"kind must be 'natural' or 'random', got {kind!r}")
    listed = models()
    if name not in MEASURED_SLOPES and name not in listed:
        raise ValueError(f"no measured slope for {name!r}; the paper's models: {sorted(listed)}")
    if name in MEASURED_SLOPES:
        fig = MEASURED_SLOPES[name][0 if kind == "natural" else 1]
        lst = listed[name].slope_natural if name in listed and kind == "natural" else None
        other = lst if lst is not None and abs(fig - lst) > 0.05 + 1e-9 else None  # the list: one decimal
        return Slope(fig, "figures", other)
    if kind != "natural":
        raise ValueError(f"the paper gives no random-words slope for {name!r} (only its models list, natural text)")
    return Slope(listed[name].slope_natural, "list")


#: n50(m = 1) of Gemma-3-270M in the authors' length convention (tokens, the given BOS counted),
#: natural (PG19) and random words: from the cramming results published in the authors' replication
#: repository, not from the paper's text.
AUTHORS_N50_M1: dict[str, dict[str, float]] = {"Gemma-3-270m": {"natural": 17.07, "random_words": 10.00}}

#: The shortest target length the authors' cramming sweep tries (MIN_LENGTH in the replication repository's
#: cramming/scripts/run_replicability_adaptive.sh): an n50 at or below it is the sweep's floor, not a crossing.
AUTHORS_SWEEP_MIN_LENGTH = 10

#: The authors' cramming budget (paper §5; their replication code): at most this many optimiser steps per
#: target, and a patience of 500 steps without improvement.
AUTHORS_CRAMMING_STEPS = {"max_steps": 3000, "patience": 500}

#: Targets a (m, n) point in the authors' cramming sweeps (paper §5.1).
AUTHORS_CRAMMING_TARGETS = 20

#: The support is fitted to about this many random prompts (paper §5.2; lengths near 1,000 suffice by its
#: Fig 9); the authors' sampling code draws this many prompts of uniform random token ids ...
EMBED_PROMPTS = 10_000
#: ... at lengths from 4 to 4,096 tokens (the replication repository's embedding sampler).
AUTHORS_EMBED_LENGTHS = (4, 4096)

#: Table 1's columns, in the paper's order, with the models_list name of each.
TABLE1_COLUMNS: dict[str, str] = {
    "Pythia-160M": "Pythia-160M",
    "Pythia-410M": "Pythia-410M",
    "Pythia-1B": "Pythia-1B",
    "Qwen-0.5B": "Qwen2.5-0.5B",
    "Qwen-1.5B": "Qwen2.5-1.5B",
    "Llama-1B": "Llama-3.2-1B",
    "Gemma-270M": "Gemma-3-270m",
}

#: Slope-free checks of Table 1 (cone/ball, ellipsoid/ball, (ellipsoid + cells)/ellipsoid) per column:
#: ratios of Table 1's rows, which share the measured slope and so cancel it (three digits, as printed).
TABLE1_ROW_RATIOS: dict[str, tuple[float, float, float]] = {
    "Pythia-160M": (0.985, 0.857, 0.841),
    "Pythia-410M": (0.981, 0.832, 0.735),
    "Pythia-1B": (0.991, 0.788, 0.745),
    "Qwen-0.5B": (0.994, 0.777, 0.723),
    "Qwen-1.5B": (0.997, 0.750, 0.707),
    "Llama-1B": (0.978, 0.829, 0.903),
    "Gemma-270M": (0.976, 0.965, 0.790),
}


#: The authors' convolution slopes (nats per token: the regression slope of median S_k on k), per
#: model, as printed by their bound notebook (a stored markdown cell, models listed alphabetically).
#: Their notebook then assigns this list to the Table 1 columns by position, in another order (see
#: :data:`AUTHORS_CONV_SLOPE_ORDER_BUG`).
AUTHORS_CONV_SLOPES: dict[str, float] = {
    "Pythia-160M": -12.87,
    "Pythia-1B": -14.71,
    "Pythia-410M": -14.54,
    "Qwen-0.5B": -16.50,
    "Qwen-1.5B": -16.87,
    "Gemma-270M": -13.03,
    "Llama-1B": -15.79,
}
#: The column each printed slope ends up in when the list above is assigned by position to the Table 1
#: columns in the paper's order (Pythia-160M, 410M, 1B, Qwen-0.5B, 1.5B, Llama-1B, Gemma-270M).
AUTHORS_CONV_SLOPE_ORDER_BUG: dict[str, str] = dict(
    zip(
        ["Pythia-160M", "Pythia-410M", "Pythia-1B", "Qwen-0.5B", "Qwen-1.5B", "Llama-1B", "Gemma-270M"],
        ["Pythia-160M", "Pythia-1B", "Pythia-410M", "Qwen-0.5B", "Qwen-1.5B", "Gemma-270M", "Llama-1B"],
    )
)


def cells_ratio_own_slope() -> dict[str, float]:
    """The (ellipsoid + cells)/ellipsoid ratio each Table 1 column gets with its *own* convolution slope:
    ln|V| / |slope| (dimensionless), ``{column: ratio}`` over :data:`TABLE1_COLUMNS`. The printed ratios
    carry the slope of another column (:data:`AUTHORS_CONV_SLOPE_ORDER_BUG`)."""
    return {
        col: math.log(models()[name].d_vocab) / abs(AUTHORS_CONV_SLOPES[col]) for col, name in TABLE1_COLUMNS.items()
    }


@dataclass(frozen=True)
class PaperModel:
    """One row of the authors' models list.

    Attributes:
        name: the list's name (e.g. ``"Pythia-160M"``); hf_id: the Hugging Face id.
        d_model: d, the hidden size; d_vocab: |V| (rows of the unembedding, padding included).
        r1, r_l2, r_inf: largest L1, L2 and L∞ norms of their sampled last-layer embeddings.
        mean_cos, min_cos: mean and minimum pairwise cosine of those embeddings.
        slope_natural: the measured PG19 cramming slope the list records (tokens per prompt vector).
        kuratov_capacity: Kuratov et al.'s maximum cramming capacity (tokens), or None.
    """

    name: str
    hf_id: str
    d_model: int
    d_vocab: int
    r1: float
    r_l2: float
    r_inf: float
    mean_cos: float
    min_cos: float
    slope_natural: float
    kuratov_capacity: int | None


#: the list labels its two Qwen-2.5 checkpoints (``Link to HF``: Qwen/Qwen2.5-0.5B, Qwen/Qwen2.5-1.5B)
#: "Qwen2-0.5B" and "Qwen2-1.5B"; the book names every model by its checkpoint, as the paper's §5 does
LIST_NAME_FIXES: dict[str, str] = {"Qwen2-0.5B": "Qwen2.5-0.5B", "Qwen2-1.5B": "Qwen2.5-1.5B"}


@lru_cache(maxsize=1)
def models() -> dict[str, PaperModel]:
    """The ten models of the authors' list, by name (``models_list.csv``; :data:`LIST_NAME_FIXES` applied)."""
    out = {}
    with open(DATA_DIR / "models_list.csv", newline="") as f:
        for row in csv.DictReader(f):
            cap = row["Max capacity, tokens (Kuratov)"].strip()
            name = LIST_NAME_FIXES.get(row["Model name"], row["Model name"])
            out[name] = PaperModel(
                name,
                row["Link to HF"],
                int(row["Input hidden size"]),
                int(row["Vocabulary size"]),
                float(row["L_1 (max)"]),
                float(row["L_2 (max)"]),
                float(row["L_inf (max)"]),
                float(row["Avg cosine"]),
                float(row["Min cosine"]),
                float(row["Slope exp"]),
                int(cap) if cap.isdigit() else None,
            )
    return out


@lru_cache(maxsize=1)
def table1() -> dict[str, dict[str, float]]:
    """The paper's Table 1: support model (row label) -> column (``TABLE1_COLUMNS`` key) -> ratio."""
    with open(DATA_DIR / "table1.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["support model"]: {c: float(r[c]) for c in TABLE1_COLUMNS} for r in rows}


def table1_text() -> dict[str, dict[str, str]]:
    """The paper's Table 1 as printed (its own digits: ``"14.1"``, not ``14.10``), keyed like :func:`table1`."""
    with open(DATA_DIR / "table1.csv", newline="") as f:
        return {r["support model"]: {c: r[c].strip() for c in TABLE1_COLUMNS} for r in csv.DictReader(f)}


@lru_cache(maxsize=1)
def cramming_curves() -> dict:
    """Success rate against length per m, natural and random, for Pythia-160M and Qwen-2.5-0.5B.

    Returns the JSON of ``cramming_curves.json``: ``{"source": ..., "models": {model: {kind: {"curves":
    {m: [[n, rate], ...]}}}}}`` (20 targets a point; read off the authors' figure data).
    """
    return json.loads((DATA_DIR / "cramming_curves.json").read_text())
