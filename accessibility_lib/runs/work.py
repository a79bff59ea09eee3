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

from accessibility_lib.runs.cramming_units import CrammingUnit

from typing import TYPE_CHECKING

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


def copying_config(params: dict, base: str, width: int | None, max_len: int):
    """The :class:`~accessibility_lib.experiments.copying_model.TrainConfig` of one chapter-6 run."""
    from accessibility_lib.experiments.copying_model import TrainConfig

    common = {
        k: params[k]
        for k in (
            "alphabet_size",
            "context",
            "train_min_len",
            "batch_size",
            "lr",
            "warmup_steps",
            "max_steps",
            "check_every",
            "seed",
        )
    }
    if base == "scratch":
        return TrainConfig(
            base=base,
            d_model=width,
            n_layers=params["n_layers"],
            n_heads=width // params["head_dim"],
            train_max_len=max_len,
            **common,
        )
    return TrainConfig(base=base, train_max_len=max_len, **common)


def copying_runs(params: dict) -> list[tuple[str, object]]:
    """Chapter 6's runs for its parameters: ``(label, TrainConfig)``, in the order the chapter shows them.

    One scratch model per width (when ``"scratch"`` is a base) and one run per pretrained base, all at the
    first training length; then the first model again at each further training length.
    """
    models = [(f"scratch, d_model = {w}", "scratch", w) for w in params["widths"] if "scratch" in params["bases"]]
    models += [(b.split("/")[-1], b, None) for b in params["bases"] if b != "scratch"]
    if not models:
        return []
    first = params["train_max_lens"][0]
    settings = [(label, base, w, first) for label, base, w in models]
    settings += [(models[0][0], models[0][1], models[0][2], n) for n in params["train_max_lens"][1:]]
    return [(f"{label}, n ≤ {n}", copying_config(params, base, w, n)) for label, base, w, n in settings]


def run_copying(cfg, params: dict, store, device: str = "cpu"):
    """Train one copying model (or find it in the store) and evaluate it on ``params["eval_lengths"]``.

    Returns:
        ``(model, info, evaluation)`` from :func:`~accessibility_lib.experiments.copying_model.train_copying`
        and :func:`~accessibility_lib.experiments.copying_model.evaluate_run`.
    """
    from accessibility_lib.experiments import copying_model

    model, info = copying_model.train_copying(cfg, store=store, device=device)
    res = copying_model.evaluate_run(
        cfg, model, params["eval_lengths"], n_strings=params["n_strings"], seed=params["seed"], store=store
    )
    return model, info, res
