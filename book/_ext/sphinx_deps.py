"""Sphinx extension of the book's build: no page is served from the execution cache after what it ran changed.

Jupyter Book's execution cache (``execute_notebooks: cache``, jupyter-cache) keys a chapter on the text of
its code cells only, and Sphinx re-reads a page only when its own source file changed. So after an edit
of the library a chapter imports, of its data files, of the widget JavaScript (embedded in the saved
widget state when the chapter runs) or of the pinned requirements, every chapter would still come from the
cache with the old numbers; after an edit of the bibliography the chapters' citations would keep the old
text. This extension closes both gaps, at the start of every build (Sphinx event ``env-get-outdated``):

- **execution dependencies** (config ``accessibility_execution_deps``; default the library folder
  ``accessibility_lib/`` with its data and widget code, ``book/data/``, ``requirements.txt`` and
  ``pyproject.toml``): the content of every file is hashed (SHA-256). When the hashes differ from those the
  execution cache was filled with (recorded in ``<cache>/accessibility_deps.json``), the whole execution
  cache is cleared, so every chapter re-executes, and every page is re-read.
- **the environment** (config ``accessibility_execution_env``, default on): the Python version and the
  name and version of every installed distribution, as the build's Python sees them
  (``importlib.metadata``; the chapters' kernel is this environment's ``python3``). Upgrading one package
  within ``requirements.txt``'s ranges changes no file of the book, but its version enters the same
  execution fingerprint, so the cache is cleared and every chapter re-executes with it (the log names
  the package and both versions).
- **render dependencies** (the ``bibtex_bibfiles`` plus config ``accessibility_render_deps``): when they
  differ from those of the last successful build, every page is re-read (and re-rendered from the
  execution cache, without re-executing).
- **failed builds**: the fingerprint of a build is recorded (``<doctrees>/accessibility_deps.json``) only
  when it finished without an exception and without a warning; after a failed build every page is re-read,
  so a warning or error is reported again instead of being hidden by an up-to-date environment.

Paths are relative to the book's root (Sphinx's ``srcdir``); folders are hashed recursively, skipping
``__pycache__``, ``*.pyc``, ``.ipynb_checkpoints`` and hidden files; a missing path counts as "absent", so
its appearance is a change too. When nothing changed, nothing is re-read or re-executed: a no-change build
stays as fast as before (hashing the ~10 MB of dependencies takes a fraction of a second).

Enabled in ``_config.yml`` under ``sphinx: local_extensions`` (this folder, ``book/_ext``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from sphinx.util import logging

logger = logging.getLogger(__name__)

#: default execution dependencies, relative to the book's root
DEFAULT_EXECUTION_DEPS = ["accessibility_lib", "book/data", "requirements.txt", "pyproject.toml"]
STATE_FILE = "accessibility_deps.json"
_SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints"}


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    out = []
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).parts
        if any(part in _SKIP_DIRS or part.startswith(".") for part in rel) or p.suffix == ".pyc" or not p.is_file():
            continue
        out.append(p)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(root: str | Path, entries: list[str]) -> dict[str, str]:
    """SHA-256 of every file under ``entries`` (paths relative to ``root``; folders recursively).

    Returns:
        ``{relative path: sha256 hex}``; an entry that does not exist maps to ``"absent"``.
    """
    root = Path(root)
    out: dict[str, str] = {}
    for entry in entries:
        path = root / entry
        if not path.exists():
            out[str(entry)] = "absent"
            continue
        for f in _files(path):
            out[f.relative_to(root).as_posix()] = _sha256(f)
    return out


#: prefix of the environment's entries in the execution fingerprint ("env:python", "env:pkg:<name>")
ENV_PREFIX = "env:"


def environment() -> dict[str, str]:
    """The installed environment as fingerprint entries: ``{"env:python": version, "env:pkg:<name>": version}``.

    Every distribution ``importlib.metadata`` finds on ``sys.path`` (``PYTHONPATH`` included), by its
    normalised name (PEP 503); where one name is installed twice, the one found first (the one imported).
    """
    import importlib.metadata
    import re
    import sys

    out = {f"{ENV_PREFIX}python": sys.version.split()[0]}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if not name:
            continue
        key = f"{ENV_PREFIX}pkg:{re.sub(r'[-_.]+', '-', name).lower()}"
        out.setdefault(key, str(dist.version))
    return out


def changed_files(old: dict[str, str] | None, new: dict[str, str]) -> list[str]:
    """Paths added, removed or modified between two fingerprints (all of ``new`` when ``old`` is None)."""
    if old is None:
        return sorted(new)
    return sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))


def _read_state(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _write_state(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True))
    tmp.replace(path)


def _summary(paths: list[str], limit: int = 5, old: dict | None = None, new: dict | None = None) -> str:
    """The first ``limit`` changes in words: a path, or ``package old -> new`` for an environment entry."""

    def word(p: str) -> str:
        if p.startswith(ENV_PREFIX) and old is not None and new is not None:
            return f"{p.removeprefix(ENV_PREFIX).removeprefix('pkg:')} {old.get(p, 'absent')} -> {new.get(p, 'absent')}"
        return p

    head = ", ".join(word(p) for p in paths[:limit])
    return head + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def current_fingerprints(app: Any) -> dict[str, dict[str, str]]:
    """The execution and render fingerprints of the book being built."""
    render = list(app.config.accessibility_render_deps) + list(getattr(app.config, "bibtex_bibfiles", []) or [])
    execution = fingerprint(app.srcdir, list(app.config.accessibility_execution_deps))
    if app.config.accessibility_execution_env:
        execution.update(environment())
    return {"execution": execution, "render": fingerprint(app.srcdir, render)}


def _cache_path(app: Any) -> Path | None:
    """The jupyter-cache folder when chapters execute in cache mode, else None."""
    config = getattr(app.env, "mystnb_config", None)
    if config is None or getattr(config, "execution_mode", None) != "cache":
        return None
    path = getattr(config, "execution_cache_path", None)
    return Path(path) if path else Path(app.outdir).parent / ".jupyter_cache"


def _outdated(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    now = current_fingerprints(app)
    app._accessibility_deps = now
    reread = []

    cache = _cache_path(app)
    if cache is not None:
        stamp = _read_state(cache / STATE_FILE) if cache.is_dir() else None
        before = stamp.get("execution") if stamp else None
        diff = changed_files(before, now["execution"])
        if diff:
            if cache.is_dir() and any(cache.iterdir()):
                shutil.rmtree(cache)
                logger.info(
                    "[deps] execution dependencies changed since the cached executions "
                    f"({_summary(diff, old=before, new=now['execution'])}): "
                    "execution cache cleared, every chapter re-executes"
                )
            cache.mkdir(parents=True, exist_ok=True)
            _write_state(cache / STATE_FILE, {"execution": now["execution"]})
            reread.append("execution dependencies")

    built = _read_state(Path(app.doctreedir) / STATE_FILE)
    if built is None:
        reread.append("no successful build recorded")
    else:
        diff = changed_files(built.get("execution"), now["execution"]) + changed_files(
            built.get("render"), now["render"]
        )
        if diff:
            was = {**(built.get("execution") or {}), **(built.get("render") or {})}
            reread.append(
                f"changed since the last successful build: {_summary(diff, old=was, new={**now['execution'], **now['render']})}"
            )
    if not reread:
        return []
    logger.info(f"[deps] re-reading every page ({'; '.join(reread)})")
    return sorted(env.found_docs)


def _finished(app: Any, exception: Exception | None) -> None:
    """Record the build's fingerprint if it succeeded without a warning; forget it otherwise."""
    path = Path(app.doctreedir) / STATE_FILE
    now = getattr(app, "_accessibility_deps", None)
    ok = exception is None and getattr(app, "_warncount", 1) == 0 and getattr(app, "statuscode", 0) == 0
    if ok and now is not None:
        _write_state(path, now)
    elif not ok:
        path.unlink(missing_ok=True)


def setup(app: Any) -> dict[str, Any]:
    app.add_config_value("accessibility_execution_deps", DEFAULT_EXECUTION_DEPS, "env", [list])
    app.add_config_value("accessibility_execution_env", True, "env", [bool])
    app.add_config_value("accessibility_render_deps", [], "env", [list])
    app.connect("env-get-outdated", _outdated)
    app.connect("build-finished", _finished)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
