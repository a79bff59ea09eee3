"""The examples in the library's docstrings run and print what they claim."""

import doctest
import importlib

import pytest

MODULES = [
    "accessibility_lib.bounds",
    "accessibility_lib.precision",
    "accessibility_lib.results",
    "accessibility_lib.geometry",
    "accessibility_lib.convolution",
    "accessibility_lib.text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
