"""Progress bars for people at a live kernel, one summary line in the built site.

In a live session (terminal or JupyterLab) :func:`progress` is ``tqdm.auto.tqdm``. While the book is
being built (the build sets ``ACCESSIBILITY_BOOK_BUILD=1``) or when ``ACCESSIBILITY_PROGRESS=0``, the
bar is disabled, because stored outputs would keep every carriage-return frame of a terminal bar and
the notebook bar leaves an empty widget in static pages; instead one line is printed when the loop
ends: ``(computed here: <desc>, <n> items in <seconds> s)``, an annotation of what the cell above it cost.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

__all__ = ["progress", "bars_enabled"]

T = TypeVar("T")


def bars_enabled() -> bool:
    """False while the static book is built or when ACCESSIBILITY_PROGRESS=0."""
    return (
        os.environ.get("ACCESSIBILITY_BOOK_BUILD", "0") != "1" and os.environ.get("ACCESSIBILITY_PROGRESS", "1") != "0"
    )


class _SummaryBar(tqdm):
    """A disabled tqdm that prints one summary line when closed."""

    def __init__(self, *args, **kwargs):
        kwargs["disable"] = True
        self._desc_text = kwargs.get("desc") or "done"
        self._t0 = time.perf_counter()
        self._count = 0
        super().__init__(*args, **kwargs)

    def update(self, n=1):
        self._count += n
        return super().update(n)

    def __iter__(self):
        for item in self.iterable:
            self._count += 1
            yield item
        self.close()

    def close(self):
        if not getattr(self, "_summarised", False):
            self._summarised = True
            items = "item" if self._count == 1 else "items"
            # an annotation, not prose: in the built site it sits below the cell whose loop it times
            print(
                f"(computed here: {self._desc_text}, {self._count} {items} in {time.perf_counter() - self._t0:.1f} s)"
            )
        super().close()


def progress(iterable: Iterable[T] | None = None, **kwargs) -> Iterator[T]:
    """``tqdm(iterable, **kwargs)`` live; a one-line summary in the built book.

    Use as ``for x in progress(xs, desc="cramming")`` or as a manual bar
    ``with progress(total=n, desc=...) as bar: bar.update(k)``.
    """
    if bars_enabled():
        return tqdm(iterable, **kwargs)
    return _SummaryBar(iterable, **kwargs)
