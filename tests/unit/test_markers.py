"""The central list of slow unit tests (``tests/conftest.py``: ``SLOW_UNIT_TESTS``) names tests that exist.

A test renamed or removed would silently drop out of the list (and its slow successor into ``make check``);
here every entry must name a ``def test_…`` in its file (or, alone, a test file).
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import SLOW_UNIT_TESTS

ROOT = Path(__file__).resolve().parents[2]


def test_every_slow_entry_names_a_test():
    assert len(SLOW_UNIT_TESTS) >= 50
    missing = []
    for nodeid in sorted(SLOW_UNIT_TESTS):
        path, _, name = nodeid.partition("::")
        text = (ROOT / path).read_text() if (ROOT / path).is_file() else ""
        if not text or name and not re.search(rf"^def {re.escape(name)}\(", text, flags=re.M):
            missing.append(nodeid)
    assert missing == [], f"SLOW_UNIT_TESTS names tests that no longer exist: {missing}"


def test_the_slow_marker_reaches_the_listed_tests(request):
    """Every collected test of the list carries the ``slow`` marker (the conftest hook ran); this test does not.

    Under ``-m "not slow"`` (``make check``) the listed tests are deselected, so none may be among the items.
    """
    assert request.node.get_closest_marker("slow") is None
    listed = [
        i
        for i in request.session.items
        if i.nodeid.split("[", 1)[0] in SLOW_UNIT_TESTS or i.nodeid.split("::", 1)[0] in SLOW_UNIT_TESTS
    ]
    assert all(i.get_closest_marker("slow") is not None for i in listed), [i.nodeid for i in listed][:5]
    if request.config.getoption("markexpr") == "not slow":
        assert listed == []
