"""scripts/vendor_assets.py: the vendored widget runtime creates ajv in non-strict mode (no console warnings)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EMBED = ROOT / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist" / "embed-amd.js"


def _vendor_assets():
    spec = importlib.util.spec_from_file_location("vendor_assets", ROOT / "scripts" / "vendor_assets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_ajv_instances_of_the_html_manager_are_created_non_strict() -> None:
    if not EMBED.is_file():
        pytest.skip("node_modules is missing: run `npm ci` (scripts/setup.sh does)")
    va = _vendor_assets()
    text = EMBED.read_text(encoding="utf-8")
    assert text.count("({strict:!1})") == 0  # the upstream bundle: ajv created with its strict default
    patched = va.patch_embed(text)
    assert patched.count("({strict:!1})") == va.AJV_INSTANCES == 2
    assert len(patched) == len(text) + 2 * len("({strict:!1})")  # nothing else changed


def test_a_bundle_of_another_form_is_refused_with_what_was_expected() -> None:
    va = _vendor_assets()
    good = "a=new(b());a.compile(s);k=new(w()),E=k.compile(y);"
    assert va.patch_embed(good) == "a=new(b())({strict:!1});a.compile(s);k=new(w())({strict:!1}),E=k.compile(y);"
    with pytest.raises(ValueError, match="expected 2 ajv instances .* found 1"):
        va.patch_embed("a=new(b());a.compile(s);")
