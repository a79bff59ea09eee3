"""accessibility_lib — the helper library of the accessibility book.

The book teaches, measures and extends "How Many Different Outputs Can a Transformer Generate?"
(Meyer, Michelessa, Chaux, Tan; ICML 2026, arXiv 2605.22223). One folder a stage, in the order the
data flows; a module imports only from its own stage or an earlier one (``tests/unit/test_layout.py``):

1. :mod:`accessibility_lib.ground` — argument checks, the resumable result store, progress bars, paths
2. :mod:`accessibility_lib.models` — the model handle, loading, offline fetching, stand-ins, decoding
3. :mod:`accessibility_lib.theory` — closed forms in log space, ε conventions, dtype grids, the paper's numbers
4. :mod:`accessibility_lib.geometry` — embeddings, support shapes, argmax cells, convolution, Table 1 columns
5. :mod:`accessibility_lib.experiments` — cramming, the n50 search, fits, targets, copying, perturbation
6. :mod:`accessibility_lib.runs` — parameters, presets, the chapter registry, units, sweeps, artifacts
7. :mod:`accessibility_lib.figures` — house style, cell pictures, the slider explorers

Commands: ``python -m accessibility_lib {fetch,capacity,sweeps}``. Stages from ``models`` on import torch.
"""

__version__ = "0.1.0"

#: the stages, in import order: a module may import from its own stage and the ones before it
STAGES = ("ground", "models", "theory", "geometry", "experiments", "runs", "figures")
