"""Python's cyclic garbage collector paused while long-lived objects are built, one mechanism for every stage.

Building many small containers triggers collections that walk every object the process holds and find
nothing to free: reading manifests, importing a command's modules, one ``allocate`` call. Objects built in
such a pause that live on can then be frozen (``gc.freeze``): reference counting still frees them, only the
collector stops re-examining them.

Freezing is for the command line's one-shot process only (:func:`allow_freezing`, called by its entry point): a
frozen object is never examined by the collector again, so garbage cycles that happen to exist when a freeze
runs (an earlier call's error and its traceback, a test runner's streams) are kept for the life of the process.
A long-lived host -- a service, a notebook, the fuzzer calling the command line 100,000 times -- grew by half
again as much with them; there, a pause freezes nothing.

The pause is process-wide, and drasat is a library: four threads may call ``allocate`` at once, and the
host may switch the collector off or on itself meanwhile. So pauses are counted (one lock, one counter):
the first one stops automatic collection, the last one to end restores it, never one while others still
run. And a pause never touches the switch the host owns (``gc.disable``/``gc.enable``/``gc.isenabled``):
it sets the first generation's threshold to 0, which stops automatic collection just as well (CPython
collects only past a nonzero threshold), and puts the host's threshold back at the end — unless the host
set another one meanwhile, which is then kept; the other generations' thresholds are never touched. A
collector the host disabled stays disabled, one it disables or enables during a call is as it left it:
the caller's state, exactly.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_pauses = 0  # pauses in progress, in every thread
_saved = 0  # the host's first threshold when the first of them began (0: collection was off by threshold)
_get_threshold, _set_threshold = gc.get_threshold, gc.set_threshold  # a call of allocate's costs about 1 µs
_freezing = False  # see allow_freezing


def allow_freezing(allowed: bool = True) -> None:
    """Let pauses freeze what they built (``freeze_after``): for a process that ends when its one job is done."""
    global _freezing
    _freezing = allowed


def pause_collector() -> None:
    """Stop automatic collection until the matching :func:`resume_collector` (calls nest, across threads)."""
    global _pauses, _saved
    with _LOCK:
        if not _pauses:
            _saved = _get_threshold()[0]
            if _saved:
                _set_threshold(0)  # the first generation's only: the others stay as the host set them
        _pauses += 1


def resume_collector() -> None:
    """End one pause; the last one to end gives the host its threshold back (if it did not set a new one)."""
    global _pauses
    with _LOCK:
        _pauses -= 1
        if not _pauses and _saved and not _get_threshold()[0]:
            _set_threshold(_saved)


def collection_paused() -> bool:
    """Whether automatic collection is off now: a pause of drasat's, or the host's own ``gc.disable``."""
    return not gc.isenabled() or gc.get_threshold()[0] == 0


@contextmanager
def collector_paused(freeze_after: int | None = None) -> Iterator[None]:
    """The collector paused for the block; when more than ``freeze_after`` new objects are tracked by its end
    (None: never) and freezing is allowed (:func:`allow_freezing`), they are frozen first. Inside another pause, or with collection off already (the host's
    choice), nothing is frozen: the enclosing owner of the pause decides."""
    outermost = not collection_paused()
    pause_collector()
    try:
        yield
    finally:
        if _freezing and outermost and freeze_after is not None and gc.get_count()[0] > freeze_after:
            gc.freeze()
        resume_collector()
