"""Closed forms in log space: packing numbers and slopes (Thm 4.5, Cor 4.6), the mean-field count (Thm 4.9), ε conventions, dtype grids, the paper's published numbers, the capacity card."""
