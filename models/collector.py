"""Python's cyclic garbage collector paused while long-lived objects are built, one mechanism for every stage.

Building many small containers triggers collections that walk every object the process holds and find
nothing to free: reading manifests, importing a command's modules. Objects built in such a pause that
live on can then be frozen (``gc.freeze``): reference counting still frees them, only the collector stops
re-examining them. (``drasat.solver.allocation`` pauses the collector too, inline: it is asked on every
small call, and freezes nothing.)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(freeze_after: int | None = None) -> Iterator[None]:
    """The collector paused for the block, then running again; when more than ``freeze_after`` new objects
    are tracked by then (None: never), they are frozen first. Already paused (a library caller's choice, or
    an enclosing pause): left as it is, and nothing frozen."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze_after is not None and gc.get_count()[0] > freeze_after:
            gc.freeze()
        gc.enable()
