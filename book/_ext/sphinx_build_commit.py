"""Sphinx extension of the book's build: the Status page names the commit that built the site.

The directive ``{build-commit}`` (used by ``book/status.md``) renders one paragraph: the commit of the
checkout that ran the build, from :func:`accessibility_lib.ground.provenance.git_commit` (the same stamp the
``make site-from-runs`` Status page and the stored runs carry), whether the tree was clean or had uncommitted
changes to tracked files ("dirty"), and the build's date (UTC). Outside a git checkout it says that the commit
is unknown.

Sphinx re-reads a page only when its source changed, so every page that uses the directive is re-read at
the start of every build (event ``env-get-outdated``): the stamp is never the one of an older build.

Enabled in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import time
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


def commit_sentence(stamp: str, date: str) -> str:
    """The Status page's sentence for a :func:`~accessibility_lib.ground.provenance.git_commit` stamp.

    Args:
        stamp: a full commit hash, the hash followed by ``+dirty``, or ``"unknown"``.
        date: the build's date and time, as text (UTC).

    Returns:
        One sentence for readers, e.g. "This site was built from commit 36396a5… on … (a clean checkout)."

    Raises:
        ValueError: if ``stamp`` is empty.
    """
    if not stamp:
        raise ValueError("stamp must be a commit hash, a hash followed by '+dirty', or 'unknown'; got ''")
    if stamp == "unknown":
        return f"This site was built on {date} outside a git checkout: the commit that built it is unknown."
    commit, dirty = (stamp[: -len("+dirty")], True) if stamp.endswith("+dirty") else (stamp, False)
    state = (
        "The working tree had uncommitted changes to tracked files (dirty), so the pages may differ from that commit."
        if dirty
        else "The working tree was clean: the pages are what that commit builds."
    )
    return f"This site was built from commit {commit} on {date}. {state}"


class BuildCommit(SphinxDirective):
    """``{build-commit}``: a paragraph naming the commit that built the site and whether the tree was dirty."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        from accessibility_lib.ground.provenance import git_commit

        stamp = git_commit()
        date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        self.env.metadata[self.env.docname]["build_commit"] = stamp
        para = nodes.paragraph(classes=["build-commit"])
        para["ids"] = ["build-commit"]
        para += nodes.Text(commit_sentence(stamp, date))
        return [para]


def _outdated(app: Any, env: Any, added: set, changed: set, removed: set) -> list[str]:
    """Every page that shows the stamp is re-read at each build."""
    return [doc for doc, meta in env.metadata.items() if "build_commit" in meta and doc in env.found_docs]


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("build-commit", BuildCommit)
    app.connect("env-get-outdated", _outdated)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
