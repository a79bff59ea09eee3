"""Provenance of a stored run: the checked-out commit, the machine, the time (UTC)."""

from __future__ import annotations

import math
import os
import platform
import subprocess
import time

from accessibility_lib.ground.paths import REPO_ROOT


def git_commit() -> str:
    """The checked-out commit (with ``+dirty`` when tracked files differ), or "unknown"."""
    try:
        root = REPO_ROOT
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=root
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, cwd=root
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_text(threads: int | None = None) -> str:
    import torch

    return f"{platform.node()} {platform.machine()}, {os.cpu_count()} cpus, torch {torch.__version__}" + (
        f", {threads} thread(s) a worker" if threads else ""
    )


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None
