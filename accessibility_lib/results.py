"""A small result store: keyed by every parameter, written atomically, resumable.

Long sweeps (embedding sampling, cramming, copying) write each finished unit of work as one entry.
An interrupted run loses nothing it had finished: on restart, ``store.get(key)`` returns the stored
entry and the work is skipped. Entries are never half-written: each is written to a temporary file in
the same folder and moved into place with ``os.replace`` (atomic on POSIX).

Layout: ``<root>/<namespace>/<sha256 of the canonical key>.json`` holds ``{"key": ..., "value": ...}``;
arrays go beside it as ``<hash>.npz`` (loaded with ``allow_pickle=False``: nothing is ever unpickled).

The default root is ``$ACCESSIBILITY_RESULTS`` or ``results/`` in the current directory.

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

__all__ = ["ResultStore", "default_store", "canonical_key"]


def _jsonable(value: Any) -> Any:
    """Convert NumPy/torch scalars, tuples and paths to plain JSON types (for keys and values)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:  # torch scalar
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        if isinstance(value, float) and not math.isfinite(value):
            return repr(value)  # JSON has no NaN/inf: store them as strings, visibly
        return value
    return str(value)  # dtypes, devices: their readable name


def canonical_key(key: dict) -> str:
    """The canonical JSON text of a key (sorted keys, plain types): equal parameters give equal text.

    Raises:
        ValueError: if ``key`` is not a dict.
    """
    if not isinstance(key, dict):
        raise ValueError(f"key must be a dict of parameters, got {type(key).__name__}")
    return json.dumps(_jsonable(key), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
        record = json.loads(path.read_text())
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
        record = {"key": _jsonable(key), "value": _jsonable(value), "arrays": names}
        _atomic_write_bytes(path, json.dumps(record, ensure_ascii=False, indent=1).encode())
        return path

    def entries(self, namespace: str, **match: Any) -> Iterator[tuple[dict, dict]]:
        """All (key, value) pairs of a namespace whose key contains every ``match`` item (arrays not loaded)."""
        folder = self.root / namespace
        if not folder.exists():
            return
        want = _jsonable(match)
        for path in sorted(folder.glob("*.json")):
            record = json.loads(path.read_text())
            if all(record["key"].get(k) == v for k, v in want.items()):
                yield record["key"], record["value"]

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"


def default_store() -> ResultStore:
    """The store at ``$ACCESSIBILITY_RESULTS``, else ``./results``."""
    return ResultStore(os.environ.get("ACCESSIBILITY_RESULTS", "results"))
