"""Deep CEL without touching the interpreter's recursion limit: a walk that goes deep goes on on a fresh thread.

cel-go accepts 250 levels of nesting, and drasat's parser, its checker and cost estimate, and celpy's evaluator
walk an expression recursively, a few Python frames per level: a 250-level ``1 + 1 + ...`` takes 2,500 frames,
past Python's default limit of 1,000. Raising the limit (``sys.setrecursionlimit``) would change the host's
interpreter for every thread, and a library must not. Python counts the depth per thread, though, and a new
thread starts from nothing. So each recursive walk goes down through :func:`descend`, which counts levels on
the current thread and, once the thread has used its share of the limit, runs the next level on a new thread
and waits for it: the walk hops threads, and is never deeper than the host's own limit on any of them (each
has its own C stack too). The first level on a thread counts the frames its caller already uses.

Hops are rare: every realistic selector (a few levels) stays on the caller's thread; a 250-level expression
hops about eight times (a tenth of a millisecond each). Exceptions, ``_TooDeep`` and budget stops included,
come back to the caller as they were raised.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

FRAMES_PER_LEVEL = 24  # the most Python frames any walk here spends from one level to the next (celpy's: ~12)
MARGIN = 200  # frames left free on each thread for what a level calls (library code, error messages)
_local = threading.local()


def deep(fn: F) -> F:
    """A recursive walk's step, each call one level down through :func:`descend`."""

    @functools.wraps(fn)
    def step(*args: Any, **kwargs: Any) -> Any:
        return descend(fn, *args, **kwargs)

    return step  # type: ignore[return-value]


def descend(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn(*args)``, one level deeper in a recursive walk; on a fresh thread when this one is deep enough."""
    level = getattr(_local, "level", None)
    outermost = level is None
    if level is None:
        level = _frames() // FRAMES_PER_LEVEL + 1
    if level >= max(2, (sys.getrecursionlimit() - MARGIN) // FRAMES_PER_LEVEL):
        return _on_fresh_thread(functools.partial(fn, *args, **kwargs))
    _local.level = level + 1
    try:
        return fn(*args, **kwargs)
    finally:
        _local.level = None if outermost else level


def _frames() -> int:
    """The Python frames on this thread's stack now (its caller's included)."""
    frame: FrameType | None = sys._getframe(1)
    count = 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def _on_fresh_thread(fn: Callable[[], R]) -> R:
    """``fn()`` on a new thread, whose depth starts from nothing; the caller waits for it."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller, which raises it
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name="drasat-cel-deep", daemon=True)
    worker.start()
    worker.join()
    done, value = outcome[0]
    if done:
        return value
    raise value
