"""What every command does while it starts: its modules imported with the cyclic collector paused, and
without the package-metadata machinery that only pydantic's (switched off) plugin scan would use."""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from drasat.models.collector import collector_paused

from .interrupt import WATCHER

_PLUGINS_OFF = ("__all__", "1", "true")
"""The values of ``PYDANTIC_DISABLE_PLUGINS`` with which pydantic looks for no plugin at all."""


@contextmanager
def importing() -> Iterator[None]:
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
    with collector_paused(freeze_after=0):
        _plugin_loader_without_metadata()
        yield


def _plugin_loader_without_metadata() -> None:
    """pydantic's plugin loader imported with ``importlib.metadata`` standing in, when plugins are off.

    The loader imports ``importlib.metadata`` for the entry-point scan that ``PYDANTIC_DISABLE_PLUGINS``
    (which the command sets, see ``drasat.cli.main``) skips, and that module brings ~60 more (email,
    zipfile, csv, tempfile...): 40 M instructions, 3 % of ``drasat solve``'s start. The stand-in gives the
    loader an ``entry_points`` that imports the real module when it is called (so a scan still works if
    pydantic is asked for one), and any other name from the real module; it is in ``sys.modules`` only
    while the loader is imported, so every other import gets the real module. Only while no other thread
    runs but drasat's signal watcher (which imports nothing): another thread importing ``importlib.metadata``
    meanwhile would get the stand-in for good."""
    if (
        "pydantic.plugin._loader" in sys.modules
        or "importlib.metadata" in sys.modules
        or os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in _PLUGINS_OFF
        or any(t is not threading.main_thread() and t.name != WATCHER for t in threading.enumerate())
    ):
        return
    stand_in = _Metadata("importlib.metadata")
    sys.modules["importlib.metadata"] = stand_in
    try:
        import pydantic.plugin._loader  # noqa: F401
    finally:
        if sys.modules.get("importlib.metadata") is stand_in:
            del sys.modules["importlib.metadata"]


class _Metadata(types.ModuleType):
    """``importlib.metadata`` until something uses it: then the real module, imported then."""

    @staticmethod
    def entry_points(**params: Any) -> Any:
        return _real_metadata().entry_points(**params)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system asks of any module (``__path__``...): not here
            raise AttributeError(name)
        return getattr(_real_metadata(), name)


def _real_metadata() -> types.ModuleType:
    if isinstance(sys.modules.get("importlib.metadata"), _Metadata):
        del sys.modules["importlib.metadata"]
    import importlib.metadata

    return importlib.metadata
