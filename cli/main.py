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
from collections.abc import Iterable
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
        return as_run(super().get_help(), self._program())

    def make_formatter(self) -> click.HelpFormatter:
        return _Formatter(self._program(), width=self.terminal_width, max_width=self.max_content_width)

    def _program(self) -> str:
        return self.find_root().info_name or "drasat"


class _Formatter(click.HelpFormatter):
    """Renames before click wraps: a paragraph that names ``kubectl drasat`` is wrapped at its own length,
    not made 8 characters longer after wrapping (past an 80-column terminal)."""

    def __init__(self, program: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.program = program

    def write_text(self, text: str) -> None:
        super().write_text(as_run(text, self.program))

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        renamed = [(term, as_run(text, self.program)) for term, text in rows]
        super().write_dl(renamed, col_max, col_spacing)


def as_run(text: str, program: str) -> str:
    """``text`` with ``drasat`` as ``program`` where a command line starts (``drasat solve``, ``drasat
    COMMAND``); prose (``drasat's verifier``), ``drasat[cluster]`` and paths stay."""
    if program == "drasat" or not program.endswith(" drasat"):  # as drasat (or a test runner's name)
        return text
    # `kubectl drasat completion bash` prints the script that completes kubectl-drasat: renamed too
    words = "|".join(re.escape(name) for name in (*COMMANDS, "COMMAND", "-"))
    # already named (``kubectl drasat``, maybe wrapped between the two words) stays as it is
    pattern = rf"(?<![\w./\[-])(kubectl\s+)?drasat(?= (?:{words})\b)"
    return re.sub(pattern, lambda m: m.group(0) if m.group(1) else program, text)


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
  # Check manifests as the API server would
  drasat validate cluster/
  # Allocate every pending claim on worker-1
  drasat solve --node worker-1 cluster/
  # Place each pending pod on the best node
  drasat schedule -o table cluster/
  # Straight from a cluster (with no FILE, the current context is read)
  kubectl get resourceslices,deviceclasses,resourceclaims,nodes -A -o yaml \\
      | drasat solve --node worker-1 -o table -
  # Pool availability, with exact partition headroom
  drasat pool-status --driver gpu.example.com cluster/
  # Every device's state, as a table or a page
  drasat inventory --html map.html cluster/
  # What a DeviceTaintRule would evict
  drasat taint-impact rule.yaml cluster/
  # The device metadata files drivers write
  drasat metadata --out meta/ cluster/
  # How many replicas fit now, and where
  drasat fit deployment.yaml cluster/
  # The fewest nodes to add for the pending pods
  drasat scale-up --node-template node.yaml cluster/
  # What to evict so that a pod fits
  drasat preempt default/urgent cluster/
  # Moves that free whole GPUs
  drasat defrag --moves 2 cluster/

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


def main(prog_name: str = "drasat", complete_var: str | None = None) -> None:
    """Console-script entry point."""
    from drasat.models.collector import allow_freezing

    from .interrupt import exit_on_interrupt
    from .standard_output import answer_written

    _without_pydantic_plugins()
    allow_freezing()  # a one-shot process: what its imports and its input built lives until it ends
    _tolerate_narrow_encodings()
    exit_on_interrupt()
    with answer_written():  # a failed write of the answer is an error (or, for a reader gone, a quiet end)
        cli(prog_name=prog_name, complete_var=complete_var)


def kubectl_plugin() -> None:
    """Entry point of ``kubectl-drasat``: kubectl runs it for ``kubectl drasat ...`` (a kubectl plugin is
    any executable named kubectl-NAME on the PATH), so help and messages say ``kubectl drasat``."""
    from .commands.completion import PLUGIN, PLUGIN_COMPLETE_VAR

    main(PLUGIN, PLUGIN_COMPLETE_VAR)


def kubectl_complete() -> None:
    """Entry point of ``kubectl_complete-drasat``: kubectl (1.26 and newer) runs it to complete
    ``kubectl drasat ...`` on the command line, with the words after ``drasat``; it prints the completions."""
    from .commands.completion import kubectl_completions
    from .standard_output import answer_written

    _without_pydantic_plugins()
    with answer_written():
        sys.stdout.write(kubectl_completions(sys.argv[1:]))
