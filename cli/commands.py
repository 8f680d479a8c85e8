"""Imports every subcommand module so that each registers itself on the ``drasat`` group."""

from __future__ import annotations

from . import compare, explain, inventory, metadata, pool_status, schedule, solve, taint_impact, validate  # noqa: F401
