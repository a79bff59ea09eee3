"""The result of an n50 search, whatever its design (:class:`N50Search`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class N50Search:
    """Result of :func:`locate_n50` / :func:`find_n50`.

    Attributes:
        n50: the fitted 50 % length (tokens), NaN when the fit is degenerate (see ``fit.message``).
        fit: the :class:`~accessibility_lib.experiments.fitting.SigmoidFit` on every length evaluated.
        lengths: (L,) lengths evaluated, sorted (tokens).
        rates: (L,) success fraction at each length.
        bracket: (lo, hi): a length with rate > ½ below one with rate < ½ (0 where not found).
        bracketed: whether both sides were found (else the crossing lies beyond the tested range).
        runs: optimisation runs actually performed (targets crammed, cached ones excluded).
        cached: runs found in the result store.
        trials: (L,) targets behind each rate.
        outcomes: per-target records (``n``, ``target`` and the cramming record), for artifacts.
        design: the search design that produced it (:data:`SEARCH_DESIGNS`).
        token_steps: the search's cost: Σ over the outcomes it used (crammed or found in the store) of
            optimiser steps × input positions (:func:`token_steps`), i.e. forward+backward token-steps.
    """

    n50: float
    fit: object
    lengths: np.ndarray
    rates: np.ndarray
    bracket: tuple[int, int]
    runs: int
    cached: int
    trials: np.ndarray | None = None
    bracketed: bool = False
    outcomes: list = field(default_factory=list)
    design: str = "bisect"
    token_steps: int = 0
