"""Reading the command line's FILE arguments into model objects, shared by the commands."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from drasat.cli.render.text import echo
from drasat.models.bundle import Bundle
from drasat.models.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])
_LIMIT = "drasat.max_input_size"


def max_input_size_option(function: F) -> F:
    """``--max-input-size SIZE`` for every command that reads files: kept in click's context, so that no
    command's signature carries it and :func:`load_bundle` (or :func:`input_limit`) finds it."""
    return click.option(
        "--max-input-size",
        metavar="SIZE",
        expose_value=False,
        callback=_remember_limit,
        help="The largest file (or stdin) read, as a quantity such as 512Mi or 2Gi (default 1Gi; a 10,000-node "
        "cluster is about 240Mi). Larger ones are refused before they are read.",
    )(function)


def input_limit() -> int:
    """The ``--max-input-size`` of the running command, in bytes (drasat's default outside one)."""
    from drasat.models.input_text import MAX_INPUT_BYTES

    context = click.get_current_context(silent=True)
    return int(context.meta.get(_LIMIT, MAX_INPUT_BYTES)) if context is not None else MAX_INPUT_BYTES


def load_bundle(files: tuple[str, ...] | list[str], *, keep_problems: bool = False) -> Bundle:
    """Everything in ``files`` with where each object came from; notices go to stderr; a problem raises
    InputError (unless ``keep_problems``: the bundle holds them)."""
    from drasat.models.loader import load_paths

    bundle = load_paths(list(files), stdin=sys.stdin, max_bytes=input_limit())
    for notice in bundle.notices:
        echo(f"notice: {notice}", err=True)
    bundle.notices = []  # said already
    if bundle.problems and not keep_problems:
        raise InputError(bundle.problems)
    return bundle


def _remember_limit(context: click.Context, _: click.Parameter, value: str | None) -> None:
    if value is None:
        return
    from drasat.models.quantity import Quantity, QuantityError

    try:
        size = Quantity.parse(value.strip())
    except QuantityError as exc:
        raise click.BadParameter(str(exc)) from None
    if not size.is_integer() or size.value < 1:
        raise click.BadParameter(f"{value} is not a whole number of bytes of at least 1")
    context.meta[_LIMIT] = int(size.value)
