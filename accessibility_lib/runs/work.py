"""The one function that runs each kind of unit of work, from a chapter's parameters.

Chapter cells, the sweeps (serial or Ray, :mod:`accessibility_lib.runs.sweeps`) and the scripts call
these and only these, so the same parameters always make the same store entries:

- **cramming** (chapter 3): :func:`cramming_units` lists a chapter's n50 measurements, and
  :func:`accessibility_lib.runs.cramming_units.run_cramming_series` runs them (per target kind, in m
  order, each search starting from the n50s found before it);
- **support** (chapter 5): :func:`run_support`, one model's support analysis and Table 1 column;
- **copying** (chapter 6): :func:`copying_runs` lists the fine-tunings, :func:`run_copying` trains and
  evaluates one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from accessibility_lib.runs.cramming_units import CrammingUnit

if TYPE_CHECKING:
    from accessibility_lib.models.handle import ModelHandle

__all__ = ["cramming_units", "effective_eps_record", "run_support", "copying_runs", "copying_config", "run_copying"]


def cramming_units(params: dict) -> dict[str, list[CrammingUnit]]:
    """Chapter 3's units for its parameters: target kind -> one unit per m (in m order).

    Args:
        params: the chapter's checked parameters (``kinds``, ``ms``, ``length_convention``, ``corpus``,
            ``n_targets``, ``max_steps``, ``patience``, ``instrument``, ``dtype``, ``seed``).
    """
    return {
        kind: [
            CrammingUnit(
                kind,
                int(m),
                length_convention=params["length_convention"],
                max_steps=params["max_steps"],
                patience=params["patience"],
                corpus=params["corpus"],
                n_targets=params["n_targets"],
                seed=params["seed"],
                instrument=params["instrument"],
                dtype=params["dtype"],
            )
            for m in sorted(params["ms"])
        ]
        for kind in params["kinds"]
    }


def effective_eps_record(handle: ModelHandle, name: str, store, seed: int = 0) -> dict:
    """The ε a model shows at natural prompts, for the effective-ε rows of Table 1 (cached in the store).

    Twice the median L∞ distance from h to the nearest other next token over 32 natural prompts of 4
    tokens (:func:`accessibility_lib.experiments.effective_eps.model_effective_eps`, h space).

    Returns:
        ``{"eps", "ci", "what"}``, or ``{"note"}`` saying why it could not be measured (e.g. a stand-in
        without a real tokenizer has no natural prompts).
    """
    from accessibility_lib.experiments.effective_eps import model_effective_eps
    from accessibility_lib.models.fingerprint import weights_fingerprint

    key = {"model": f"{name}@{weights_fingerprint(handle)}", "what": "effective eps", "space": "h",
           "n_prompts": 32, "m": 4, "seed": seed}  # fmt: skip
    got = store.get("effective_eps", key) if store is not None else None
    if got is not None:
        return got
    try:
        eff = model_effective_eps(handle, space="h", n_prompts=32, m=4, seed=seed)
    except ValueError as exc:
        return {"note": f"effective ε not measured: {exc}"}
    got = {
        "eps": float(eff.eps),
        "ci": [float(c) for c in eff.ci],
        "what": f"2 × median L∞ distance from h to the nearest other next token, {eff.n_prompts} "
        f"natural prompts of 4 tokens ({eff.dtype})",
    }
    if store is not None:
        store.put("effective_eps", key, got)
    return got


def run_support(handle: ModelHandle, name: str, params: dict, store):
    """Chapter 5's analysis of one model (:func:`accessibility_lib.geometry.support.analyse_model`), with
    the effective-ε rows (:func:`effective_eps_record`).

    Args:
        params: the chapter's checked parameters (``n_prompts``, ``lengths``, ``cell_samples``,
            ``cell_flops``, ``source``, ``token_budget``).

    Returns:
        The :class:`~accessibility_lib.geometry.support.ModelSupport`.
    """
    from accessibility_lib.geometry import support

    return support.analyse_model(
        handle,
        name,
        n_prompts=params["n_prompts"],
        lengths=params["lengths"],
        cell_samples=params["cell_samples"],
        cell_flops=params["cell_flops"],
        source=params["source"],
        token_budget=params["token_budget"],
        store=store,
        eps_eff=effective_eps_record(handle, name, store),
    )


def _copying_model_label(base: str, width: int | None) -> str:
    from accessibility_lib.experiments.copying_bases import SCRATCH_BASES

    if base == "scratch":
        return f"scratch, d_model = {width}"
    return f"{base} (from scratch)" if base in SCRATCH_BASES else f"{base.split('/')[-1]} (fine-tuned)"


def copying_config(params: dict, base: str, width: int | None, max_len: int):
    """The :class:`~accessibility_lib.experiments.copying_model.TrainConfig` of one chapter-6 run.

    Bases trained from random weights (``"scratch"``, ``"nano-shape"``, ``"nano-mamba-shape"``) take ``lr``;
    pretrained bases take ``finetune_lr``. ``width`` is the scratch model's d_model (None for other bases).
    """
    from accessibility_lib.experiments.copying_bases import SCRATCH_BASES
    from accessibility_lib.experiments.copying_model import TrainConfig

    common = {
        k: params[k]
        for k in ("alphabet_size", "context", "train_min_len", "batch_size", "warmup_steps", "max_steps",
                  "check_every", "seed")
    }  # fmt: skip
    lr = params["lr"] if base in SCRATCH_BASES else params["finetune_lr"]
    if base == "scratch":
        return TrainConfig(
            base=base,
            d_model=width,
            n_layers=params["n_layers"],
            n_heads=width // params["head_dim"],
            train_max_len=max_len,
            lr=lr,
            **common,
        )
    return TrainConfig(base=base, train_max_len=max_len, lr=lr, **common)


def copying_runs(params: dict) -> list[tuple[str, object]]:
    """Chapter 6's runs for its parameters: ``(label, TrainConfig)``, in the order the chapter shows them.

    Every model (one per pretrained or shape base, one per width for ``"scratch"``) at ``train_max_len``;
    then every model of a base in ``sweep_bases`` at each further length of ``sweep_lens`` (ascending).
    Labels read ``"<model>, n ≤ <longest training length>"``.

    Raises:
        ValueError: a base of ``sweep_bases`` that is not in ``bases``, or ``"scratch"`` without widths.
    """
    bases, sweep = list(params["bases"]), list(params.get("sweep_bases") or [])
    stray = [b for b in sweep if b not in bases]
    if stray:
        raise ValueError(f"sweep_bases {stray} are not in bases {bases}: sweep only models the chapter trains")
    if "scratch" in bases and not params["widths"]:
        raise ValueError("bases has 'scratch' but widths is empty: give the d_model of the scratch models")
    models = []
    for b in bases:
        models += [(b, w) for w in sorted(params["widths"])] if b == "scratch" else [(b, None)]
    first = params["train_max_len"]
    settings = [(b, w, first) for b, w in models]
    for b, w in models:
        if b in sweep:
            settings += [(b, w, n) for n in sorted(params["sweep_lens"]) if n != first]
    return [(f"{_copying_model_label(b, w)}, n ≤ {n}", copying_config(params, b, w, n)) for b, w, n in settings]


def run_copying(cfg, params: dict, store, device: str = "cpu", **train_options):
    """Train one copying model (or find it in the store) and evaluate it on ``params["eval_lengths"]``.

    Args:
        cfg: the run's :class:`~accessibility_lib.experiments.copying_model.TrainConfig`.
        params: the chapter's parameters (``eval_lengths``, ``n_strings``, ``seed``).
        store: the result store the run is cached in.
        train_options: passed to :func:`~accessibility_lib.experiments.copying_model.train_copying`
            (``checkpoint_every``, ``on_checkpoint``, ``force``, ``show_progress``, ``threads``).

    Returns:
        ``(model, info, evaluation)`` from :func:`~accessibility_lib.experiments.copying_model.train_copying`
        and :func:`~accessibility_lib.experiments.copying_model.evaluate_run` (lengths beyond the context are
        refused there).
    """
    from accessibility_lib.experiments import copying_model

    model, info = copying_model.train_copying(cfg, store=store, device=device, **train_options)
    res = copying_model.evaluate_run(
        cfg, model, params["eval_lengths"], n_strings=params["n_strings"], seed=params["seed"], store=store
    )
    return model, info, res
