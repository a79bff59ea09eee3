"""Experiments: cramming (fixed-length and progressive), the n50 search and its fits, targets and texts, instruments, copying, perturbation."""
