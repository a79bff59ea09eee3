"""``scripts/setup.sh`` names what the machine lacks before it installs anything."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setup(env_extra: dict, *args: str) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **env_extra}
    return subprocess.run(
        ["bash", "scripts/setup.sh", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_python_older_than_3_11_or_missing_is_named_and_nothing_is_installed():
    for python in ("/usr/bin/false", "no-such-python-here"):
        res = _setup({"PYTHON": python})
        assert res.returncode == 2
        assert "needs Python 3.11 or newer" in res.stderr
        assert "installing" not in res.stdout


def test_an_unknown_option_is_refused_with_the_allowed_ones():
    res = _setup({}, "--gpu")
    assert res.returncode == 2
    assert "unknown option --gpu (allowed: --browser, --models)" in res.stderr
