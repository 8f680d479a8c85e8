"""What the reporting commands (pool-status, inventory, taint-impact, metadata) share.

Each reads the input with :func:`load_bundle` (so that a problem can name the file and
object it comes from), turns drasat's errors into one message and an exit code, and
prints data as YAML or JSON.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import yaml

from drasat.cli.render.text import echo
from drasat.models.errors import DrasatError

from .loading import load_bundle

__all__ = ["dump", "exits_on_error", "load_bundle"]

F = TypeVar("F", bound=Callable[..., Any])


def exits_on_error(command: F) -> F:
    """Run the command body; a DrasatError becomes one message on stderr and its exit code, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except DrasatError as exc:
            echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


def dump(data: Any, output: str) -> str:
    """``data`` (plain JSON values) as YAML or indented JSON text."""
    if output == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False)
