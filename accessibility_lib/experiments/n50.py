"""n50(m): the target length at which half the targets can be crammed into m vectors.

Paper §5 (Fig 4): for each prompt length m the success rate against the target length n is a
decreasing sigmoid; its 50 % point n50(m) is compared with the bound n* = C·m of Cor 4.6. The
replication code sweeps a grid (steps of 100, then 10, 20 targets a point). Here:

1. **bracket from both sides**: a length whose rate is above ½ *and* one whose rate is below ½ must
   both be seen before a crossing is reported (a rate of exactly ½ is neither);
2. **bisect** the bracket with a few targets per length;
3. evaluate a few lengths around the crossing with every target and **fit** the logistic to every
   length seen (binomial likelihood, :func:`accessibility_lib.experiments.fitting.fit_sigmoid`).

Every (m, n, target) outcome goes to the result store as soon as its batch finishes, keyed by the
model, its weights, the target source's layout (kind, length convention, corpus, seed) and every
cramming setting, so a killed sweep resumes without redoing finished work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from accessibility_lib.experiments.cram_result import continuation_settings, effective_patience, same_prefix
from accessibility_lib.experiments.cramming import cram
from accessibility_lib.experiments.n50_bisect import locate_n50
from accessibility_lib.experiments.n50_result import N50Search
from accessibility_lib.ground.checks import check_int, check_positive_real
from accessibility_lib.models.decoding import model_dtype
from accessibility_lib.models.handle import context_length

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = [
    "SEARCH_DESIGNS",
    "find_n50",
    "cramming_key",
    "token_steps",
    "prompt_norms",
    "StopSearch",
]

#: n50 search designs: "sequential" (:mod:`accessibility_lib.experiments.n50_sequential`: predicted start, sequential
#: sides, full counts at the crossing; the default) and "bisect" (:func:`locate_n50`: doubling from a
#: fixed start, the same number of probe targets at every length; the design of the first artifacts).
SEARCH_DESIGNS = ("sequential", "bisect")


def prompt_norms(prompt) -> dict:
    """The crammed prompt's size: the largest L2 norm of its m vectors and its largest |coordinate|.

    Args:
        prompt: (m, d_model) array.

    Returns:
        ``{"prompt_l2": ..., "prompt_linf": ...}`` (the model's input units).
    """
    x = np.asarray(prompt, dtype=np.float64)
    return {"prompt_l2": float(np.linalg.norm(x, axis=-1).max()), "prompt_linf": float(np.abs(x).max())}


#: what a failure at the cap stores beside its outcome (no patience), so that a larger budget continues it:
#: scalars in the record, arrays in its ``.npz`` (:meth:`~accessibility_lib.experiments.cram_result.CramResult.state`)
STATE_SCALARS = ("adam_steps", "best_loss", "since_best")
STATE_ARRAYS = ("prompt", "exp_avg", "exp_avg_sq")


def token_steps(outcomes, m: int, n_prefix: int = 0) -> int:
    """Forward+backward token-steps of cramming outcomes: Σ steps × (n_prefix + m + n − 1) input positions.

    Args:
        outcomes: records with ``n`` (target length, tokens) and ``steps`` (optimiser updates).
        m: prompt length (soft vectors); n_prefix: fixed tokens before the prompt (e.g. a BOS).

    Returns:
        The total, an int (token-steps: one input position through one forward and backward pass).
    """
    return int(sum(int(r["steps"]) * (n_prefix + m + int(r["n"]) - 1) for r in outcomes))


def cramming_key(
    model_name: str,
    weights: str,
    dtype: str,
    source_name: str,
    layout: dict | None,
    m: int,
    n: int,
    target: int,
    seed: int,
    settings: dict,
) -> dict:
    """The result-store key of one (model, target source, m, n, target) cramming outcome."""
    key = {
        "model": model_name,
        "weights": weights,
        "dtype": dtype,
        "source": source_name,
        "m": m,
        "n": n,
        "target": target,
        "seed": seed,
        **settings,
    }
    if layout is not None:
        key["layout"] = layout
    return key


def find_n50(
    handle: ModelHandle,
    source,
    m: int,
    n_targets: int = 20,
    *,
    store=None,
    model_name: str = "model",
    source_name: str | None = None,
    n_start: int | None = None,
    n_max: int | None = None,
    n_probe: int | None = None,
    rel_tol: float | None = None,
    n_around: int = 4,
    seed: int = 0,
    show_progress: bool = True,
    should_stop=None,
    design: str = "sequential",
    n_pred: float | None = None,
    alpha: float = 0.05,
    batch: int | None = None,
    growth: float = 1.5,
    nested_budgets: tuple[int, ...] = (),
    prefer_stored: bool = True,
    max_width: float | None = None,
    **cram_kwargs,
) -> N50Search:
    """Locate n50(m) for one model, target source and prompt length, resumably.

    Args:
        handle: model handle (see :func:`accessibility_lib.experiments.cramming.cram`).
        source: a :class:`~accessibility_lib.experiments.targets.TargetSource` (its ``n_given`` and ``prefix_ids``
            are passed to :func:`cram`, its ``layout()`` goes into the store keys), or any callable
            ``source(n, i) -> n token ids`` (deterministic; then nothing is given or prefixed).
        m: prompt length (≥ 1).
        n_targets: targets per length in the final step (the paper: 20).
        store: a :class:`~accessibility_lib.ground.results.ResultStore`, or None for no caching.
        model_name, source_name: labels in the store keys (``source_name`` defaults to ``source.name``).
        n_start: first length tried by the "bisect" design (default 10·m); n_max: longest (default: what
            the context allows).
        n_probe, n_around: see :func:`locate_n50` ("bisect" design only).
        rel_tol: the bisection's resolution (default 0.1 for "bisect", 0.25 for "sequential").
        design: one of :data:`SEARCH_DESIGNS`.
        n_pred: the "sequential" design's predicted n50, where it starts (default: ``n_start``, else 10·m);
            see :func:`accessibility_lib.experiments.n50_sequential.predict_n50`.
        alpha, batch, growth: the "sequential" design's side-test level, targets between looks and
            bracketing factor (:func:`accessibility_lib.experiments.n50_sequential.locate_n50_sequential`).
        nested_budgets: other step budgets whose stored outcomes answer this one's look-ups when the
            patience is off (``patience == max_steps``): an outcome at a larger budget B gives this budget
            b's (success when it succeeded within b steps), a success at a smaller budget is the same
            success here. Such outcomes are stored with ``derived_from`` = B. A failure at the cap of a
            smaller budget is *continued* from its stored Adam state (``continued_from`` = its steps), so
            only the steps it had not run are run.
        prefer_stored: let the design take a length whose outcomes are already stored in place of the one
            it would try in the same interval (resuming, reusing other runs). False: the design chooses its
            lengths as it would on an empty store — stored outcomes still answer its look-ups (nothing is
            crammed twice), they only no longer steer it (``benchmarks/bench_n50_search.py``, so that
            one design's cost does not depend on what another design stored before it).
        max_width: the "sequential" design's precision target (tokens; None: none): it stops adding targets
            once the interval is a measured width at most this wide (see
            :func:`~accessibility_lib.experiments.n50_sequential.locate_n50_sequential`).
        seed: target i is crammed from seed + i.
        show_progress: a progress bar over crammed targets.
        should_stop: optional callable; when it returns True before a batch, :class:`StopSearch`
            is raised (finished batches are already in the store).
        **cram_kwargs: passed to :func:`cram` (max_steps, lr, patience, weight_decay, ...).

    Returns:
        An :class:`N50Search` whose ``outcomes`` hold every per-target record behind its rates. For a
        natural-text source (one passage tried at several lengths) its fit's interval is the passage-horizon
        interval (:func:`~accessibility_lib.experiments.passage_horizons.with_horizon_interval`), whichever
        the design, so two designs' intervals compare like for like.

    Raises:
        ValueError: m < 1, n_targets < 1, a source that is not callable, an unknown design, or bad
            cramming settings.
    """
    from accessibility_lib.experiments.n50_sequential import locate_n50_sequential
    from accessibility_lib.ground.progress import progress
    from accessibility_lib.models.fingerprint import weights_fingerprint

    m = check_int("m", m, minimum=1)
    n_targets = check_int("n_targets", n_targets, minimum=1)
    if design not in SEARCH_DESIGNS:
        raise ValueError(f"design must be one of {', '.join(map(repr, SEARCH_DESIGNS))}; got {design!r}")
    if not callable(source):
        raise ValueError(
            f"source must be a TargetSource or a callable (n, i) -> token ids, got {type(source).__name__}"
        )
    if "lr" in cram_kwargs:
        check_positive_real("lr", cram_kwargs["lr"])
    for k in ("n_given", "prefix_ids"):
        if k in cram_kwargs and hasattr(source, "layout"):
            raise ValueError(f"{k} comes from the TargetSource; do not pass it to find_n50 as well")
    n_given = int(getattr(source, "n_given", cram_kwargs.pop("n_given", 0)))
    prefix_ids = list(getattr(source, "prefix_ids", None) or cram_kwargs.pop("prefix_ids", None) or [])
    layout = source.layout() if hasattr(source, "layout") else None
    n_min = n_given + 1
    ctx = context_length(handle)
    if n_max is None:
        n_max = (ctx - m - len(prefix_ids) + 1) if ctx else 4096
    n_start = 10 * m if n_start is None else n_start
    name = source_name or getattr(source, "name", None) or getattr(source, "__name__", "source")
    settings = {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(cram_kwargs.items())}
    if prefix_ids and layout is None:
        settings["prefix_ids"] = prefix_ids
    if n_given and layout is None:
        settings["n_given"] = n_given
    run_settings = continuation_settings(
        lr=cram_kwargs.get("lr", 1e-2),
        betas=cram_kwargs.get("betas", (0.9, 0.9)),
        weight_decay=cram_kwargs.get("weight_decay", 0.0),
        init=cram_kwargs.get("init", "embedding_stats"),
        init_scale=cram_kwargs.get("init_scale", 1.0),
        rule=cram_kwargs.get("rule", "book"),
        n_given=n_given,
        prefix_ids=prefix_ids,
        patience=None,
        max_steps=1,
    )
    bar = progress(total=None, desc=f"cramming m={m} ({name})", disable=not show_progress) if show_progress else None
    weights = weights_fingerprint(handle)  # a retrained model under the same name never reuses results
    dtype = str(model_dtype(handle))
    outcomes: dict[tuple[int, int], dict] = {}
    mine: set[tuple[int, int]] = set()  # (n, i) crammed by this call: not "cached" when looked at again

    def evaluate(n: int, count: int):
        keys = [
            cramming_key(model_name, weights, dtype, name, layout, m, n, i, seed + i, settings) for i in range(count)
        ]
        found = [store.get("cramming", k) if store is not None else None for k in keys]
        for i, f in enumerate(found):
            if f is None and nest:
                found[i] = _nested(keys[i])
            elif f is not None and "prompt_l2" not in f and "prompt" in f:
                f.update(prompt_norms(f["prompt"]))
        todo = [i for i, f in enumerate(found) if f is None]
        if todo:
            if should_stop is not None and should_stop():
                raise StopSearch(f"stopped before cramming {len(todo)} targets at m = {m}, n = {n}")
            resume = [_continuable(keys[i]) if nest else None for i in todo]
            res = cram(
                handle,
                [list(source(n, i)) for i in todo],
                m,
                seed=[seed + i for i in todo],
                n_given=n_given,
                prefix_ids=prefix_ids or None,
                resume=resume,
                **cram_kwargs,
            )
            for j, i in enumerate(todo):
                found[i] = {**res.record(j), **prompt_norms(res.prompts[j].numpy())}
                if resume[j] is not None:
                    found[i]["continued_from"] = int(resume[j][0]["steps"])
                arrays = {"prompt": res.prompts[j].numpy()}
                if nest and found[i].get("stopped_by", "cap") == "cap" and not found[i]["success"]:
                    # a failure at the cap (not ended by patience or divergence): keep Adam's state so a larger
                    # budget continues it
                    scalars, state = res.state(j)
                    found[i].update({k: scalars[k] for k in STATE_SCALARS})
                    arrays.update(state)
                mine.add((n, i))
                if store is not None:
                    store.put("cramming", keys[i], found[i], arrays=arrays)
            if bar is not None:
                bar.update(len(todo))
                bar.set_postfix(n=n, rate=f"{np.mean([f['success'] for f in found]):.2f}")
        for i, f in enumerate(found):
            outcomes[(n, i)] = {"n": n, "target": i, **{k: v for k, v in f.items() if k not in STATE_ARRAYS}}
        rate = float(np.mean([f["success"] for f in found]))
        cached_here = sum(1 for i in range(count) if i not in todo and (n, i) not in mine)
        for i in range(count):
            mine.add((n, i))
        return rate, len(todo), cached_here

    nest = (
        store is not None
        and bool(nested_budgets)
        and "max_steps" in settings
        and (settings.get("patience") == settings.get("max_steps") or settings.get("rule") == "authors")
    )
    budget_b = int(settings.get("max_steps", 0))
    own_patience = effective_patience(settings.get("patience"), budget_b) if "max_steps" in settings else None

    def _other_keys(key: dict, other: int):
        """The store keys of the same target at budget ``other``: with no patience, and (the authors' rule) with
        this run's patience; each with that run's effective patience."""
        out = [({**key, "max_steps": other, "patience": other}, None)]
        if own_patience is not None:
            out.append(({**key, "max_steps": other, "patience": own_patience}, effective_patience(own_patience, other)))
        return out

    def _nested(key: dict) -> dict | None:
        """This budget's outcome read off a run of the same target with another budget, where the two runs are
        provably the same up to the smaller budget h (:func:`same_prefix`): a run that ended at step s ≤ h (success,
        patience) ends so at any budget ≥ s; a longer run that went past this budget b is a failure at b."""
        b = budget_b
        for big in sorted(set(int(x) for x in nested_budgets) - {b}):
            for okey, opat in _other_keys(key, big):
                other = store.get("cramming", okey)
                if other is None or not same_prefix(opat, own_patience, min(b, big)):
                    continue
                s_, why = int(other["steps"]), other.get("stopped_by")
                ended = other["success"] or (why in ("patience", "diverged") and s_ <= b)
                if not (big > b or ended):
                    continue
                drop = STATE_ARRAYS + STATE_SCALARS + ("continued_from",)
                rec = {k: v for k, v in other.items() if k not in drop}
                ok = bool(other["success"]) and s_ <= b
                rec.update(success=ok, steps=min(s_, b), derived_from=big)
                if s_ > b:
                    rec["stopped_by"] = "cap"
                    for k in ("verified", "verified_at_hit"):
                        rec.pop(k, None)
                arrays = {"prompt": np.asarray(other["prompt"])} if ok and "prompt" in other else None
                if not ok:
                    rec.pop("prompt_l2", None), rec.pop("prompt_linf", None)
                store.put("cramming", key, rec, arrays=arrays)
                return rec
        return None

    def _continuable(key: dict):
        """The state of the longest stored run of this target at a smaller budget that stopped at its cap with no
        patience stop and provably the same computation so far: this budget's run continues it instead of
        repeating its first steps (``cram`` checks the state's settings, seed and patience again)."""
        b = budget_b
        for small in sorted((int(x) for x in nested_budgets if int(x) < b), reverse=True):
            for okey, opat in _other_keys(key, small):
                other = store.get("cramming", okey)
                if (
                    other is None
                    or other["success"]
                    or other.get("diverged")
                    or other.get("stopped_by", "cap") != "cap"
                    or int(other["steps"]) != small
                    or not all(k in other for k in STATE_ARRAYS + STATE_SCALARS)
                    or not same_prefix(opat, own_patience, small)
                    or (own_patience is not None and int(other["since_best"]) >= own_patience)
                ):
                    continue
                scalars = {k: other[k] for k in STATE_SCALARS + ("steps", "restarts", "best_accuracy", "final_loss")}
                scalars["decode_disagreements"] = other.get("decode_disagreements", 0)
                scalars["seed"] = int(okey["seed"])
                scalars["settings"] = {**run_settings, "patience": opat}
                return scalars, {k: np.asarray(other[k], dtype=np.float32) for k in STATE_ARRAYS}
        return None

    def stored_lengths() -> dict[int, int]:
        """n -> c: targets 0 … c − 1 of length n are stored for this search's settings (from any search)."""
        from accessibility_lib.ground.results import decode, encode

        have: dict[int, set[int]] = {}
        for key, _ in store.entries("cramming", model=model_name, weights=weights, dtype=dtype, source=name, m=m):
            n, i = int(key["n"]), int(key["target"])
            want = cramming_key(model_name, weights, dtype, name, layout, m, n, i, seed + i, settings)
            if i < n_targets and key == decode(encode(want)):
                have.setdefault(n, set()).add(i)
        return {n: next(c for c in range(len(ids) + 1) if c not in ids) for n, ids in have.items()}

    def known(n: int, count: int) -> bool:
        """Whether targets 0..count-1 of length n are already in the store."""
        return store is not None and all(
            store.has("cramming", cramming_key(model_name, weights, dtype, name, layout, m, n, i, seed + i, settings))
            for i in range(count)
        )

    def per_passage(fit):  # natural targets: one passage at several lengths (passage_horizons)
        from accessibility_lib.experiments.passage_horizons import with_horizon_interval

        return with_horizon_interval(fit, list(outcomes.values()), n_min=n_min)

    try:
        if design == "bisect":
            res = locate_n50(
                evaluate,
                n_start,
                n_max,
                n_trials=n_targets,
                n_probe=n_probe,
                rel_tol=0.1 if rel_tol is None else rel_tol,
                n_around=n_around,
                seed=seed,
                n_min=n_min,
                known=known if prefer_stored else None,
            )
            if getattr(source, "kind", None) == "natural":  # the same interval as the sequential design's
                res.fit = per_passage(res.fit)
        else:
            res = locate_n50_sequential(
                evaluate,
                n_start if n_pred is None else n_pred,
                n_max,
                n_trials=n_targets,
                alpha=alpha,
                batch=batch,
                growth=growth,
                rel_tol=0.25 if rel_tol is None else rel_tol,
                n_min=n_min,
                known=known if prefer_stored else None,
                seed=seed,
                stored=stored_lengths if prefer_stored and store is not None else None,
                refit=per_passage if getattr(source, "kind", None) == "natural" else None,
                max_width=max_width,
            )
    finally:
        if bar is not None:
            bar.close()
    res.outcomes = [outcomes[k] for k in sorted(outcomes)]
    res.token_steps = token_steps(res.outcomes, m, len(prefix_ids))
    return res


class StopSearch(RuntimeError):
    """Raised by :func:`find_n50` when its ``should_stop`` callable asks to stop (e.g. a time budget)."""
