"""What every command does while it starts: its modules imported with the cyclic collector paused."""

from __future__ import annotations

from contextlib import AbstractContextManager

from drasat.models.collector import collector_paused


def importing() -> AbstractContextManager[None]:
    """Python's cyclic garbage collector paused while a command's modules are imported.

    Importing builds objects that live as long as the process (modules, functions, pydantic's ~100 model
    classes and their validators, ~100 dataclasses) and almost nothing a collection could free, yet the
    collector, run every 700 new objects, walks them over and over (~110 passes): pausing it took
    ``drasat solve``'s start from 1,451 to 1,350 million instructions and from ~300 to ~250 ms
    (``benchmarks/startup_bench.py``). They are then frozen (``gc.freeze``): reference counting still
    frees what is dropped, and later collections, which a long solve needs, do not walk the start-up's
    objects again. The few cycles start-up leaves unreachable (classes that ``dataclass(slots=True)``
    replaced, ~150 KiB for ``solve``) are frozen with them, once. Already paused (a library caller's
    choice, or an enclosing ``importing``): left as it is.
    """
    return collector_paused(freeze_after=0)
