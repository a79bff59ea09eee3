"""The support of last-layer embeddings: sampling, shape fits (ball, box, ellipsoid, cone), argmax cells and their volumes, slices, the n-fold convolution, Table 1 columns."""
