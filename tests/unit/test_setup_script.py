"""``scripts/setup.sh`` names what the machine lacks before it installs anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _setup(env_extra: dict, *args: str) -> subprocess.CompletedProcess:
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


def test_browser_without_root_or_sudo_stops_before_any_install(tmp_path):
    """No chromium, not root and no sudo on PATH: setup.sh names what is missing and installs nothing."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("bash", "dirname", "head", "flock", "npm"):
        found = shutil.which(tool)
        if found is None:  # npm or flock missing: setup.sh stops earlier, on that, which another test covers
            pytest.skip(f"{tool} is not on this machine's PATH")
        (bin_ / tool).symlink_to(found)
    (bin_ / "python3").symlink_to(sys.executable)
    (bin_ / "id").write_text("#!/bin/sh\necho 1000\n")  # an ordinary user's uid
    (bin_ / "id").chmod(0o755)
    env = {"PATH": str(bin_), "HOME": os.environ.get("HOME", str(tmp_path)), "CHROMIUM": str(tmp_path / "no-chromium")}
    res = subprocess.run(
        [str(bin_ / "bash"), "scripts/setup.sh", "--browser"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2, res.stderr
    assert "--browser needs Debian's chromium" in res.stderr and "needs root or sudo" in res.stderr
    assert "installing" not in res.stdout and "==" not in res.stdout
