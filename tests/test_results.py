"""Tests of accessibility_lib.results: resume after a crash, atomic writes, arrays, keys."""

import os

import numpy as np
import pytest

from accessibility_lib import results
from accessibility_lib.results import ResultStore


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
