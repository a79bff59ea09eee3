"""Running the book: typed parameters and presets, the chapter registry, store-keyed units and the one function that runs each, sweeps (serial or Ray), artifacts, the scale plan."""
