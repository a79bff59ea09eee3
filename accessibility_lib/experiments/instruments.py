"""Cramming instruments: the named optimiser-and-protocol settings a capacity is measured with.

Whether some prompt of m vectors forces a target is an existence question; an optimiser can only
find prompts that exist, so every instrument gives a **lower bound** on what the model can be made to
generate, and an instrument that verifies longer targets for the same forward+backward token-steps
is simply a better one. The book reports the paper's instrument (for like-for-like numbers) beside
the best one it measured, every number labelled with the instrument and budget that produced it.

- ``"paper"`` — the authors' optimiser (their replication code): AdamW, lr 1e-2, betas (0.9, 0.9),
  weight decay 0.01, a fresh prompt for every (target, length): the *fixed-length* protocol of the
  paper and of Kuratov et al. (2025).
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

__all__ = ["Instrument", "INSTRUMENTS", "PROTOCOLS", "get_instrument", "check_budget"]

PROTOCOLS = ("fixed", "progressive")


@dataclass(frozen=True)
class Instrument:
    """One cramming configuration.

    Attributes:
        name: the label printed beside every number it produced.
        protocol: ``"fixed"`` (a fresh prompt per target and length) or ``"progressive"``.
        lr: Adam learning rate. betas: Adam betas. weight_decay: AdamW's decoupled decay.
        init_scale: prompts start at mean + init_scale·std·N(0, 1) of the real input embeddings.
        description: one line for tables.
    """

    name: str
    protocol: str
    lr: float
    betas: tuple[float, float]
    weight_decay: float
    init_scale: float
    description: str

    def optimiser(self) -> dict:
        """The keyword arguments of :func:`accessibility_lib.experiments.cramming.cram` it sets (part of every store key)."""
        out = {"lr": self.lr, "betas": list(self.betas), "weight_decay": self.weight_decay}
        if self.init_scale != 1.0:
            out["init_scale"] = self.init_scale
        return out

    def to_dict(self) -> dict:
        return {**asdict(self), "betas": list(self.betas)}


_PAPER = dict(betas=(0.9, 0.9), weight_decay=0.01, init_scale=1.0)
INSTRUMENTS: dict[str, Instrument] = {
    "paper": Instrument(
        "paper",
        "fixed",
        1e-2,
        description="AdamW lr 1e-2, betas (0.9, 0.9), wd 0.01, fixed length (the authors')",
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
}


def get_instrument(name: str) -> Instrument:
    """The instrument called ``name``.

    Raises:
        ValueError: an unknown name; the message lists the instruments.
    """
    if name not in INSTRUMENTS:
        raise ValueError(f"unknown cramming instrument {name!r}; choose one of: {', '.join(INSTRUMENTS)}")
    return INSTRUMENTS[name]


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
