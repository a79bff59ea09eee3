"""Chapter 6's copying study as one object: its runs, grouped for each comparison, and the counts its verdict rests on.

:func:`load_study` gathers the runs of the chapter's parameters (from the study artifact
``book/data/copying/study.json``, or trained here through the result store) and returns a
:class:`CopyingStudy`: the runs with their cliffs (:func:`~accessibility_lib.experiments.cliffs.locate_cliff`)
and what the mean-field bound (Thm 4.9 / Cor 4.10 of the paper, Section 4.3) says at each cliff, then the
groupings the chapter and its lab notes compare — the same model at several training lengths (lineages),
neighbouring scratch widths, a fine-tuned model against its architecture from scratch — and the counts
(cliffs located, at the training length, moved) that the chapter's answer states. Chapter 6 and its lab notes
both call it, so they show the same runs.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from accessibility_lib.experiments import cliffs
from accessibility_lib.experiments.copying_bases import SCRATCH_BASES
from accessibility_lib.runs import copying_outcomes, copying_report, work
from accessibility_lib.theory import precision

__all__ = ["CopyingStudy", "load_study", "at_training_length", "counts_past", "copied_lengths", "SHAPE_OF",
           "CONVENTION"]  # fmt: skip

#: a pretrained base and the same architecture from random weights (its control)
SHAPE_OF = {"nano": "nano-shape", "nano-mamba": "nano-mamba-shape"}
#: the ε convention of the chapter's mean-field rows: r = the largest L2 norm of h, ε = r∞·2^−11
CONVENTION = precision.L2_FP16


def at_training_length(run: dict) -> bool:
    """Whether a run's cliff range reaches the gap [L, L + 1] between its longest trained length and the next."""
    c, L = run["cliff"], run["cfg"].train_max_len
    return c.low <= L + 1 and c.high >= L


def counts_past(run: dict, at_least: int = 1) -> tuple[int | None, int | None, int | None]:
    """``(n, copied, strings)`` at the first tested length n ≥ L + ``at_least`` (L the longest training length).

    Returns ``(None, None, None)`` when no such length was tested.
    """
    ev, L = run["rec"]["eval"], run["cfg"].train_max_len
    ns = np.broadcast_to(np.asarray(ev["n"]), (len(ev["length"]),))
    return min(
        ((int(n), int(k), int(N)) for n, k, N in zip(ev["length"], ev["exact"], ns) if n >= L + at_least),
        default=(None, None, None),
    )


def copied_lengths(run: dict, at_least: float = cliffs.NEAR_FULL) -> set[int]:
    """The tested lengths at which a run copies at least ``at_least`` of the held-out strings exactly."""
    ev = run["rec"]["eval"]
    return {int(n) for n, p in zip(ev["length"], ev["exact_rate"]) if p >= at_least}


@dataclass
class CopyingStudy:
    """The runs of chapter 6's parameters and the groupings its comparisons use.

    Attributes:
        params: the chapter's parameters (:func:`~accessibility_lib.runs.presets.resolve` of ``"copying"``).
        runs: one dict a run (:func:`~accessibility_lib.runs.copying_report.gather_runs`), each with ``mf``
            added: :func:`~accessibility_lib.runs.copying_report.mean_field_at_cliff` under :data:`CONVENTION`.
        missing: labels of runs neither in the artifact nor computed.
        artifact: the study artifact (or None when the runs were trained here).
        seconds: wall time of gathering them.
    """

    params: dict
    runs: list[dict]
    missing: list[str] = field(default_factory=list)
    artifact: dict | None = None
    seconds: float = 0.0

    def __post_init__(self) -> None:
        for r in self.runs:
            r["mf"] = copying_report.mean_field_at_cliff(r["rec"], r["cliff"], self.params["alphabet_size"], CONVENTION)

    # -- the runs, found and grouped ------------------------------------------------------------------------------
    @property
    def L0(self) -> int:
        """The common longest training length (every model is trained there)."""
        return int(self.params["train_max_len"])

    def find(self, base: str, L: int | None = None, width: int | None = None) -> dict | None:
        """The run of ``base`` at training length ``L`` (default :attr:`L0`) and, for scratch, ``width``; or None."""
        for r in self.runs:
            c = r["cfg"]
            if c.base == base and c.train_max_len == (L or self.L0) and (width is None or c.d_model == width):
                return r
        return None

    @staticmethod
    def family(run: dict) -> tuple[str, int | None]:
        """The model a run trains: its base, and its width for ``"scratch"`` (one colour each in the figures)."""
        return (run["cfg"].base, run["cfg"].d_model if run["cfg"].base == "scratch" else None)

    @property
    def families(self) -> list[tuple[str, int | None]]:
        """Every model of the study, in the order of the runs."""
        return list(dict.fromkeys(self.family(r) for r in self.runs))

    @property
    def at_L0(self) -> list[dict]:
        """The runs at the common training length, one a model."""
        return [r for r in self.runs if r["cfg"].train_max_len == self.L0]

    @property
    def lineages(self) -> list[tuple[str, list[dict]]]:
        """``(name, runs in order of training length)`` of every swept model (one a width for scratch)."""
        out = []
        sweep = [b for b in self.params["bases"] if b in (self.params.get("sweep_bases") or [])]
        for b in sweep:
            for w in sorted(self.params["widths"]) if b == "scratch" else [None]:
                seq = sorted(
                    (r for r in self.runs if r["cfg"].base == b and (w is None or r["cfg"].d_model == w)),
                    key=lambda r: r["cfg"].train_max_len,
                )
                name = f"scratch, d_model = {w}" if b == "scratch" else b if b in SCRATCH_BASES else f"{b} (fine-tuned)"
                if seq:
                    out.append((name, seq))
        return out

    @property
    def width_pairs(self) -> list[tuple[dict, dict]]:
        """Neighbouring scratch widths at each training length trained at two widths or more."""
        pairs = []
        for L in sorted({r["cfg"].train_max_len for r in self.runs}):
            by_width = sorted(
                (r for r in self.runs if r["cfg"].base == "scratch" and r["cfg"].train_max_len == L),
                key=lambda r: r["cfg"].d_model,
            )
            pairs += list(zip(by_width, by_width[1:]))
        return pairs

    @property
    def pretrain_pairs(self) -> list[tuple[dict, dict]]:
        """``(fine-tuned, from scratch)``: a pretrained base and its architecture from random weights, same L."""
        return [
            (a, c)
            for b, s in SHAPE_OF.items()
            for a in self.runs
            if a["cfg"].base == b
            for c in self.runs
            if c["cfg"].base == s and c["cfg"].train_max_len == a["cfg"].train_max_len
        ]

    # -- what the cliffs show -------------------------------------------------------------------------------------
    def kind(self, *kinds: str) -> list[dict]:
        """The runs whose cliff is of one of ``kinds`` ("step", "fall", "beyond", "below", "irregular")."""
        return [r for r in self.runs if r["cliff"].kind in kinds]

    @property
    def located(self) -> list[dict]:
        """Runs with a located cliff (a step or a fall)."""
        return self.kind("step", "fall")

    @property
    def at_L(self) -> list[dict]:
        """Located cliffs whose range reaches the gap between L and L + 1."""
        return [r for r in self.located if at_training_length(r)]

    @property
    def informative_falls(self) -> list[dict]:
        """Falls with two or more tested lengths inside them and no rebound: the only ones an R² can judge."""
        return [r for r in self.kind("fall") if r["cliff"].data.n_informative > 1 and not r["cliff"].data.rebounds.size]

    @property
    def thin_falls(self) -> list[dict]:
        """Falls through one tested length or none (a logistic passes through them almost exactly)."""
        return [r for r in self.kind("fall") if r["cliff"].data.n_informative <= 1]

    @property
    def rebounding(self) -> list[dict]:
        """Runs copied again at a length after a shorter one copied never."""
        return [r for r in self.runs if r["cliff"].data.rebounds.size]

    @staticmethod
    def moved(a: dict, b: dict) -> str | None:
        """ "out", "in" or None: whether the cliff range moved from run ``a`` to run ``b`` (disjoint ranges)."""
        return cliffs.compare_cliffs(a["cliff"], b["cliff"]).moved

    @property
    def moves_L(self) -> list[bool]:
        """For each pair of successive training lengths of a lineage: did the cliff move out?"""
        return [self.moved(a, c) == "out" for _, seq in self.lineages for a, c in zip(seq, seq[1:])]

    @property
    def moves_width(self) -> list[bool]:
        """For each pair of neighbouring scratch widths: did the cliff move (either way)?"""
        return [self.moved(a, c) is not None for a, c in self.width_pairs]

    @property
    def moves_pretraining(self) -> list[bool]:
        """For each fine-tuned model against its architecture from scratch: did the cliff move (either way)?"""
        return [self.moved(c, a) is not None for a, c in self.pretrain_pairs]

    def fisher_past_L(self) -> list[dict]:
        """Fisher's exact test at the first length past L, fine-tuned against from scratch, one pair each.

        Returns:
            ``[{"fine_tuned", "scratch" (the runs), "n", "k_fine_tuned", "k_scratch", "strings", "p"}]`` (p
            two-sided), only for pairs whose first length past L is the same for both.
        """
        from scipy.stats import fisher_exact

        out = []
        for a, c in self.pretrain_pairs:
            (n_a, k_a, N_a), (n_c, k_c, N_c) = counts_past(a), counts_past(c)
            if n_a is None or n_a != n_c:
                continue
            p = float(fisher_exact([[k_a, N_a - k_a], [k_c, N_c - k_c]]).pvalue)
            out.append(
                {"fine_tuned": a, "scratch": c, "n": n_a, "k_fine_tuned": k_a, "k_scratch": k_c, "strings": N_a, "p": p}
            )
        return out

    def copied_past_own_cliff(self) -> list[dict]:
        """Where a model trained longer copies lengths it copied never when trained shorter.

        Returns:
            ``[{"name", "L_short", "L_long", "lengths" (sorted)}]``, one per lineage step that shows it.
        """
        out = []
        for name, seq in self.lineages:
            for a, c in zip(seq, seq[1:]):
                ev = a["rec"]["eval"]
                fails = {int(n) for n, p in zip(ev["length"], ev["exact_rate"]) if p == 0}
                shown = sorted(copied_lengths(c) & fails)
                if shown:
                    out.append(
                        {
                            "name": name,
                            "L_short": a["cfg"].train_max_len,
                            "L_long": c["cfg"].train_max_len,
                            "lengths": shown,
                        }
                    )
        return out

    def most_copied_past_L(self, far: bool) -> tuple[int, int, int | None, str | None]:
        """``(copied, strings, n, label)``: the highest rate any located run reaches at L + 1 (``far`` False) or
        at L + 2 and beyond (``far`` True); ``(0, 1, None, None)`` when none copies anything there."""
        best = (0, 1, None, None)
        for r in self.located:
            ev, L = r["rec"]["eval"], r["cfg"].train_max_len
            ns = np.broadcast_to(np.asarray(ev["n"]), (len(ev["length"]),))
            for n, k, N in zip(ev["length"], ev["exact"], ns):
                if (n >= L + 2) if far else (n == L + 1):
                    if int(k) / int(N) > best[0] / best[1]:
                        best = (int(k), int(N), int(n), r["label"])
        return best

    @property
    def orders(self) -> np.ndarray:
        """log10 n* − log10 cliff of every run with a finite cliff position."""
        return np.array([r["mf"]["orders"] for r in self.runs if math.isfinite(r["mf"]["orders"])])


def load_study(params: dict, store=None, from_artifact: bool | None = None) -> CopyingStudy:
    """Chapter 6's runs for ``params``: read from the study artifact, or trained and evaluated here.

    Args:
        params: the chapter's parameters (:func:`~accessibility_lib.runs.presets.resolve` of ``"copying"``).
        store: the result store trained runs are cached in (default :func:`~accessibility_lib.ground.results.
            default_store`); unused when every run comes from the artifact.
        from_artifact: read ``book/data/copying/study.json`` and train nothing (default ``params["from_artifact"]``).

    Returns:
        A :class:`CopyingStudy` (its ``missing`` lists the runs the artifact lacks).

    Raises:
        RuntimeError: no run at all could be shown (the artifact lacks every one and nothing was trained).
    """
    from accessibility_lib.ground.results import default_store

    t0 = time.perf_counter()
    use_artifact = params["from_artifact"] if from_artifact is None else from_artifact
    store = store if store is not None else default_store()

    def compute(label, cfg):
        model, info, res = work.run_copying(cfg, params, store, params["device"])
        return copying_outcomes.outcome_record(label, cfg, params, model, info, res)

    units = work.copying_runs(params)
    artifact = copying_outcomes.load_artifact(copying_outcomes.STUDY_ARTIFACT) if use_artifact else None
    runs, missing = copying_report.gather_runs(units, params, artifact, compute=None if use_artifact else compute)
    if not runs:
        raise RuntimeError(
            f"no copying run to show: {missing} are not in {copying_outcomes.STUDY_ARTIFACT}; make "
            "them with scripts/copying_study.py, or pass -p from_artifact false to train them here"
        )
    return CopyingStudy(params, runs, missing, artifact, time.perf_counter() - t0)
