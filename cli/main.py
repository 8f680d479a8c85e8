"""The ``drasat`` command: a thin layer of arguments in, rendering out.

Each subcommand lives in its own module; this one only assembles the group and
turns drasat's errors into messages and exit codes (never a traceback).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import warnings
from typing import Any

import click

from drasat.cli.render.text import echo
from drasat.models.errors import DrasatWarning

from .startup import importing

COMMANDS = {
    "compare": "compare",
    "completion": "completion",
    "defrag": "defrag",
    "explain": "explain",
    "fit": "fit",
    "inventory": "inventory",
    "metadata": "metadata",
    "podresources": "podresources",
    "pool-status": "pool_status",
    "preempt": "preempt",
    "scale-up": "scale_up",
    "schedule": "schedule",
    "solve": "solve",
    "taint-impact": "taint_impact",
    "validate": "validate",
}
"""Each subcommand and its module in :mod:`drasat.cli.commands`, which defines a click command of the same
name (the command's name with ``_`` for ``-``). A command's module (and what it needs: OR-Tools, CEL
engines, rendering) is imported only when that command runs (click's lazily loaded subcommands); the
modules know nothing of this group."""


class _Context(click.Context):
    """Help in the name drasat was run by: ``kubectl drasat`` as a kubectl plugin, in the examples too."""

    def get_help(self) -> str:
        return as_run(super().get_help(), self.find_root().info_name or "drasat")


def as_run(text: str, program: str) -> str:
    """``text`` with ``drasat`` as ``program`` where a command line starts (``drasat solve``, ``drasat
    COMMAND``); prose (``drasat's verifier``), ``drasat[cluster]`` and paths stay."""
    if program == "drasat" or not program.endswith(" drasat"):  # as drasat (or a test runner's name)
        return text
    # completion's script completes `drasat` itself (kubectl completes its plugins on its own)
    words = "|".join(re.escape(name) for name in (*COMMANDS, "COMMAND", "-") if name != "completion")
    return re.sub(rf"(?<![\w./\[-])(?<!kubectl )drasat(?= (?:{words})\b)", program, text)


class _LazyGroup(click.Group):
    context_class = _Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            module_name = COMMANDS[name]
            with importing():
                module = importlib.import_module(f"{__package__}.commands.{module_name}")
            command = getattr(module, module_name)
            command.context_class = _Context
            self.add_command(command, name)
        return super().get_command(ctx, name)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # only for --version: it reads every dist

    try:
        return version("drasat")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "unknown"


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        echo(f"{ctx.find_root().info_name}, version {_version()}")
        ctx.exit()


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
  drasat fit deployment.yaml cluster/                    how many replicas fit now, and where
  drasat scale-up --node-template node.yaml cluster/     the fewest nodes to add for the pending pods
  drasat preempt default/urgent cluster/                 what to evict so that a pod fits
  drasat defrag --moves 2 cluster/                       moves that free whole GPUs

Run `drasat COMMAND --help` for each command's options and exit codes.
Ctrl-C stops any command at once: exit 130, one line on stderr, no output file left half-written.
"""


@click.group(
    cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG, invoke_without_command=True
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Allocate Kubernetes DRA devices (resource.k8s.io/v1) with a constraint solver.

    Feed drasat what `kubectl get -o yaml` prints: ResourceSlices, DeviceClasses,
    ResourceClaims (allocated ones count as in use), Nodes, DeviceTaintRules, and
    Pods, ResourceClaimTemplates and PodGroups for scheduling.
    """
    warnings.showwarning = _show_warning
    if ctx.invoked_subcommand is None:  # bare `drasat` asks what it can do: help on stdout, success
        click.echo(ctx.get_help())  # drasat's own text, written by click
        ctx.exit(0)


_PYTHON_SHOWWARNING = warnings.showwarning


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """drasat's own warnings as one ``warning: ...`` line on stderr, not Python's file:line form."""
    if issubclass(category, DrasatWarning):
        echo(f"warning: {message}", err=True)
    else:
        _PYTHON_SHOWWARNING(message, category, *args, **kwargs)


def load_all_commands() -> None:
    """Every command's module imported now (a fuzzer or a test runner that wants no import inside its loop)."""
    context = click.Context(cli)
    for name in COMMANDS:
        cli.get_command(context, name)


def _tolerate_narrow_encodings() -> None:
    """Characters the console cannot show (an expression's 'é' under cp1252 or ascii) print as escapes.

    Without this, one such character in a message would end the command with a
    UnicodeEncodeError traceback instead of the message.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _without_pydantic_plugins() -> None:
    """No scan for pydantic plugins, unless the user set ``PYDANTIC_DISABLE_PLUGINS`` (empty to have them).

    At its first model class pydantic reads the entry points of every installed distribution to find
    plugins (observability hooks around validation, which drasat's command never asks for): 20 M
    instructions (~5 ms) in a venv of 66 distributions at each start, and more in the larger
    environments users have. The library leaves the variable alone; only this process sets it.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def main(prog_name: str = "drasat") -> None:
    """Console-script entry point."""
    from drasat.models.collector import allow_freezing

    from .interrupt import exit_on_interrupt
    from .standard_output import answer_written

    _without_pydantic_plugins()
    allow_freezing()  # a one-shot process: what its imports and its input built lives until it ends
    _tolerate_narrow_encodings()
    exit_on_interrupt()
    with answer_written():  # a failed write of the answer is an error (or, for a reader gone, a quiet end)
        cli(prog_name=prog_name)


def kubectl_plugin() -> None:
    """Entry point of ``kubectl-drasat``: kubectl runs it for ``kubectl drasat ...`` (a kubectl plugin is
    any executable named kubectl-NAME on the PATH), so help and messages say ``kubectl drasat``."""
    main("kubectl drasat")
