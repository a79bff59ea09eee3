"""A prompt that forces a target forces every prefix of it: the prefix closure of cramming outcomes.

Natural-text targets of one passage at different lengths are prefixes of one another
(:mod:`accessibility_lib.experiments.targets`: the first n tokens of passage ``target``, as the authors'
PG19 chunks are). Decoding is causal: the greedy token at position j depends only on the prompt and the
tokens before j, so a soft prompt verified to force the first n tokens of a passage also forces its first
n′ tokens for every n′ < n (in either length convention: the given first token, if any, is the same).
Whether a prompt of m vectors forces a target is an existence question (accessibility, Def 4.1 of
Meyer et al. 2026, arXiv 2605.22223), so a verified success at (n, passage) *is* a verified success at
(n′, passage): where the optimiser failed at n′ after succeeding at n, the failure is the instrument's,
not the model's.

The closure turns those failures into successes at no extra cost (no cramming is re-run; the prompts
were verified at the longer length). It only applies where targets are prefixes of one another —
random-words and random-token targets are independent draws at every length — and it only raises
success rates, so an n50 fitted on closed outcomes is at least the per-length one: another lower bound
on the model's capacity, from the same runs. The paper counts each length on its own; a number from the
closure is labelled as such wherever it is printed.

Example:
    >>> rows = [{"n": 10, "target": 0, "success": False}, {"n": 20, "target": 0, "success": True},
    ...         {"n": 30, "target": 0, "success": False}]
    >>> closed, flipped = close_under_prefixes(rows)
    >>> [r["success"] for r in closed], flipped
    ([True, True, False], 1)
    >>> closed[0]["implied_by"]
    20
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["close_under_prefixes"]


def close_under_prefixes(rows: Iterable[dict]) -> tuple[list[dict], int]:
    """Every failure at (n, target) whose target succeeded at a longer length, counted as a success.

    Args:
        rows: per-target cramming outcomes, each a dict with at least ``"n"`` (target length, tokens, the
            unit's convention), ``"target"`` (the passage index) and ``"success"`` (bool). Only natural-text
            outcomes may be closed: the caller checks the target kind.

    Returns:
        ``(closed, flipped)``: the rows in their order, copied, each flipped failure with ``success`` True
        and ``"implied_by"`` set to the longest length at which its passage was crammed; and the number
        of flipped rows. The input rows are not modified.

    Raises:
        ValueError: a row without ``n``, ``target`` or ``success``, or with a length < 1 or a negative
            target index.
    """
    rows = list(rows)
    longest: dict[int, int] = {}  # passage -> longest verified success (tokens)
    for i, r in enumerate(rows):
        missing = [k for k in ("n", "target", "success") if k not in r]
        if missing:
            raise ValueError(f"outcome {i} has no {', '.join(missing)}: each needs 'n', 'target' and 'success'")
        n, t = int(r["n"]), int(r["target"])
        if n < 1 or t < 0:
            raise ValueError(f"outcome {i}: length n must be >= 1 and target >= 0, got n={n}, target={t}")
        if r["success"]:
            longest[t] = max(longest.get(t, 0), n)
    closed, flipped = [], 0
    for r in rows:
        t = int(r["target"])
        if not r["success"] and longest.get(t, 0) > int(r["n"]):
            closed.append({**r, "success": True, "implied_by": longest[t]})
            flipped += 1
        else:
            closed.append(dict(r))
    return closed, flipped
