"""Argument checks shared by the library: one clear ``ValueError`` per bad argument.

Every public function of the library validates its inputs with these helpers so that bad input
raises an error that names the argument, says what was received and what is allowed, instead of
returning NaN, hanging, or silently computing a wrong number.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["check_int", "check_real", "check_positive_real", "check_array"]


def _describe(value: object) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def check_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as a Python int, or raise ``ValueError`` naming ``name``.

    Accepts Python and NumPy integers (not bools, not floats, even integral ones), within
    ``[minimum, maximum]`` when given.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer{_range_text(minimum, maximum)}, got {_describe(value)}")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be an integer{_range_text(minimum, maximum)}, got {value}")
    return value


def check_real(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    min_inclusive: bool = True,
    max_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite Python float, or raise ``ValueError`` naming ``name``."""
    lo = "[" if min_inclusive else "("
    hi = "]" if max_inclusive else ")"
    allowed = f"a finite real number in {lo}{'-inf' if minimum is None else minimum}, {'inf' if maximum is None else maximum}{hi}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {allowed}, got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be {allowed}, got {value}")
    if minimum is not None and (value < minimum or (not min_inclusive and value == minimum)):
        raise ValueError(f"{name} must be {allowed}, got {value}")
    if maximum is not None and (value > maximum or (not max_inclusive and value == maximum)):
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return value


def check_positive_real(name: str, value: object) -> float:
    """A finite real number > 0."""
    return check_real(name, value, minimum=0.0, min_inclusive=False)


def check_array(
    name: str, value: object, *, ndim: int | None = None, positive: bool = False, nonempty: bool = True
) -> np.ndarray:
    """Return ``value`` as a float64 NumPy array with only finite entries (and > 0 if ``positive``)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers, got {_describe(value)}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (found NaN or inf)")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must contain only numbers > 0 (smallest is {arr.min()})")
    return arr


def _range_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" in [{minimum}, {maximum}]"
    if minimum is not None:
        return f" >= {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""
