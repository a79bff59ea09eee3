"""Chapter parameters typed at the door: declared types and ranges, coercion of papermill's text.

Papermill guesses types: ``-p m_values "[1, 2]"`` arrives as the *string* "[1, 2]", ``-p seed false``
as the truthy string "false", ``-y 'lr: 1e-3'`` as a string (YAML 1.1 reads 1e-3 as text), and
``-p run 007`` as the int 7. Every chapter parameter therefore has a declared :class:`Param`, and the
cell right after the ``parameters`` cell checks and coerces them with :func:`check`: lists from
JSON/YAML text (or one scalar), numbers from numeric text, booleans from true/false, names against
the allowed set. An error names the parameter, what was given and what is allowed — before any work.

Example:
    >>> Param("list[int]", minimum=1).coerce("m_values", "[1, 2]")
    [1, 2]
    >>> Param("bool").coerce("flag", "false")
    False
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Param", "ParameterError", "NoDeviceError", "check", "device_available"]

_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


class ParameterError(ValueError):
    """A chapter parameter of the wrong type or outside its range; the message says what is allowed."""


class NoDeviceError(ParameterError):
    """A device parameter names a device this machine does not have (e.g. ``cuda`` on a CPU-only machine).

    Attributes:
        fact: the message without its advice (a caller that knows better advice, such as
            :func:`accessibility_lib.runs.presets.resolve` for the ``paper`` preset, gives its own).
    """

    def __init__(self, fact: str, advice: str = ""):
        super().__init__(fact + (f"; {advice}" if advice else ""))
        self.fact = fact


@dataclass(frozen=True)
class Param:
    """The declared type of one chapter parameter.

    Attributes:
        kind: ``"int"``, ``"float"``, ``"bool"``, ``"str"``, or ``"list[int]"``, ``"list[float]"``,
            ``"list[str]"``.
        minimum, maximum: inclusive range of numbers (of every element, for lists).
        choices: the allowed names (a tuple, or a callable returning one, evaluated when checked).
        nullable: whether None is allowed (a preset may leave the value unset).
        min_items: fewest elements of a list; max_items: most (None: no limit).
        doc: one line of what it means, with units.
        validate: optional check of the coerced value that needs the machine (e.g. that a device
            exists), called by :func:`check` with ``available=True``; raises ParameterError.
    """

    kind: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | Callable[[], Iterable[str]] | None = None
    nullable: bool = False
    min_items: int = 0
    max_items: int | None = None
    doc: str = ""
    validate: Callable[[str, object], None] | None = None

    def __post_init__(self):
        if self.kind not in ("int", "float", "bool", "str", "list[int]", "list[float]", "list[str]"):
            raise ValueError(f"unknown parameter kind {self.kind!r}")

    # -- description ------------------------------------------------------------------------------
    def allowed(self) -> str:
        """What the parameter accepts, in words."""
        base = self.kind.removeprefix("list[").removesuffix("]")
        what = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}[base]
        if self._choices():
            what = "one of " + ", ".join(repr(c) for c in self._choices())
        rng = ""
        if self.minimum is not None and self.maximum is not None:
            rng = f" in [{self.minimum:g}, {self.maximum:g}]"
        elif self.minimum is not None:
            rng = f" ≥ {self.minimum:g}"
        elif self.maximum is not None:
            rng = f" ≤ {self.maximum:g}"
        text = what + rng
        if self.kind.startswith("list["):
            text = f"a list of {text.replace('an integer', 'integers').replace('a number', 'numbers')}"
            if self.min_items and self.max_items == self.min_items:
                text += f" (exactly {self.min_items})"
            else:
                text += f" (at least {self.min_items})" if self.min_items else ""
                text += f" (at most {self.max_items})" if self.max_items is not None else ""
            text += " — e.g. -y 'name: [1, 2]' or -p name '[1, 2]'"
        return text + (", or None" if self.nullable else "")

    def _choices(self) -> tuple[str, ...] | None:
        if self.choices is None:
            return None
        return tuple(self.choices() if callable(self.choices) else self.choices)

    # -- coercion ---------------------------------------------------------------------------------
    def coerce(self, name: str, value: object):
        """``value`` as this parameter's type.

        Raises:
            ParameterError: the value cannot be read as this type or is out of range.
        """
        if value is None:
            if self.nullable:
                return None
            raise self._error(name, value)
        if self.kind.startswith("list["):
            elem = Param(self.kind[5:-1], self.minimum, self.maximum, self.choices)
            items = value
            if isinstance(value, str):
                items = _parse_text(value)
            if isinstance(items, (str, numbers.Number)) or items is None:
                items = [items]  # one scalar is a one-element list
            if not isinstance(items, (list, tuple)):
                raise self._error(name, value)
            out = []
            for i, v in enumerate(items):
                try:
                    out.append(elem.coerce(f"{name}[{i}]", v))
                except ParameterError:
                    raise ParameterError(
                        f"parameter {name!r} got {value!r}: element {i} ({v!r}) is not "
                        f"{elem.allowed()}; allowed: {self.allowed()}"
                    ) from None
            if len(out) < self.min_items or (self.max_items is not None and len(out) > self.max_items):
                raise self._error(name, value)
            return out
        out = self._scalar(name, value)
        if isinstance(out, (int, float)) and not isinstance(out, bool):
            if (self.minimum is not None and out < self.minimum) or (self.maximum is not None and out > self.maximum):
                raise self._error(name, value)
        choices = self._choices()
        if choices is not None and out not in choices:
            raise self._error(name, value)
        return out

    def _scalar(self, name: str, value: object):
        kind = self.kind
        if kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, numbers.Integral) and int(value) in (0, 1):
                return bool(value)
            if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                return value.strip().lower() in _TRUE
            raise self._error(name, value)
        if kind == "str":
            if isinstance(value, str):
                return value
            if isinstance(value, numbers.Number) and not isinstance(value, bool):
                raise ParameterError(
                    f"parameter {name!r} must be text, got the number {value!r}: papermill's -p turns text that looks "
                    f"like a number into a number (007 becomes 7); pass text with -r {name} <text>. Allowed: {self.allowed()}"
                )
            raise self._error(name, value)
        if isinstance(value, bool):
            raise self._error(name, value)
        if isinstance(value, str):
            try:
                value = (
                    float(value.strip()) if kind == "float" or not value.strip().lstrip("+-").isdigit() else int(value)
                )
            except ValueError:
                raise self._error(name, value) from None
        if not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            raise self._error(name, value)
        if kind == "int":
            if float(value) != int(value):
                raise self._error(name, value)
            return int(value)
        return float(value)

    def _error(self, name: str, value: object) -> ParameterError:
        return ParameterError(f"parameter {name!r} got {value!r} ({type(value).__name__}); allowed: {self.allowed()}")


def _parse_text(text: str):
    """A list (or scalar) from JSON or YAML text; the text itself when it parses as neither."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def check(schema: dict[str, Param], values: dict[str, object], *, available: bool = False) -> dict[str, object]:
    """Every value coerced to its declared type, in the schema's order.

    Args:
        schema: name -> declared :class:`Param`.
        values: name -> value as given (papermill's guesses included).
        available: also run each parameter's ``validate`` (checks that need this machine, such as
            whether a device exists).

    Raises:
        ParameterError: an unknown parameter, or one that cannot be coerced (the first found).
    """
    unknown = sorted(set(values) - set(schema))
    if unknown:
        raise ParameterError(f"unknown parameter(s) {unknown}; this chapter's parameters are {sorted(schema)}")
    out = {k: schema[k].coerce(k, values[k]) for k in schema if k in values}
    if available:
        for k, v in out.items():
            if schema[k].validate is not None and v is not None:
                schema[k].validate(k, v)
    return out


def device_available(name: str, value: object) -> None:
    """Raise :class:`ParameterError` unless ``value`` names a torch device present on this machine."""
    import torch

    try:
        dev = torch.device(str(value))
    except (RuntimeError, ValueError):
        raise ParameterError(
            f"parameter {name!r} got {value!r}: not a device name; allowed: 'cpu', 'cuda', 'cuda:N'"
        ) from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise NoDeviceError(
                f"parameter {name!r} is {value!r}, but this machine has no CUDA device "
                "(torch.cuda.is_available() is False)",
                f"pass -p {name} cpu",
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise NoDeviceError(
                f"parameter {name!r} is {value!r}, but this machine has {torch.cuda.device_count()} "
                f"CUDA device(s) (cuda:0 .. cuda:{torch.cuda.device_count() - 1})"
            )
    elif dev.type != "cpu":
        raise ParameterError(f"parameter {name!r} got {value!r}; allowed: 'cpu', 'cuda', 'cuda:N'")
