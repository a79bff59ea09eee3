"""Figures: one house style (plotting), argmax-cell pictures, the anywidget explorers."""
