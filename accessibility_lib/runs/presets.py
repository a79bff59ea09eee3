"""Named parameter sets of the chapters and the declared type of every chapter parameter.

Presets: ``smoke`` (tests, seconds), ``default`` (two CPU cores, minutes), ``paper`` (the
paper's models and sizes, on a GPU box) and ``paper_tiny`` (the ``paper`` preset's structure — the same
models, m values, target kinds, lengths and code paths — with every model replaced by its tiny
random-weight stand-in, :mod:`accessibility_lib.models.standins`, and small sizes: every paper-scale code path on
two CPU cores in minutes, before a GPU box sees it). A chapter's ``parameters`` cell holds ``preset = "default"`` plus
``None`` for every overridable value; the cell right after it calls
``params = presets.from_namespace("cramming", globals())``: values left at ``None`` come from the
preset, anything else overrides it, and every value is checked and coerced against
:data:`PARAMETERS` (types, ranges, allowed names; :mod:`accessibility_lib.runs.parameters`) before any work
starts. Papermill sets both: ``papermill book/03_cramming.ipynb out.ipynb -p preset paper -p device cuda``.

Each chapter registers its presets in :data:`PRESETS` and its parameter types in :data:`PARAMETERS`.
"""

from __future__ import annotations

import types
from typing import Any

from accessibility_lib.runs.parameter_specs import PARAMETERS
from accessibility_lib.runs.parameters import Param, ParameterError, check

__all__ = ["PRESETS", "PRESET_NAMES", "resolve", "from_namespace", "table", "ParameterError"]

PRESET_NAMES = ("smoke", "default", "paper", "paper_tiny")

from accessibility_lib.runs.preset_values import PRESETS  # noqa: E402


def resolve(chapter: str, preset: str, *, check_machine: bool = True, **overrides: Any) -> dict[str, Any]:
    """The parameters of ``chapter`` under ``preset``, with every non-None override applied and checked.

    Args:
        chapter: a key of :data:`PRESETS`.
        preset: a preset name of that chapter.
        check_machine: also check what needs this machine (that a device exists).
        **overrides: parameter values; None means "take the preset's".

    Raises:
        ParameterError (a ValueError): an unknown chapter, preset or parameter, or a value of the wrong
            type or range; the message names the parameter, what was given and what is allowed.
    """
    if chapter not in PRESETS:
        raise ParameterError(f"chapter must be one of {sorted(PRESETS)}, got {chapter!r}")
    preset = Param("str", choices=tuple(PRESETS[chapter])).coerce("preset", preset)
    params = dict(PRESETS[chapter][preset])
    unknown = sorted(set(overrides) - set(params))
    if unknown:
        raise ParameterError(f"{unknown} not parameter(s) of chapter {chapter!r}; known: {sorted(params)}")
    params.update({k: v for k, v in overrides.items() if v is not None})
    try:
        params = check(PARAMETERS[chapter], params, available=check_machine)
    except ParameterError as exc:
        hint = _preset_hint(chapter, preset, exc)
        if hint:  # the preset's own way forward replaces the generic advice ("pass -p device cpu")
            raise ParameterError(f"{str(getattr(exc, 'fact', exc)).rstrip('.')}. {hint}") from None
        raise
    params["preset"] = preset
    return params


def _preset_hint(chapter: str, preset: str, exc: ParameterError) -> str | None:
    """A way forward when a machine check refuses the ``paper`` preset: its stand-in preset ``paper_tiny``.

    ``-p preset paper`` on a machine without a GPU or without the paper's hub models: passing
    ``-p device cpu`` only leads to the next refusal (the hub models), so point to ``paper_tiny``, which
    runs the paper's code paths on tiny local stand-ins of the same architectures, on a CPU.
    """
    from accessibility_lib.runs.parameters import NoDeviceError

    if preset != "paper" or "paper_tiny" not in PRESETS[chapter]:
        return None
    text = str(exc)
    if not (isinstance(exc, NoDeviceError) or "cannot be loaded here" in text):
        return None
    return (
        "The 'paper' preset needs the paper's models (from the Hugging Face hub) and a GPU. On this machine run its "
        "stand-in preset instead, the same models' architectures as tiny random-weight models on the CPU: "
        "-p preset paper_tiny (and no -p device); or give local copies of the models (-p model_name /path/to/folder)."
    )


def from_namespace(chapter: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """:func:`resolve` with ``preset`` and every declared parameter read from a notebook's namespace.

    The cell right after a chapter's ``parameters`` cell calls ``presets.from_namespace(chapter,
    globals())``, so a parameter added to :data:`PARAMETERS` cannot be forgotten in the call. Any other
    variable in the namespace at that point (not a module, a function or a ``_`` name) can only come from
    papermill's injected parameters: a misspelt parameter name.

    Raises:
        ParameterError: no ``preset``, an unknown parameter name, or a wrong value (from :func:`resolve`).
    """
    if "preset" not in namespace:
        raise ParameterError("the namespace has no 'preset' (the parameters cell sets it)")
    declared = PARAMETERS.get(chapter, {})
    unknown = sorted(
        k
        for k, v in namespace.items()
        if not k.startswith("_")
        and k not in _NOTEBOOK_NAMES
        and k != "preset"
        and k not in declared
        and not isinstance(v, types.ModuleType)
        and not callable(v)
    )
    if unknown:  # papermill only warns "Passed unknown parameter"; a misspelt name would run the defaults
        raise ParameterError(
            f"unknown parameter(s) {unknown} for chapter {chapter!r}; its parameters are {['preset', *declared]}"
        )
    values = {k: namespace.get(k) for k in declared}
    return resolve(chapter, namespace["preset"], **values)


#: Names IPython puts in a notebook's namespace (besides ``_``-prefixed ones).
_NOTEBOOK_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def table() -> list[dict[str, Any]]:
    """One row per (chapter, preset) with its parameters, for the README and the book's table."""
    rows = []
    for chapter, presets in PRESETS.items():
        for name, params in presets.items():
            rows.append({"chapter": chapter, "preset": name, **params})
    return rows


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings (a command's ``-p`` options) as a dict; a value is JSON when it parses as JSON
    (``[1, 2]``, ``3``, ``true``), else the plain string. The values are checked later by :func:`resolve`.

    Raises:
        ValueError: an item without ``=``.
    """
    import json

    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"-p expects NAME=VALUE (or CHAPTER.NAME=VALUE), got {pair!r}")
        name, value = pair.split("=", 1)
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out
