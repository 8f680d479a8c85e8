"""Where a command's objects come from: FILE arguments, a live cluster, or both.

Every command that reads the cluster's state shares these options, so that
``--kubeconfig``/``--context`` mean the same everywhere and files can add to (or
stand in for) what the cluster holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from drasat.cli.render.text import echo
from drasat.models.bundle import Bundle
from drasat.models.errors import InputError

from .loading import load_bundle, max_input_size_option

F = TypeVar("F", bound=Callable[..., Any])


def input_options(function: F) -> F:
    """FILE... (optional when a cluster is read), ``-f/--filename``, ``-R``, ``--max-input-size``,
    ``--kubeconfig`` and ``--context``."""
    function = max_input_size_option(function)
    function = click.option(
        "-R",
        "--recursive",
        is_flag=True,
        expose_value=False,
        help="Accepted as kubectl does; directories are always read recursively.",
    )(function)
    function = click.option(
        "-f",
        "--filename",
        "filenames",
        multiple=True,
        metavar="FILE",
        help="A file, directory or - (stdin), as kubectl's -f; repeatable, same as FILE arguments.",
    )(function)
    function = click.option(
        "--context", metavar="NAME", help="Read the cluster of this kubeconfig context (read-only: list calls only)."
    )(function)
    function = click.option(
        "--kubeconfig",
        metavar="PATH",
        type=click.Path(dir_okay=False),
        help="Read the cluster this kubeconfig points at (default context unless --context); "
        "needs pip install 'drasat[cluster]'.",
    )(function)
    return click.argument("files", nargs=-1, metavar="[FILE...]")(function)


def read_inputs(
    files: tuple[str, ...],
    kubeconfig: str | None,
    context: str | None,
    filenames: tuple[str, ...] = (),
    *,
    output: str | None = None,
) -> Bundle:
    """The objects of the cluster (with ``--kubeconfig``/``--context``) and then of the files, as one
    bundle that knows where each object came from; any problem raises InputError. A live read shows
    a progress bar on a terminal unless ``output`` is for tools."""
    files = (*files, *filenames)
    if files.count("-") > 1:
        raise InputError("standard input (-) is given more than once; it can be read only once")
    if not files and kubeconfig is None and context is None:
        raise InputError(
            "nothing to read: give FILE... (a file, a directory, or - for stdin), "
            "or --kubeconfig/--context to read a live cluster"
        )
    bundle = Bundle()
    if kubeconfig is not None or context is not None:
        from drasat.models.live import read_cluster

        from .progress import Bar

        with Bar("reading the cluster", output=output) as bar:
            live = read_cluster(kubeconfig, context, progress=bar.update)
        for notice in live.notices:
            echo(f"notice: {notice}", err=True)
        if live.problems:
            raise InputError(live.problems)
        bundle.extend(live)
    if files:
        bundle.extend(load_bundle(files))
    if bundle.problems:  # the same object in the cluster and in a file, read as two
        raise InputError(bundle.problems)
    return bundle


def namespace_options(function: F) -> F:
    """``-n/--namespace`` and ``-A/--all-namespaces``, as kubectl spells them."""
    function = click.option(
        "-A",
        "--all-namespaces",
        is_flag=True,
        help="Consider pending pods and claims of every namespace (the default).",
    )(function)
    return click.option(
        "-n",
        "--namespace",
        metavar="NS",
        help="Consider only the pending pods and claims of this namespace (objects of every namespace "
        "still count as the cluster's state); bare names in --pods/--claims are taken "
        "from it.",
    )(function)


def in_namespace(names: str | None, namespace: str | None, all_namespaces: bool) -> str | None:
    """``--pods``/``--claims`` text with bare names put in ``namespace``."""
    if namespace is not None and all_namespaces:
        raise InputError("-n/--namespace and -A/--all-namespaces exclude each other")
    if names is None or namespace is None:
        return names
    return ",".join(n.strip() if "/" in n else f"{namespace}/{n.strip()}" for n in names.split(",") if n.strip())
