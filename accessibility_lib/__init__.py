"""accessibility_lib — the helper library of the accessibility book.

The book teaches, measures and extends "How Many Different Outputs Can a Transformer Generate?"
(Meyer, Michelessa, Chaux, Tan; ICML 2026, arXiv 2605.22223). One concept a module:

- :mod:`accessibility_lib.bounds` — the closed forms in log space (Thm 4.5, Cor 4.6, Thm 4.9, §5.2)
- :mod:`accessibility_lib.precision` — ε conventions
- :mod:`accessibility_lib.results` — the resumable result store
- :mod:`accessibility_lib.presets` — named parameter sets of the chapters (``nano``, ``smoke``, ``paper``)
- :mod:`accessibility_lib.progress`, :mod:`accessibility_lib.plotting` — progress bars and house style

Heavier modules (``models``, ``cells``, ``cramming``, …) import torch; import them explicitly.
"""

__version__ = "0.1.0"
