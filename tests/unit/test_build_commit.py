"""The Status page's build stamp (``book/_ext/sphinx_build_commit.py``): the commit, clean or dirty, in words."""

from __future__ import annotations

import pytest
import sphinx_build_commit as B  # book/_ext, on the path by pytest's pythonpath setting

HASH = "36396a5" + "0" * 33


def test_a_clean_checkout_is_named_with_its_commit() -> None:
    text = B.commit_sentence(HASH, "2026-12-08 00:10 UTC")
    assert text.startswith(f"This site was built from commit {HASH} on 2026-12-08 00:10 UTC.")
    assert "clean" in text and "dirty" not in text


def test_a_dirty_tree_is_said_in_words_and_the_marker_is_not_shown_raw() -> None:
    text = B.commit_sentence(HASH + "+dirty", "2026-12-08 00:10 UTC")
    assert f"commit {HASH} on" in text and "+dirty" not in text
    assert "uncommitted changes to tracked files (dirty)" in text


def test_outside_a_checkout_the_commit_is_unknown_and_an_empty_stamp_is_refused() -> None:
    assert "the commit that built it is unknown" in B.commit_sentence("unknown", "today")
    with pytest.raises(ValueError, match="stamp must be a commit hash"):
        B.commit_sentence("", "today")
