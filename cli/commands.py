"""Imports every subcommand module so that each registers itself on the ``drasat`` group."""

from __future__ import annotations

from . import inventory, metadata, pool_status, solve, taint_impact, validate  # noqa: F401
