"""A small result store: keyed by every parameter, written atomically, resumable.

Long sweeps (embedding sampling, cramming, copying) write each finished unit of work as one entry.
An interrupted run loses nothing it had finished: on restart, ``store.get(key)`` returns the stored
entry and the work is skipped. Entries are never half-written: each is written to a temporary file in
the same folder and moved into place with ``os.replace`` (atomic on POSIX).

Layout: ``<root>/<namespace>/<sha256 of the canonical key>.json`` holds ``{"key": ..., "value": ...}``;
arrays go beside it as ``<hash>.npz`` (loaded with ``allow_pickle=False``: nothing is ever unpickled).
The JSON files are strict JSON (RFC 8259): a non-finite float of any type (Python, NumPy, torch) is
written as ``{"$float": "nan" | "inf" | "-inf"}`` and read back as that float (:func:`encode`, :func:`loads`).

The default root (:func:`default_root`) is ``$ACCESSIBILITY_RESULTS`` when set, else ``results/`` at the
root of the repository this library is checked out in (the same folder whether a chapter runs from
``book/``, as Jupyter Book and JupyterLab run it, or a script runs from the repository root), else, for an
installed copy of the library outside a checkout, ``results/`` in the current directory.

Example:
    >>> import tempfile
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> key = {"model": "nano", "m": 1, "n": 20, "target": 3}
    >>> store.get("cramming", key) is None
    True
    >>> path = store.put("cramming", key, {"success": True, "steps": 41})
    >>> store.get("cramming", key)["success"]
    True
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ResultStore", "default_store", "default_root", "canonical_key", "encode", "decode", "dumps", "loads"]


#: The one JSON encoding of a non-finite float, whatever its type (Python, NumPy or torch): a one-key object
#: ``{"$float": "nan" | "inf" | "-inf"}``. JSON has no NaN or infinity (RFC 8259 §6); bare ``NaN``/``Infinity``
#: tokens break strict readers (JavaScript's ``JSON.parse``, jq, Go), and a plain string would be read back
#: as a string. The tag is read back as the float it stands for.
FLOAT_TAG = "$float"
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _float(value: float) -> Any:
    if math.isfinite(value):
        return float(value)
    return {FLOAT_TAG: "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _is_torch(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "torch" and hasattr(value, "tolist")


def encode(value: Any) -> Any:
    """Convert a value to plain JSON types, with one strict encoding for non-finite floats.

    Python, NumPy and torch scalars and arrays become numbers and (nested) lists; NaN and ±inf, whatever
    their type, become ``{"$float": "nan" | "inf" | "-inf"}`` (:data:`FLOAT_TAG`); tuples become lists,
    paths strings, dtypes and devices their name. The result serialises with ``json.dumps(...,
    allow_nan=False)``. Encoding an already encoded value changes nothing.

    Raises:
        ValueError: a dict whose key is ``"$float"`` but which is not an encoded non-finite float (it
            would be read back as a float).
    """
    if isinstance(value, dict):
        if FLOAT_TAG in value:
            if len(value) == 1 and value[FLOAT_TAG] in _NONFINITE:
                return {FLOAT_TAG: value[FLOAT_TAG]}  # already encoded
            raise ValueError(f"the key {FLOAT_TAG!r} is reserved for non-finite floats; got the dict {value!r}")
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, int) or isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float) or isinstance(value, np.floating):  # np.float64 is a float subclass
        return _float(float(value))
    if isinstance(value, np.ndarray):
        return encode(value.tolist())
    if isinstance(value, Path):
        return str(value)
    if _is_torch(value) and hasattr(value, "detach"):  # torch tensor, any shape (tolist of 0-d is a scalar)
        return encode(value.detach().cpu().tolist())
    return str(value)  # dtypes, devices: their readable name


def decode(value: Any) -> Any:
    """Inverse of :func:`encode` for non-finite floats: every ``{"$float": ...}`` becomes the float."""
    if isinstance(value, dict):
        if len(value) == 1 and value.get(FLOAT_TAG) in _NONFINITE:
            return _NONFINITE[value[FLOAT_TAG]]
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """Strict JSON text of ``value`` (:func:`encode`, then ``json.dumps(..., allow_nan=False)``)."""
    return json.dumps(encode(value), allow_nan=False, **kwargs)


def _legacy_constant(name: str) -> float:
    # Files written before the strict encoding may hold bare NaN/Infinity (from NumPy values): read them.
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def loads(text: str | bytes) -> Any:
    """Parse JSON written by :func:`dumps` and decode the non-finite floats.

    Bare ``NaN``/``Infinity`` tokens (not JSON, written by an earlier version of this module for NumPy
    values) are still read, as floats. A string ``"nan"`` (how an earlier version wrote a Python NaN) stays
    a string: it cannot be told apart from a genuine string.
    """
    return decode(json.loads(text, parse_constant=_legacy_constant))


def canonical_key(key: dict) -> str:
    """The canonical JSON text of a key (sorted keys, plain types): equal parameters give equal text.

    Raises:
        ValueError: if ``key`` is not a dict.
    """
    if not isinstance(key, dict):
        raise ValueError(f"key must be a dict of parameters, got {type(key).__name__}")
    return dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class ResultStore:
    """Entries keyed by a dict of parameters, one JSON file each, grouped by namespace.

    Args:
        root: folder of the store (created on first write).
    """

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def _path(self, namespace: str, key: dict) -> Path:
        if not namespace or "/" in namespace or namespace.startswith("."):
            raise ValueError(f"namespace must be a non-empty name without '/', got {namespace!r}")
        digest = hashlib.sha256(canonical_key(key).encode()).hexdigest()[:32]
        return self.root / namespace / f"{digest}.json"

    def has(self, namespace: str, key: dict) -> bool:
        """Whether an entry for ``key`` exists."""
        return self._path(namespace, key).exists()

    def get(self, namespace: str, key: dict) -> dict | None:
        """The stored value for ``key``, or None. Arrays saved with it come back under their names."""
        path = self._path(namespace, key)
        if not path.exists():
            return None
        record = loads(path.read_text())
        value = record["value"]
        npz = path.with_suffix(".npz")
        if record.get("arrays"):
            with np.load(npz, allow_pickle=False) as data:
                for name in record["arrays"]:
                    value[name] = data[name]
        return value

    def put(self, namespace: str, key: dict, value: dict, arrays: dict[str, np.ndarray] | None = None) -> Path:
        """Store ``value`` (a JSON-able dict) and optional named arrays for ``key``, atomically.

        The arrays are written first and the JSON last, so an entry is visible only once complete.

        Returns:
            The path of the JSON file.

        Raises:
            ValueError: if ``value`` is not a dict or an array name collides with a value field.
        """
        if not isinstance(value, dict):
            raise ValueError(f"value must be a dict, got {type(value).__name__}")
        path = self._path(namespace, key)
        names: list[str] = []
        if arrays:
            clash = set(arrays) & set(value)
            if clash:
                raise ValueError(f"array names {sorted(clash)} collide with value fields")
            import io

            buf = io.BytesIO()
            np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
            _atomic_write_bytes(path.with_suffix(".npz"), buf.getvalue())
            names = sorted(arrays)
        record = {"key": key, "value": value, "arrays": names}
        _atomic_write_bytes(path, dumps(record, ensure_ascii=False, indent=1).encode())
        return path

    def entries(self, namespace: str, **match: Any) -> Iterator[tuple[dict, dict]]:
        """All (key, value) pairs of a namespace whose key contains every ``match`` item (arrays not loaded)."""
        folder = self.root / namespace
        if not folder.exists():
            return
        want = decode(encode(match))
        for path in sorted(folder.glob("*.json")):
            record = loads(path.read_text())
            if all(record["key"].get(k) == v for k, v in want.items()):
                yield record["key"], record["value"]

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"


def checkout_root() -> Path | None:
    """The repository this library is checked out in (editable install), or None for an installed copy."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "_toc.yml").is_file() and (root / "book").is_dir():
        return root
    return None


def default_root() -> Path:
    """Where results go by default: ``$ACCESSIBILITY_RESULTS``, else ``<repository>/results``.

    Outside a repository checkout (the library installed from a wheel) the fallback is ``./results``.
    """
    env = os.environ.get("ACCESSIBILITY_RESULTS")
    if env:
        return Path(env).expanduser()
    root = checkout_root()
    return root / "results" if root is not None else Path("results")


def default_store() -> ResultStore:
    """The store at :func:`default_root` (``$ACCESSIBILITY_RESULTS``, else ``results/`` at the repository root)."""
    return ResultStore(default_root())
