"""Tests of accessibility_lib.ground.results: resume after a crash, atomic writes, arrays, keys, strict JSON, location."""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from accessibility_lib.ground import results
from accessibility_lib.ground.results import ResultStore


def _sweep(store, keys, work, crash_at=None):
    done = []
    for i, k in enumerate(keys):
        if store.get("sweep", k) is not None:
            continue
        if crash_at is not None and i == crash_at:
            raise KeyboardInterrupt
        work.append(k["i"])
        store.put("sweep", k, {"sq": k["i"] ** 2}, arrays={"v": np.arange(k["i"] + 1)})
        done.append(k["i"])
    return done


def test_resume_after_crash_skips_finished_entries(tmp_path):
    store = ResultStore(tmp_path)
    keys = [{"i": i, "model": "nano"} for i in range(6)]
    work = []
    with pytest.raises(KeyboardInterrupt):
        _sweep(store, keys, work, crash_at=4)
    assert work == [0, 1, 2, 3]
    work2 = []
    _sweep(ResultStore(tmp_path), keys, work2)
    assert work2 == [4, 5]  # nothing finished is recomputed
    got = store.get("sweep", {"model": "nano", "i": 5})  # key order does not matter
    assert got["sq"] == 25 and np.array_equal(got["v"], np.arange(6))
    assert len(list(store.entries("sweep", model="nano"))) == 6


def test_crash_during_write_leaves_no_entry(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(results.os, "replace", boom)
    with pytest.raises(OSError):
        store.put("x", {"a": 1}, {"b": 2})
    monkeypatch.undo()
    assert store.get("x", {"a": 1}) is None and not store.has("x", {"a": 1})
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # the temporary file was removed


def test_keys_distinguish_every_parameter(tmp_path):
    store = ResultStore(tmp_path)
    store.put("x", {"a": 1, "dtype": "float32"}, {"v": 1})
    assert store.get("x", {"a": 1, "dtype": "bfloat16"}) is None
    assert store.get("x", {"a": 1}) is None
    with pytest.raises(ValueError):
        store.put("../escape", {"a": 1}, {"v": 1})
    with pytest.raises(ValueError):
        store.put("x", {"a": 1}, {"v": 1}, arrays={"v": np.zeros(2)})
    with pytest.raises(ValueError):
        results.canonical_key([1, 2])


def test_default_store_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCESSIBILITY_RESULTS", str(tmp_path))
    assert results.default_store().root == tmp_path
    assert os.fspath(tmp_path) in repr(results.default_store())


def _strict(text: str):
    """json.loads that refuses the non-JSON tokens NaN, Infinity and -Infinity."""

    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("special", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_values_round_trip_as_strict_json(tmp_path, special):
    """NaN and ±inf as Python, NumPy and torch scalars and arrays: one encoding, read back as floats."""
    import torch

    store = ResultStore(tmp_path)
    value = {
        "python": special,
        "numpy64": np.float64(special),
        "numpy32": np.float32(special),
        "numpy_array": np.array([1.5, special]),
        "torch_scalar": torch.tensor(special),
        "torch_tensor": torch.tensor([[special, 2.0]], dtype=torch.float32),
        "torch_bf16": torch.tensor([special], dtype=torch.bfloat16),
        "nested": [{"x": special}, (special, 3)],
    }
    path = store.put("x", {"a": 1}, value)
    text = path.read_text()
    record = _strict(text)  # parses with a strict parser: no bare NaN/Infinity anywhere
    assert "NaN" not in text and "Infinity" not in text
    tag = {"$float": {True: "nan", False: "inf" if special > 0 else "-inf"}[math.isnan(special)]}
    raw = record["value"]
    # one encoding whatever the type
    assert raw["python"] == raw["numpy64"] == raw["numpy32"] == raw["torch_scalar"] == tag
    assert raw["numpy_array"] == [1.5, tag] and raw["torch_tensor"] == [[tag, 2.0]] and raw["torch_bf16"] == [tag]

    got = store.get("x", {"a": 1})

    def same(x):
        return math.isnan(x) if math.isnan(special) else x == special

    for name in ("python", "numpy64", "numpy32", "torch_scalar"):
        assert isinstance(got[name], float) and same(got[name]), name
    assert got["numpy_array"][0] == 1.5 and same(got["numpy_array"][1])
    assert same(got["torch_tensor"][0][0]) and got["torch_tensor"][0][1] == 2.0
    assert same(got["torch_bf16"][0])
    assert same(got["nested"][0]["x"]) and same(got["nested"][1][0]) and got["nested"][1][1] == 3
    ((_, listed_value),) = list(store.entries("x"))
    assert same(listed_value["python"])  # entries() decodes too


def test_non_finite_key_and_finite_values_unchanged(tmp_path):
    import torch

    store = ResultStore(tmp_path)
    key = {"eps": np.float32(math.inf), "n": np.int64(3), "lr": torch.tensor(0.5)}
    store.put("x", key, {"v": 1, "f": np.float32(0.25), "i": torch.tensor([1, 2])})
    assert store.get("x", {"eps": math.inf, "n": 3, "lr": 0.5}) == {"v": 1, "f": 0.25, "i": [1, 2]}
    _strict(results.canonical_key(key))


def test_reserved_tag_and_legacy_files(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(ValueError, match=r"\$float"):
        store.put("x", {"a": 1}, {"v": {"$float": "maybe"}})
    # a file written before the strict encoding (bare NaN from NumPy values) is still read
    path = store._path("x", {"a": 2})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"key": {"a": 2}, "value": {"loss": NaN, "top": Infinity, "s": "nan"}, "arrays": []}')
    got = store.get("x", {"a": 2})
    assert math.isnan(got["loss"]) and got["top"] == math.inf and got["s"] == "nan"


def test_default_root_is_the_repository_results_folder(monkeypatch, tmp_path):
    """Chapters execute with cwd book/: the default store must still be <repository>/results, not book/results."""
    monkeypatch.delenv("ACCESSIBILITY_RESULTS", raising=False)
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo / "book")
    assert results.default_root() == repo / "results"
    monkeypatch.chdir(tmp_path)
    assert results.default_store().root == repo / "results"
    monkeypatch.setenv("ACCESSIBILITY_RESULTS", str(tmp_path / "elsewhere"))
    assert results.default_root() == tmp_path / "elsewhere"


def test_recorded_commands_use_checkout_relative_paths(tmp_path):
    """A command stored in an artifact must re-run from a reader's clone: no path of the machine that ran it."""
    from accessibility_lib.ground import provenance

    other = tmp_path / "elsewhere" / "checkout"  # another checkout of the repository (a worktree, say)
    (other / "accessibility_lib").mkdir(parents=True)
    (other / "book" / "data").mkdir(parents=True)
    out = other / "book" / "data" / "copying" / "x.json"
    assert provenance.checkout_relative(str(out)) == "book/data/copying/x.json"
    assert provenance.checkout_relative(f"--out={out}") == "--out=book/data/copying/x.json"
    assert provenance.checkout_relative("/tmp/not-a-checkout/x.json") == "/tmp/not-a-checkout/x.json"
    assert provenance.checkout_relative("relative/x.json") == "relative/x.json"
    line = provenance.command_line(".venv/bin/python", "scripts/s.py", argv=["--out", str(out), "--note", "a b"])
    assert line == ".venv/bin/python scripts/s.py --out book/data/copying/x.json --note 'a b'"
