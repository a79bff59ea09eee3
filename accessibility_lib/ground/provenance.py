"""Provenance of a stored run: the checked-out commit, the machine, the time (UTC)."""

from __future__ import annotations

import math
import os
import platform
import re
import shlex
import subprocess
import time
from pathlib import Path

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


def checkout_relative(arg: str) -> str:
    """``arg`` with an absolute path inside a checkout of this repository written relative to that checkout.

    A recorded command must work on a reader's clone: ``/work/main/book/data/x.json`` becomes
    ``book/data/x.json`` (a checkout is a folder holding ``accessibility_lib/`` and ``book/``). ``--flag=/path``
    is handled the same way; anything else is returned unchanged.
    """
    if "=" in arg and arg.startswith("--"):
        flag, value = arg.split("=", 1)
        return f"{flag}={checkout_relative(value)}"
    if not arg.startswith("/"):
        return arg
    path = Path(arg)
    for root in path.parents:
        if (root / "accessibility_lib").is_dir() and (root / "book").is_dir():
            return str(path.relative_to(root)) or "."
    return arg


def portable_command(command: str) -> str:
    """A recorded command with every absolute path into a checkout's ``book/data`` written from the checkout's root.

    Commands recorded before :func:`command_line` made checkout paths relative (or by a run whose output
    folder lay in another checkout than its code) carry the machine's absolute path, e.g.
    ``--out-dir /work/main/book/data/cramming``; printed for a reader that is ``--out-dir book/data/cramming``,
    which re-runs on any clone. Nothing else in the command changes.

    Example:
        >>> portable_command("python s.py --out-dir /work/main/book/data/cramming --json=/tmp/x.json")
        'python s.py --out-dir book/data/cramming --json=/tmp/x.json'
    """
    return re.sub(r"(?<![\w.])/(?:[^\s/'\"]+/)*?(book/data(?:/[^\s'\"]*)?)", r"\1", command)


#: A runner's time limit in a recorded command: ``--budget-min 0.2`` or ``--budget-min=0.2``.
_TIME_LIMIT = re.compile(r"\s+--budget-min(?:=|\s+)(\S+)")


def resume_command(command: str) -> str:
    """A recorded run command without its time limit: what resumes the run to its end.

    The runners stop cleanly after ``--budget-min`` minutes, and an artifact's provenance records the last
    invocation, often a short export (``--budget-min 0.2``); the command a reader re-runs to continue the
    run is the same command with the limit dropped. Checkout paths are made portable
    (:func:`portable_command`); nothing else changes.

    Example:
        >>> resume_command("python s.py --model m --budget-min 0.2 --workers 1")
        'python s.py --model m --workers 1'
        >>> resume_command("python s.py --budget-min=30")
        'python s.py'
    """
    return _TIME_LIMIT.sub("", portable_command(command))


def time_limit_minutes(command: str) -> float | None:
    """The ``--budget-min`` time limit of a recorded run command, in minutes (None when it has none).

    Example:
        >>> time_limit_minutes("python s.py --budget-min 0.2"), time_limit_minutes("python s.py")
        (0.2, None)
    """
    found = _TIME_LIMIT.search(command)
    return float(found.group(1)) if found else None


def command_line(*words: str, argv=None) -> str:
    """A shell command that re-runs this script from a clone's root: ``words`` (e.g. the interpreter and the
    script) and ``argv`` (default ``sys.argv[1:]``), quoted, checkout paths made relative (:func:`checkout_relative`)."""
    import sys

    argv = sys.argv[1:] if argv is None else argv
    return " ".join([*words, *(shlex.quote(checkout_relative(str(a))) for a in argv)])


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def finite_or_none(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None
