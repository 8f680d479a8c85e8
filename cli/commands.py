"""Imports every subcommand module so that each registers itself on the ``drasat`` group."""

from __future__ import annotations

import importlib

for _module in ("validate", "solve"):
    try:
        importlib.import_module(f"{__package__}.{_module}")
    except ModuleNotFoundError as exc:  # a command still being written in this tree
        if exc.name != f"{__package__}.{_module}":
            raise
