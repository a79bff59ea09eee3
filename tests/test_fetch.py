"""Tests of accessibility_lib.fetch that need no network: the recorded sources, idempotence, errors."""

from __future__ import annotations

import re

import pytest

from accessibility_lib import fetch


def test_sources_record_checksums():
    for name, src in fetch.SOURCES.items():
        assert src["wheels"], name
        for req, sha in src["wheels"]:
            assert re.fullmatch(r"[a-z0-9-]+==[0-9.]+", req), req  # pinned
            assert sha is not None and re.fullmatch(r"[0-9a-f]{64}", sha), (name, req)
        assert re.fullmatch(r"[0-9a-f]{64}", src["gguf_sha256"]), name


def test_present_model_is_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ACCESSIBILITY_CACHE", str(tmp_path))
    d = tmp_path / "smollm2-135m"
    d.mkdir()
    (d / "config.json").write_text("{}")
    (d / "model.safetensors").write_bytes(b"")
    assert fetch.fetch("smollm2-135m") == d  # no download: it is there
    assert "nothing to do" in capsys.readouterr().out


def test_unknown_name():
    with pytest.raises(ValueError, match="name must be one of"):
        fetch.fetch("gpt-5")
    with pytest.raises(SystemExit):
        fetch.main(["gpt-5"])


def test_checksum_mismatch_is_refused(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"hello")
    with pytest.raises(RuntimeError, match="does not match"):
        fetch._check("wheel", f, "0" * 64)
