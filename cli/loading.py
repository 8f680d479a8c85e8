"""Reading the command line's FILE arguments into model objects, shared by the commands."""

from __future__ import annotations

import sys

from drasat.cli.render.text import echo
from drasat.models.bundle import Bundle
from drasat.models.errors import InputError


def load_bundle(files: tuple[str, ...] | list[str]) -> Bundle:
    """Everything in ``files`` with where each object came from; notices go to stderr; a problem raises InputError."""
    from drasat.models.loader import load_paths

    bundle = load_paths(list(files), stdin=sys.stdin)
    for notice in bundle.notices:
        echo(f"notice: {notice}", err=True)
    if bundle.problems:
        raise InputError(bundle.problems)
    return bundle
