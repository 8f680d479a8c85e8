"""``drasat completion bash|zsh|fish``: the shell's completion script, as ``kubectl completion`` prints one;
and the answer ``kubectl drasat <TAB>`` asks ``kubectl_complete-drasat`` for (kubectl >= 1.26).

Both ask click's own completion, so they stay right when drasat is upgraded.
"""

from __future__ import annotations

from enum import IntFlag

import click

from drasat.cli.render.text import echo

EPILOG = """\b
Load it in the running shell, or add the line to the shell's start-up file:
  # bash, in ~/.bashrc
  source <(drasat completion bash)
  # zsh, in ~/.zshrc
  source <(drasat completion zsh)
  # fish, in ~/.config/fish/config.fish
  drasat completion fish | source

Commands, options and their choices (-o formats, --solver, --objective, ...) and file names complete. The
script asks drasat itself (click's shell completion), so it stays right when drasat is upgraded.

\b
As a kubectl plugin: `kubectl-drasat completion bash` completes
kubectl-drasat typed as it is; `kubectl drasat <TAB>` is completed by
kubectl (1.26 and newer) through kubectl_complete-drasat, installed beside
kubectl-drasat: nothing to load.

\b
Exit status: 0 printed; 2 a shell other than bash, zsh or fish.
"""

PROGRAM = "drasat"
PLUGIN = "kubectl drasat"
"""How ``kubectl-drasat`` names itself (kubectl runs it for ``kubectl drasat``)."""
PLUGIN_PROGRAM = "kubectl-drasat"
PLUGIN_COMPLETE_VAR = "_KUBECTL_DRASAT_COMPLETE"
"""The variable ``kubectl-drasat`` answers completion requests on (click would build one with a space)."""


@click.command(epilog=EPILOG)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for drasat (bash, zsh or fish)."""
    from click.shell_completion import get_completion_class

    from drasat.cli.main import cli

    completer = get_completion_class(shell)
    assert completer is not None  # click knows the three shells the choice allows
    if ctx.find_root().info_name == PLUGIN:
        program, variable = PLUGIN_PROGRAM, PLUGIN_COMPLETE_VAR
    else:  # the variable click's main() answers completion requests on
        program, variable = PROGRAM, f"_{PROGRAM.upper()}_COMPLETE"
    echo(completer(cli, {}, program, variable).source(), nl=False)


class Directive(IntFlag):
    """Cobra's ShellCompDirective, the last line of an answer kubectl reads from a plugin's completer."""

    DEFAULT = 0  # the shell completes file names when no word is offered
    NO_SPACE = 2  # the word goes on: -o jsonpath=
    NO_FILE = 4
    DIRS = 16


def kubectl_completions(args: list[str]) -> str:
    """The answer to ``kubectl_complete-drasat ARG... WORD``, in the format kubectl reads (Cobra's
    ``__complete``): one completion a line, a tab before its description, then ``:`` and the directive.
    kubectl passes the words after ``drasat``, the last being the one to complete ("" for none yet)."""
    from click.shell_completion import ShellComplete

    from drasat.cli.main import cli

    words, incomplete = args[:-1], args[-1] if args else ""
    items = ShellComplete(cli, {}, PLUGIN, PLUGIN_COMPLETE_VAR).get_completions(words, incomplete)
    kinds = {item.type for item in items}
    directive = Directive.DEFAULT if "file" in kinds else Directive.DIRS if "dir" in kinds else Directive.NO_FILE
    plain = [item for item in items if item.type == "plain"]
    if plain and all(str(item.value).endswith("=") for item in plain):
        directive |= Directive.NO_SPACE
    lines = [f"{item.value}\t{item.help}" if item.help else str(item.value) for item in plain]
    return "".join(f"{line}\n" for line in lines) + f":{int(directive)}\n"
