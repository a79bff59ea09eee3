"""Sphinx extension of the book's build: pages load nothing from the network.

Jupyter Book always enables ``sphinx_thebe``, which writes an inline script holding a CDN URL
(``THEBE_JS_URL``, the address of thebe on a public CDN) into every page, plus its loader; the book has no
launch buttons, so both are dropped here. Then every page's script and stylesheet list is checked:
a remote one (``//`` or ``scheme://``) is reported as a Sphinx warning, which fails the book build
(``-W``). The widget runtime and MathJax are served from ``_static/abx`` (scripts/vendor_assets.py,
no CDN is reachable where the book is built); they are re-copied after every build, also an up-to-date one.

The execution status table (myst-nb's ``nb-exec-table``) marks each chapter with the emoji ✅ or ❌,
which renders as an empty box on a machine without an emoji font; they become the words "succeeded" and
"failed" (:func:`_status_words`).

Enabled in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

from typing import Any

from sphinx.util import logging

logger = logging.getLogger(__name__)

_DROP_BODY = ("THEBE_JS_URL",)
_DROP_FILES = ("sphinx-thebe.js",)


def _is_remote(url: str | None) -> bool:
    return bool(url) and ("://" in url or url.startswith("//"))


def _keep(asset: Any) -> bool:
    filename = getattr(asset, "filename", None) or ""
    body = (getattr(asset, "attributes", None) or {}).get("body", "") or ""
    if any(token in body for token in _DROP_BODY):
        return False
    return not any(filename.split("?")[0].endswith(name) for name in _DROP_FILES)


def _strip_and_check(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if not assets:
            continue
        kept = [a for a in assets if _keep(a)]
        assets[:] = kept
        for asset in kept:
            filename = getattr(asset, "filename", asset if isinstance(asset, str) else None)
            if _is_remote(filename):
                logger.warning(
                    f"page {pagename!r} would load {filename!r} from the network; the book must be offline "
                    "(serve it from book/_vendor via scripts/vendor_assets.py)",
                    type="accessibility",
                    subtype="remote_asset",
                )


def _refresh_vendor(app: Any, exception: Exception | None) -> None:
    """Re-copy book/_vendor (and book/_theme, the book's stylesheet) into _static after every build.

    Sphinx copies static files only when some page is rewritten, so an updated widget runtime
    (a new npm version, a changed require_config.js) or stylesheet would otherwise stay stale in an
    up-to-date build.
    """
    if exception is not None or getattr(app.builder, "format", None) != "html":
        return
    from pathlib import Path

    from sphinx.util.fileutil import copy_asset

    for entry in app.config.html_static_path:
        src = Path(app.confdir) / entry
        if src.name in ("_vendor", "_theme") and src.is_dir():
            copy_asset(str(src), str(Path(app.outdir) / "_static"))


_STATUS_WORDS = {"✅": "succeeded", "❌": "failed"}


def _status_words(app: Any, doctree: Any, docname: str) -> None:
    """The status table's ✅ / ❌ cells as words (no emoji font needed)."""
    from docutils import nodes

    for table in doctree.findall(nodes.table):
        for text in list(table.findall(nodes.Text)):
            word = _STATUS_WORDS.get(text.astext().strip())
            if word is not None:
                text.parent.replace(text, nodes.Text(word))


def setup(app: Any) -> dict[str, Any]:
    # priority > 500: run after other extensions have added their assets to the page context
    app.connect("html-page-context", _strip_and_check, priority=900)
    app.connect("build-finished", _refresh_vendor)
    app.connect("doctree-resolved", _status_words)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
