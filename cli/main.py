"""The ``drasat`` command: a thin layer of arguments in, rendering out.

Each subcommand lives in its own module; this one only assembles the group and
turns drasat's errors into messages and exit codes (never a traceback).
"""

from __future__ import annotations

import warnings
from importlib.metadata import PackageNotFoundError, version

from typing import Any

import click

from drasat.models.errors import DrasatWarning


def _version() -> str:
    try:
        return version("drasat")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "unknown"


EPILOG = """\b
Examples:
  drasat validate cluster/                     check manifests as the API server would
  drasat solve --node worker-1 cluster/        allocate every pending claim on worker-1
  kubectl get resourceslices,deviceclasses,resourceclaims,nodes -A -o yaml \\
      | drasat solve --node worker-1 -o table -

Run `drasat COMMAND --help` for each command's options and exit codes.
Ctrl-C stops any command at once: exit 130, one line on stderr, no output file left half-written.
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.version_option(_version(), "--version", prog_name="drasat")
def cli() -> None:
    """Allocate Kubernetes DRA devices (resource.k8s.io/v1) with a constraint solver.

    Feed drasat what `kubectl get -o yaml` prints: ResourceSlices, DeviceClasses,
    ResourceClaims (allocated ones count as in use), Nodes, DeviceTaintRules.
    """
    warnings.showwarning = _show_warning


_PYTHON_SHOWWARNING = warnings.showwarning


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """drasat's own warnings as one ``warning: ...`` line on stderr, not Python's file:line form."""
    if issubclass(category, DrasatWarning):
        click.echo(f"warning: {message}", err=True)
    else:
        _PYTHON_SHOWWARNING(message, category, *args, **kwargs)


def _register() -> None:
    from . import commands  # noqa: F401  (each command module adds itself to the group)


def main() -> None:
    """Console-script entry point."""
    from .interrupt import exit_on_interrupt

    exit_on_interrupt()
    _register()
    cli(prog_name="drasat")
