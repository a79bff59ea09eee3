"""The examples in the library's docstrings run and print what they claim."""

import doctest
import importlib

import pytest

MODULES = [
    "accessibility_lib.theory.bounds",
    "accessibility_lib.theory.precision",
    "accessibility_lib.ground.results",
    "accessibility_lib.geometry.support_shape",
    "accessibility_lib.geometry.convolution",
    "accessibility_lib.models.text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
