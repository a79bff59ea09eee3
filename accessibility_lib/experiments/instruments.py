"""Cramming instruments: the named optimiser-and-protocol settings a capacity is measured with.

Whether some prompt of m vectors forces a target is an existence question; an optimiser can only
find prompts that exist, so every instrument gives a **lower bound** on what the model can be made to
generate, and an instrument that verifies longer targets for the same forward+backward token-steps
is simply a better one. The book reports the paper's instrument (for like-for-like numbers) beside
the best one it measured, every number labelled with the instrument and budget that produced it.

- ``"authors"`` — the authors' loop exactly (their replication code, ``cramming/train.py``): the initial prompt
  drawn as N(0, 1)·std(W_E) with std(W_E) the standard deviation of every entry of the raw input-embedding table
  (for Gemma without the √d input scale), AdamW lr 1e-2, betas (0.9, 0.9), weight decay 0.01, one update after
  every check, patience counted in checks without a *strict rise* of the teacher-forced accuracy, success = that
  accuracy reaching 100 % (the book's verification, a greedy decode of the prompt the loop keeps, is recorded
  beside it: ``verified``); their cap and patience (3,000 and 500) are the unit's budget.
- ``"authors-book-init"`` — the same loop started from the book's initial prompt (below): the initial prompt's
  effect, measured on the same targets.
- ``"paper"`` — the authors' optimiser with the book's initial prompt (mean + std·N(0, 1) per coordinate of the
  real, scaled input embeddings), the book's patience (reset when the loss falls by > 1e-4 relative or the
  accuracy rises) and the book's success test (a verified greedy decode): the *fixed-length* protocol of the
  paper and of Kuratov et al. (2025), the instrument of the book's stored 300 … 1,200-step units. Which of
  these differences move n50, and which way: the conventions appendix.
- ``"lr3e-2"``, ``"lr1e-1"`` — the same with a larger learning rate (Progressive Cramming, Tarasov et
  al. 2026, uses 0.1 on SmolLM2-135M).
- ``"progressive"`` — one prompt per target, grown a token at a time and warm-started from the
  previous prefix once that prefix is verified (:mod:`accessibility_lib.experiments.progressive`), with one fresh
  fixed-length attempt before a target is given up; a target's *horizon* is its longest verified
  prefix, and the success rate at n is the share of horizons ≥ n.

A **budget** is separate from the instrument: ``max_steps`` optimiser updates per (target, length)
(per stage for progressive growth) and a ``patience``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = [
    "Instrument",
    "INSTRUMENTS",
    "PROTOCOLS",
    "INITS",
    "RULES",
    "PAPER_LABEL",
    "get_instrument",
    "instrument_label",
    "check_budget",
]

PROTOCOLS = ("fixed", "progressive")
#: where prompts start: the book's per-coordinate statistics of the scaled embeddings, or the authors' raw table
INITS = ("embedding_stats", "raw_table")
#: the loop's rules: the book's (patience on loss or accuracy, verified decode, check then update) or the authors'
RULES = ("book", "authors")
#: how the ``paper`` instrument is printed: it is the authors' optimiser in the book's loop, not the authors' loop
#: (that is ``authors``); the key ``paper`` stays in stored uids, store keys, presets and parameters
PAPER_LABEL = "book's loop (authors' optimiser)"


@dataclass(frozen=True)
class Instrument:
    """One cramming configuration.

    Attributes:
        name: the label printed beside every number it produced.
        protocol: ``"fixed"`` (a fresh prompt per target and length) or ``"progressive"``.
        lr: Adam learning rate. betas: Adam betas. weight_decay: AdamW's decoupled decay.
        init_scale: prompts start at mean + init_scale·std·N(0, 1) of the real input embeddings.
        description: one line for tables.
        label: the printed name where it differs from the key (no comma: tables split budget labels on ", ").
        init: ``"embedding_stats"`` (the book's: per-coordinate mean and std of the real, scaled input embeddings)
            or ``"raw_table"`` (the authors': zero mean, the raw table's std, :data:`INITS`).
        rule: ``"book"`` or ``"authors"`` — the loop's patience rule, success test and step order (:data:`RULES`,
            :func:`accessibility_lib.experiments.cramming.cram`).
    """

    name: str
    protocol: str
    lr: float
    betas: tuple[float, float]
    weight_decay: float
    init_scale: float
    description: str
    init: str = "embedding_stats"
    rule: str = "book"
    label: str = ""

    @property
    def printed(self) -> str:
        """The name printed beside its numbers: ``label`` where it has one (``"paper"``: its key in stored uids,
        store keys and presets is kept, its label says what it is), else its key."""
        return self.label or self.name

    def __post_init__(self) -> None:
        if self.init not in INITS or self.rule not in RULES:
            raise ValueError(f"init must be one of {INITS} and rule one of {RULES}, got {self.init!r}, {self.rule!r}")

    def optimiser(self) -> dict:
        """The keyword arguments of :func:`accessibility_lib.experiments.cramming.cram` it sets (part of every store
        key; the book's default init and rule are left out, so the keys of the first runs are unchanged)."""
        out = {"lr": self.lr, "betas": list(self.betas), "weight_decay": self.weight_decay}
        if self.init_scale != 1.0:
            out["init_scale"] = self.init_scale
        if self.init != "embedding_stats":
            out["init"] = self.init
        if self.rule != "book":
            out["rule"] = self.rule
        return out

    def to_dict(self) -> dict:
        return {**asdict(self), "betas": list(self.betas)}


_PAPER = dict(betas=(0.9, 0.9), weight_decay=0.01, init_scale=1.0)
INSTRUMENTS: dict[str, Instrument] = {
    "paper": Instrument(
        "paper",
        "fixed",
        1e-2,
        description="the authors' optimiser (AdamW lr 1e-2, betas (0.9, 0.9), wd 0.01) with the book's initial "
        "prompt, patience rule and verified success, fixed length",
        label=PAPER_LABEL,
        **_PAPER,
    ),
    "lr3e-2": Instrument("lr3e-2", "fixed", 3e-2, description="as paper, lr 3e-2", **_PAPER),
    "lr1e-1": Instrument(
        "lr1e-1", "fixed", 1e-1, description="as paper, lr 1e-1 (Progressive Cramming's lr)", **_PAPER
    ),
    "progressive": Instrument(
        "progressive",
        "progressive",
        1e-2,
        description="paper's optimiser, one prompt grown a token at a time, one fresh retry before giving up",
        **_PAPER,
    ),
    "progressive-lr1e-1": Instrument(
        "progressive-lr1e-1", "progressive", 1e-1, description="progressive growth with lr 1e-1", **_PAPER
    ),
    "authors": Instrument(
        "authors",
        "fixed",
        1e-2,
        description="the authors' loop: N(0,1)·std(W_E) start, AdamW lr 1e-2, betas (0.9, 0.9), wd 0.01, "
        "patience on a strict rise of teacher-forced accuracy, success = 100 % teacher-forced accuracy",
        init="raw_table",
        rule="authors",
        **_PAPER,
    ),
    "authors-book-init": Instrument(
        "authors-book-init",
        "fixed",
        1e-2,
        description="the authors' loop from the book's initial prompt (mean + std·N(0,1) of the scaled embeddings)",
        rule="authors",
        **_PAPER,
    ),
}


def get_instrument(name: str) -> Instrument:
    """The instrument called ``name``.

    Raises:
        ValueError: an unknown name; the message lists the instruments.
    """
    if name not in INSTRUMENTS:
        raise ValueError(f"unknown cramming instrument {name!r}; choose one of: {', '.join(INSTRUMENTS)}")
    return INSTRUMENTS[name]


def instrument_label(name: str) -> str:
    """The printed name of an instrument (:attr:`Instrument.printed`): e.g. ``"paper"`` ->
    ``"book's loop (authors' optimiser)"``, ``"authors"`` -> ``"authors"``; an unknown name is returned as it is
    (units of older artifacts)."""
    inst = INSTRUMENTS.get(name)
    return name if inst is None else inst.printed


def check_budget(max_steps: object, patience: object = None) -> tuple[int, int]:
    """A step budget as (max_steps, patience); patience None means none (= max_steps).

    Raises:
        ValueError: max_steps or patience not a whole number ≥ 1 (a budget ≤ 0 measures nothing).
    """
    for name, v in (("max_steps", max_steps), ("patience", patience)):
        if v is None and name == "patience":
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a whole number of optimiser steps ≥ 1 (a budget), got {v!r}")
    return int(max_steps), int(max_steps if patience is None else patience)
