"""The ε a model shows: chapter 7's perturbation measurement, kept in the result store, and its tables and sentences.

For each model and dtype, natural prompts X are moved along random directions until the greedy output changes
(:func:`~accessibility_lib.experiments.perturbation.prompt_sensitivity`, in the prompt's input vectors), and the
same is asked exactly of the last-layer embedding h (:func:`~accessibility_lib.experiments.effective_eps.
h_sensitivity`). :func:`measure` runs both once per parameter set and keeps them in the result store (namespace
``effective_eps``), so chapter 7 and its lab notes read the same measurement; :func:`summarize_all` turns them into
effective ε (2·median t*, :func:`~accessibility_lib.experiments.effective_eps.summarize`); :func:`eps_table`,
:func:`reading_items`, :func:`bounds_table` and :func:`chapter_numbers` put them in words.
"""

from __future__ import annotations

import numpy as np

from accessibility_lib.experiments.perturbation import Sensitivity
from accessibility_lib.runs.precision_counts import floor_sig
from accessibility_lib.runs.precision_models import SHORT

__all__ = ["measure", "summarize_all", "eps_table", "reading_items", "add_eff_slopes", "bounds_table", "least_over_u",
           "least_perturbation", "chapter_numbers", "STORE_NAMESPACE"]  # fmt: skip

STORE_NAMESPACE = "effective_eps"
_VERSION = 1  # raise when the measurement changes, so that stored entries are not reused


def _key(name: str, dt: str, params: dict) -> dict:
    keys = ("n_prompts", "m", "n_tokens", "n_directions", "grid_per_octave", "grid_low_log2", "bisect_steps", "seed")
    return {"model": name, "dtype": dt, "device": params["device"], "version": _VERSION, **{k: params[k] for k in keys}}


def _pack(s: Sensitivity, prefix: str) -> tuple[dict, dict]:
    value = {
        f"{prefix}_{k}": getattr(s, k) for k in ("space", "what", "n_tokens", "dtype", "seed", "model", "settings")
    }
    arrays = {f"{prefix}_t": s.t, f"{prefix}_scale": s.scale}
    if s.worst is not None:
        arrays[f"{prefix}_worst"] = s.worst
    return value, arrays


def _unpack(v: dict, prefix: str) -> Sensitivity:
    return Sensitivity(
        space=v[f"{prefix}_space"], what=v[f"{prefix}_what"], n_tokens=int(v[f"{prefix}_n_tokens"]),
        t=np.asarray(v[f"{prefix}_t"]), scale=np.asarray(v[f"{prefix}_scale"]),
        worst=np.asarray(v[f"{prefix}_worst"]) if f"{prefix}_worst" in v else None, dtype=v[f"{prefix}_dtype"],
        seed=int(v[f"{prefix}_seed"]), model=v[f"{prefix}_model"], settings=dict(v[f"{prefix}_settings"]),
    )  # fmt: skip


def measure(handles: dict, params: dict, store=None) -> tuple[dict, float]:
    """The sensitivities of every loaded (model, dtype), measured once and kept in the result store.

    Args:
        handles: ``{(name, dtype): ModelHandle}`` (:func:`~accessibility_lib.runs.precision_models.load_handles`).
        params: chapter 7's parameters (``n_prompts``, ``m``, ``n_tokens``, ``n_directions``, ``grid_per_octave``,
            ``grid_low_log2``, ``bisect_steps``, ``seed``, ``device``).
        store: a :class:`~accessibility_lib.ground.results.ResultStore` (default the default store).

    Returns:
        ``(sens, seconds)``: ``sens[(name, dtype)] = {"prompt": (next, n_token), "h": (next, n_token)}`` of
        :class:`~accessibility_lib.experiments.perturbation.Sensitivity`, and the wall time of the measurements
        made now (0 when every one came from the store).
    """
    import time

    from accessibility_lib.experiments import effective_eps, perturbation
    from accessibility_lib.ground.results import default_store

    store = store if store is not None else default_store()
    sens, seconds = {}, 0.0
    for (name, dt), h in handles.items():
        key = _key(name, dt, params)
        got = store.get(STORE_NAMESPACE, key)
        if got is None:
            t0 = time.perf_counter()
            _, x = perturbation.natural_prompts(h, params["n_prompts"], params["m"], seed=params["seed"])
            p = perturbation.prompt_sensitivity(
                h, x, n_tokens=params["n_tokens"], n_directions=params["n_directions"], seed=params["seed"],
                grid_per_octave=params["grid_per_octave"], low=2.0 ** params["grid_low_log2"],
                bisect_steps=params["bisect_steps"],
            )  # fmt: skip
            hh = effective_eps.h_sensitivity(h, x, n_tokens=params["n_tokens"], n_directions=params["n_directions"],
                                             seed=params["seed"])  # fmt: skip
            value, arrays = {}, {}
            for prefix, s in zip(("p0", "p1", "h0", "h1"), (*p, *hh)):
                v, a = _pack(s, prefix)
                value.update(v)
                arrays.update(a)
            store.put(STORE_NAMESPACE, key, value, arrays)
            seconds += time.perf_counter() - t0
            got = store.get(STORE_NAMESPACE, key)
        sens[(name, dt)] = {"prompt": (_unpack(got, "p0"), _unpack(got, "p1")),
                            "h": (_unpack(got, "h0"), _unpack(got, "h1"))}  # fmt: skip
    return sens, seconds


def summarize_all(sens: dict, params: dict) -> dict:
    """Every effective ε: ``eff[(name, dtype, space, which, over)]`` an :class:`~accessibility_lib.experiments.
    effective_eps.EffectiveEps` (``which`` 0 the next token, 1 the n-token output; ``over`` "directions", or
    "worst" for the exact distance in h)."""
    from accessibility_lib.experiments import effective_eps

    eff = {}
    for (name, dt), s in sens.items():
        for space in ("prompt", "h"):
            for which in (0, 1):
                for over in ("directions", "worst") if space == "h" else ("directions",):
                    eff[(name, dt, space, which, over)] = effective_eps.summarize(
                        s[space][which], over=over, seed=params["seed"], n_boot=400
                    )
    return eff


def eps_table(sens: dict, eff: dict) -> str:
    """One row an effective ε: model, dtype, space, output, over what, 2·median t* with its interval, tails."""
    if not sens:
        return "No model available."
    lines = ["| model | dtype | space | output | smallest over | ε_eff = 2·median t* | 95 % CI | 2·5 % quantile | "
             "2·min seen | ε_eff / median scale |", "|---" * 10 + "|"]  # fmt: skip
    for (name, dt, space, which, over), e in eff.items():
        what = sens[(name, dt)][space][which].what
        how = "random directions" if over == "directions" else "every direction (exact)"
        lines.append(f"| {name} | {SHORT[dt]} | {space} | {what} | {how} | {e.eps:.3g} | [{e.ci[0]:.3g}, {e.ci[1]:.3g}] "
                     f"| {e.q05:.3g} | {e.min_seen:.3g} | {e.relative:.2g} |")  # fmt: skip
    return "\n".join(lines)


def _least_over_u(sens: dict) -> tuple[tuple[str, str], float] | None:
    """The (model, dtype) whose median relative next-token perturbation is the fewest unit roundoffs, and that
    number."""
    from accessibility_lib.theory import precision

    over = {k: float(np.nanmedian(s["prompt"][0].relative)) / precision.unit_roundoff(k[1]) for k, s in sens.items()}
    return min(over.items(), key=lambda kv: kv[1]) if over else None


def reading_items(sens: dict, eff: dict, params: dict, names: list[str]) -> str:
    """What the measurement shows, one item a model, then the search's limits, the median against the unit
    roundoff, and the lower tail below it."""
    from accessibility_lib.theory import precision

    text = []
    for name in names:
        dts = [dt for dt in params["dtypes"] if (name, dt) in sens]
        rel = {dt: np.nanmedian(sens[(name, dt)]["prompt"][0].relative) for dt in dts}
        line = (f"* **{name}**: the next token changes after a median relative perturbation t*/‖X‖∞ of "
                + ", ".join(f"{rel[dt]:.2g} ({SHORT[dt]})" for dt in dts)
                + " along random directions. The unit roundoff" + ("s are " if len(dts) > 1 else " is ")
                + " and ".join(f"{precision.unit_roundoff(dt):.1g} ({SHORT[dt]})" for dt in dts) + ".")  # fmt: skip
        if len(dts) > 1:
            ratio = (
                eff[(name, dts[1], "prompt", 0, "directions")].eps / eff[(name, dts[0], "prompt", 0, "directions")].eps
            )
            line += f" The median effective ε in {SHORT[dts[1]]} is {ratio:.2f}× the one in {SHORT[dts[0]]}."
        hw, hd = eff[(name, dts[0], "h", 0, "worst")], eff[(name, dts[0], "h", 0, "directions")]
        line += (f" In h, the exact L∞ distance to the nearest other next token has median {hw.eps / 2:.3g} (‖h‖∞ "
                 f"median {np.median(sens[(name, dts[0])]['h'][0].scale):.3g}). Along random directions it is "
                 f"{hd.eps / hw.eps:.0f}× larger: a random direction runs mostly parallel to the cell's faces.")  # fmt: skip
        text.append(line)
    if sens:
        lo2 = params["grid_low_log2"]
        prompts = [S["prompt"][w] for S in sens.values() for w in (0, 1)]
        floor = sum(int((s.t <= 2.0**lo2 * (1 + 1e-9) * s.scale[:, None]).sum()) for s in prompts)
        total = sum(s.t.size for s in prompts)
        never = sum(int((~np.isfinite(s.t)).sum()) for s in prompts)
        top = prompts[0].settings["high"]
        text.append(f"* The search grid ran from 2^{lo2}·‖X‖∞ to {top:g}·‖X‖∞. {floor} of {total} prompt-space "
                    "searches changed at the grid's first point"
                    + (" (none was cut off by the search floor)" if floor == 0 else " (for those, t* is an upper bound)")
                    + f"; {never} never changed the output up to the grid's top.")  # fmt: skip
    least = _least_over_u(sens)
    if least:
        (n, d), f = least
        text.append(f"* At typical prompts the median perturbation that changes the next token is at least {floor_sig(f)}× "
                    f"the dtype's unit roundoff, over every model and dtype measured; the least is {n} in {SHORT[d]}."
                    + (" At the median, the dtype's spacing is not what limits the model." if f > 10 else
                       " At this factor the dtype's spacing may be what limits the model."))  # fmt: skip
    below = []
    for (name, dt), S in sens.items():
        u = precision.unit_roundoff(dt)
        for w, what in ((0, "next token"), (1, f"{params['n_tokens']}-token output")):
            rel = np.asarray(S["prompt"][w].relative, dtype=float).ravel()
            k = int(np.sum(rel < u))
            if k:
                below.append(f"{name} in {SHORT[dt]}, {what}: {k} of {rel.size} (the smallest at "
                             f"{np.nanmin(rel):.2g}·‖X‖∞)")  # fmt: skip
    text.append("* **The lower tail.** " + (
        "Searches that changed the output below the dtype's unit roundoff: " + "; ".join(below)
        + ". There the dtype's spacing is coarser than the change that flips the output. This worst case, not the "
        "median, is what the theorem's ε would have to cover." if below else
        "No search changed the output below its dtype's unit roundoff."))  # fmt: skip
    return "\n".join(text)


def add_eff_slopes(support: dict, eff: dict, params: dict) -> None:
    """The ball and ellipsoid slopes at ε_eff of h (next token, exact, first dtype), added to each model's entry of
    ``support``: ``eps_eff`` and ``C_ball_eff``, ``C_ell_eff`` (median over prompts), ``C_ball_eff_q05`` (5 %
    quantile). Slopes in tokens per prompt vector."""
    dt0 = params["dtypes"][0]
    for name, s in support.items():
        e = eff[(name, dt0, "h", 0, "worst")]
        s["eps_eff"], s["eps_eff_q05"] = e.eps, e.q05
        s["C_ball_eff"], s["C_ell_eff"] = s["geo"].ball.slope(e.eps, s["V"]), s["geo"].ellipsoid.slope(e.eps, s["V"])
        s["C_ball_eff_q05"] = s["geo"].ball.slope(e.q05, s["V"])
        s["C_ell_eff_q05"] = s["geo"].ellipsoid.slope(e.q05, s["V"])


def bounds_table(support: dict, eff: dict, params: dict) -> str:
    """The ball and ellipsoid slopes with ε_eff of h (next token, exact, at the median and the 5 % quantile over
    prompts) beside the ``l2_fp16`` ball and the fp32 count (:func:`add_eff_slopes` first)."""
    if not support:
        return "No model available."
    add_eff_slopes(support, eff, params)
    dt0 = params["dtypes"][0]
    lines = [f"| model | statistic over prompts | ε_eff (h, {dt0}) | r | 2r/ε_eff | C ball, ε_eff | C ellipsoid, ε_eff | "
             "C ball (`l2_fp16`: r = max ‖h‖₂, ε = r∞·2^−11) | C fp32, any input |", "|---" * 9 + "|"]  # fmt: skip
    q05 = (
        "5 % quantile" if params["n_prompts"] >= 20 else f"5 % quantile (= the least of {params['n_prompts']} prompts)"
    )
    for name, s in support.items():
        for at, eps, C_b, C_e in (("median", s["eps_eff"], s["C_ball_eff"], s["C_ell_eff"]),
                                  (q05, s["eps_eff_q05"], s["C_ball_eff_q05"], s["C_ell_eff_q05"])):  # fmt: skip
            lines.append(f"| {name} | {at} | {eps:.3g} | {s['r']:.2f} | {2 * s['r'] / eps:.3g} | {C_b:.1f} | {C_e:.1f} | "
                         f"{s['C_ball_rep']:.1f} | {s['C_any']['fp32']:.1f} |")  # fmt: skip
    return "\n".join(lines)


def least_over_u(sens: dict) -> float | None:
    """The fewest unit roundoffs that a median next-token perturbation spans, over every model and dtype measured
    (None when nothing was measured)."""
    least = _least_over_u(sens)
    return None if least is None else least[1]


def least_perturbation(sens: dict) -> dict | None:
    """The median next-token perturbation closest to its dtype's spacing, in both of its units (None: nothing
    measured).

    Returns:
        ``{"model", "dtype" (short name), "rel" (median t*/‖X‖∞), "over_u" (that median in unit roundoffs of the
        dtype)}``.
    """
    least = _least_over_u(sens)
    if least is None:
        return None
    (n, d), f = least
    return {"model": n, "dtype": SHORT[d], "rel": float(np.nanmedian(sens[(n, d)]["prompt"][0].relative)), "over_u": f}


def chapter_numbers(sens: dict) -> dict[str, str]:
    """The numbers chapter 7's prose states about the measurement, as text to glue (``prec_`` names)."""
    least = _least_over_u(sens)
    if least is None:
        return {"prec_over_u": "—", "prec_over_u_who": "no model", "prec_median_rel": "—", "prec_median_rel_range": "—"}
    (n, d), f = least
    rels = [float(np.nanmedian(s["prompt"][0].relative)) for s in sens.values()]
    return {
        "prec_over_u": floor_sig(f),
        "prec_over_u_who": f"{n} in {SHORT[d]}",
        "prec_median_rel": f"{min(rels):.2g}",
        "prec_median_rel_range": f"{min(rels):.2g} to {max(rels):.2g}"
        if f"{min(rels):.2g}" != f"{max(rels):.2g}"
        else f"{min(rels):.2g}",
    }
