"""The ``drasat`` command: a thin layer of arguments in, rendering out.

Each subcommand lives in its own module; this one only assembles the group and
turns drasat's errors into messages and exit codes (never a traceback).
"""

from __future__ import annotations

import sys
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
  drasat schedule -o table cluster/            place each pending pod on the best node
  kubectl get resourceslices,deviceclasses,resourceclaims,nodes -A -o yaml \\
      | drasat solve --node worker-1 -o table -
  drasat pool-status --driver gpu.example.com cluster/   pool availability, exact partition headroom
  drasat inventory --html map.html cluster/              every device's state, as a table or a page
  drasat taint-impact rule.yaml cluster/                 what a DeviceTaintRule would evict
  drasat metadata --out meta/ cluster/                   the device metadata files drivers write

Run `drasat COMMAND --help` for each command's options and exit codes.
Ctrl-C stops any command at once: exit 130, one line on stderr, no output file left half-written.
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG, invoke_without_command=True)
@click.version_option(_version(), "--version", prog_name="drasat")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Allocate Kubernetes DRA devices (resource.k8s.io/v1) with a constraint solver.

    Feed drasat what `kubectl get -o yaml` prints: ResourceSlices, DeviceClasses,
    ResourceClaims (allocated ones count as in use), Nodes, DeviceTaintRules, and
    Pods, ResourceClaimTemplates and PodGroups for scheduling.
    """
    warnings.showwarning = _show_warning
    if ctx.invoked_subcommand is None:  # bare `drasat` asks what it can do: help on stdout, success
        click.echo(ctx.get_help())
        ctx.exit(0)


_PYTHON_SHOWWARNING = warnings.showwarning


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """drasat's own warnings as one ``warning: ...`` line on stderr, not Python's file:line form."""
    if issubclass(category, DrasatWarning):
        click.echo(f"warning: {message}", err=True)
    else:
        _PYTHON_SHOWWARNING(message, category, *args, **kwargs)


def _register() -> None:
    from . import commands  # noqa: F401  (each command module adds itself to the group)


def _tolerate_narrow_encodings() -> None:
    """Characters the console cannot show (an expression's 'é' under cp1252 or ascii) print as escapes.

    Without this, one such character in a message would end the command with a
    UnicodeEncodeError traceback instead of the message.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(prog_name: str = "drasat") -> None:
    """Console-script entry point."""
    from .interrupt import exit_on_interrupt

    _tolerate_narrow_encodings()
    exit_on_interrupt()
    _register()
    cli(prog_name=prog_name)


def kubectl_plugin() -> None:
    """Entry point of ``kubectl-drasat``: kubectl runs it for ``kubectl drasat ...`` (a kubectl plugin is
    any executable named kubectl-NAME on the PATH), so help and messages say ``kubectl drasat``."""
    main("kubectl drasat")
