"""The named plans of the long cramming runs: the lists of units whose artifacts the book ships.

A plan is a list of :class:`~accessibility_lib.runs.cramming_units.CrammingUnit` run in order by
``scripts/real_model_cramming.py --model M --plan P`` into ``book/data/cramming/<model>.json`` (or ``--out-dir``).
"""

from __future__ import annotations

from accessibility_lib.runs.cramming_units import AUTHORS_STEPS, BASE_STEPS, CrammingUnit

__all__ = ["PLANS", "cramming_plan"]


def _table1_smollm2() -> list[CrammingUnit]:
    """SmolLM2-135M in float32, no patience (so the budget curve nests), in the order the units run:
    the slopes first (m = 1, 2, 3), then uniform tokens, the instruments and the budget curve at m = 1
    (the 1,200-step run continues the 600-step run's capped failures), m = 4, 20 targets at m = 1, the
    random-words budget curve (600 steps at m = 1), 20 targets at m = 2; then natural text at 600 steps for
    m = 2 and 3, which says whether a larger budget moves every n50 alike (the slope at 600 steps), and
    random words at 600 steps for m = 2 and 3 (the same question for the other kind); then m = 4 at 600 steps for
    both kinds, so that each 600-step slope rests on four n50s, as the 300-step slopes do; last, random words at
    1,200 steps at m = 1 (continuing the 600-step run's capped failures), so both kinds' budget curves reach 4×."""
    base = dict(patience=None)
    return [
        CrammingUnit("natural", 1, **base),
        CrammingUnit("random_words", 1, **base),
        CrammingUnit("natural", 2, **base),
        CrammingUnit("random_words", 2, **base),
        CrammingUnit("natural", 3, **base),
        CrammingUnit("random_words", 3, **base),
        CrammingUnit("random_tokens", 1, **base),
        CrammingUnit("natural", 1, instrument="lr3e-2", **base),
        CrammingUnit("natural", 1, instrument="lr1e-1", **base),
        CrammingUnit("natural", 1, instrument="progressive", **base),
        CrammingUnit("natural", 1, max_steps=600, **base),
        CrammingUnit("natural", 1, max_steps=1200, **base),
        CrammingUnit("natural", 4, **base),
        CrammingUnit("random_words", 4, **base),
        CrammingUnit("natural", 1, n_targets=20, **base),
        CrammingUnit("random_words", 1, n_targets=20, **base),
        CrammingUnit("random_words", 1, max_steps=600, **base),
        CrammingUnit("natural", 2, n_targets=20, **base),
        CrammingUnit("random_words", 2, n_targets=20, **base),
        CrammingUnit("natural", 2, max_steps=600, **base),
        CrammingUnit("natural", 3, max_steps=600, **base),
        CrammingUnit("random_words", 2, max_steps=600, **base),
        CrammingUnit("random_words", 3, max_steps=600, **base),
        CrammingUnit("natural", 4, max_steps=600, **base),
        CrammingUnit("random_words", 4, max_steps=600, **base),
        CrammingUnit("random_words", 1, max_steps=1200, **base),
    ]


def _instruments_nano() -> list[CrammingUnit]:
    """The instrument comparison on nano (held-out KJV natural text and random words, m = 1, 2), then the
    budget curve (2× and 4× the base budget, m = 1); last, the budget pairs (1× and 2× at m = 2, 4: does a
    larger budget move n50 more at larger m, where the chapter's runs stop more failures at the cap?)."""
    return [
        CrammingUnit(kind, m, patience=None, corpus="heldout", instrument=inst)
        for kind in ("natural", "random_words")
        for m in (1, 2)
        for inst in ("paper", "lr3e-2", "lr1e-1", "progressive")
        if not (inst == "progressive" and kind != "natural")
    ] + [
        CrammingUnit(kind, 1, max_steps=BASE_STEPS * k, patience=None, corpus="heldout")
        for k in (2, 4)
        for kind in ("natural", "random_words")
    ] + [CrammingUnit(kind, m, max_steps=BASE_STEPS * k, patience=None, corpus="heldout")
         for m, k in ((4, 1), (2, 2), (4, 2)) for kind in ("natural", "random_words")]  # fmt: skip


def _architectures_plan() -> list[CrammingUnit]:
    return [
        CrammingUnit(kind, m, max_steps=300, patience=100, corpus="heldout", n_targets=10, design="bisect")
        for kind in ("natural", "random_words")
        for m in (1, 2, 4)
    ] + [  # m = 3, added after the first six: four values of m give the slopes two residual degrees of freedom
        CrammingUnit(kind, 3, max_steps=300, patience=100, corpus="heldout", n_targets=10, design="bisect")
        for kind in ("natural", "random_words")
    ]


def _budget_nano() -> list[CrammingUnit]:
    """The budget model's validation on nano (issue 54): m = 1, 2, 4, both kinds, the same 10 held-out targets at
    300, 600, 1,200 and 3,000 steps with no patience (so each budget continues the one below it). The runner stores
    each 3,000-step unit's prediction from its curve at 300 … 1,200 steps before it starts
    (:mod:`accessibility_lib.runs.budget_model`); the 300- and 600-step units and m = 1 at 1,200 were run by the
    ``instruments`` plan (``--import-from`` its artifact reuses them)."""
    budgets = (BASE_STEPS, 2 * BASE_STEPS, 4 * BASE_STEPS, AUTHORS_STEPS)
    return [
        CrammingUnit(kind, m, max_steps=b, patience=None, corpus="heldout")
        for b in budgets
        for m in (1, 2, 4)
        for kind in ("natural", "random_words")
    ]


def _paper_budget(model: str) -> list[CrammingUnit]:
    """The authors' loop at their budget (issue 54): the ``authors`` instrument (their initial prompt, optimiser,
    patience rule and success test; 3,000 steps, patience 500) and, beside it, ``authors-book-init`` (the same loop
    from the book's initial prompt), on the targets of the stored 300-step units (same seeds; 20 targets a length
    at m = 1 and 2, 10 at larger m). First, ``authors`` at the base budget with no patience at m = 1, beside the
    stored ``paper`` unit of the same targets: the initial prompt's effect at 300 steps (the two loops differ
    there by their initial prompt, and by one step in where each checks success, see the conventions appendix).
    SmolLM2-135M: both kinds at m = 1 … 4 and the book's initial prompt at m = 1, 2; Gemma-3-270M: both kinds at
    m = 1, natural text at m = 2. The runner stores each 3,000-step unit's predicted n50 before it starts; the
    artifact's ``provenance.projection`` gives the hours left (an upper estimate: it ignores the patience)."""
    base = [CrammingUnit(kind, 1, max_steps=BASE_STEPS, patience=None, instrument="authors") for kind in KINDS]
    full = dict(max_steps=AUTHORS_STEPS, patience=500)
    if model == "gemma-3-270m":
        return base[:1] + [
            CrammingUnit("natural", 1, n_targets=20, instrument="authors", **full),
            CrammingUnit("random_words", 1, n_targets=20, instrument="authors", **full),
            CrammingUnit("natural", 2, n_targets=20, instrument="authors", **full),
            base[1],
        ]

    def at(m: int, inst: str = "authors") -> list[CrammingUnit]:
        return [CrammingUnit(kind, m, n_targets=20 if m <= 2 else 10, instrument=inst, **full) for kind in KINDS]

    # the authors' slope (m = 1 ... 4) first, the book's initial prompt at m = 1 beside it, at m = 2 last
    return base + at(1) + at(1, "authors-book-init") + at(2) + at(3) + at(4) + at(2, "authors-book-init")


KINDS = ("natural", "random_words")


PLANS = {
    # the Table 1 column of SmolLM2-135M (float32): m = 1 … 4, natural and random words, uniform tokens at
    # m = 1, the instruments at m = 1, the budget curves at m = 1 (2× and 4× the steps), 20 targets at m = 1, 2
    ("smollm2-135m", "table1"): _table1_smollm2,
    # Gemma-3-270M (float32) at m = 1, 2 beside the authors' n50 (17.07 natural, 10.00 random words at m = 1),
    # then m = 1 with the paper's 20 targets (sequential: it reuses the 10-target outcomes and searches on
    # until the crossing is bracketed — the 10-target natural interval is open above), then m = 3 and m = 4, so
    # that each slope rests on four n50s (with three, the slope's t interval has one degree of freedom); then
    # the budget curve of natural text at m = 1 (600 and 1,200 steps with no patience, the longer continuing the
    # shorter's capped failures), which says how much of the gap to the authors' 17.07 (3,000 steps, patience
    # 500) a larger budget closes; then random words at 600 and 1,200 steps, whose 300-step units' patience never
    # ended a trial, so that kind's budget curve starts at the base budget too and reaches 4× it; last, both kinds
    # at 600 steps for m = 2 (random words first, the cheaper), the budget pairs that say whether a larger budget
    # moves Gemma's n50s alike at two m (its 300-step units' patience never ended a trial, so they pair)
    ("gemma-3-270m", "table1"): lambda: (
        [
            CrammingUnit(kind, m, design="bisect" if m == 1 else "sequential")
            for m in (1, 2)
            for kind in ("natural", "random_words")
        ]
        + [CrammingUnit(kind, 1, n_targets=20) for kind in ("natural", "random_words")]
        + [CrammingUnit(kind, m) for m in (3, 4) for kind in ("random_words", "natural")]
        + [CrammingUnit("natural", 1, max_steps=steps, patience=None) for steps in (600, 1200)]
        + [CrammingUnit("random_words", 1, max_steps=steps, patience=None) for steps in (600, 1200)]
        + [CrammingUnit(kind, 2, max_steps=600, patience=None) for kind in ("random_words", "natural")]
    ),
    ("nano", "instruments"): _instruments_nano,
    # a quick plan for tests and demonstrations on the shipped model
    ("nano", "smoke"): lambda: [
        CrammingUnit("natural", 1, max_steps=40, patience=20, corpus="heldout", n_targets=4),
        CrammingUnit("random_words", 1, max_steps=40, patience=20, n_targets=4),
    ],
    # chapter 7: the transformer nano and the state-space model nano-mamba under identical units
    ("nano", "architectures"): _architectures_plan,
    ("nano-mamba", "architectures"): _architectures_plan,
    # issue 54: the budget model's validation (nano), the authors' loop at their budget (real models)
    ("nano", "budget"): _budget_nano,
    ("smollm2-135m", "paper-budget"): lambda: _paper_budget("smollm2-135m"),
    ("gemma-3-270m", "paper-budget"): lambda: _paper_budget("gemma-3-270m"),
}


def cramming_plan(model: str, plan: str) -> list[CrammingUnit]:
    """The units of a named plan for a model.

    Raises:
        ValueError: no such (model, plan); the message lists the plans that exist.
    """
    if (model, plan) not in PLANS:
        known = ", ".join(f"{m}:{p}" for m, p in PLANS)
        raise ValueError(f"no cramming plan {plan!r} for model {model!r}; known (model:plan): {known}")
    return PLANS[(model, plan)]()
