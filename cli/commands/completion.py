"""``drasat completion bash|zsh|fish``: the shell's completion script, as ``kubectl completion`` prints one."""

from __future__ import annotations

import click

from drasat.cli.render.text import echo

EPILOG = """\b
Load it in the running shell, or add the line to the shell's start-up file:
  bash:  source <(drasat completion bash)     (in ~/.bashrc)
  zsh:   source <(drasat completion zsh)      (in ~/.zshrc)
  fish:  drasat completion fish | source      (in ~/.config/fish/config.fish)

Commands, options and their choices (-o formats, --solver, --objective, ...) and file names complete. The
script asks drasat itself (click's shell completion), so it stays right when drasat is upgraded.

\b
Exit status: 0 printed; 2 a shell other than bash, zsh or fish.
"""

PROGRAM = "drasat"
"""The completed program: ``kubectl drasat`` is completed by kubectl, which runs ``kubectl-drasat``."""


@click.command(epilog=EPILOG)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for drasat (bash, zsh or fish)."""
    from click.shell_completion import get_completion_class

    from drasat.cli.main import cli

    completer = get_completion_class(shell)
    assert completer is not None  # click knows the three shells the choice allows
    variable = f"_{PROGRAM.upper()}_COMPLETE"  # the variable click's main() answers completion requests on
    echo(completer(cli, {}, PROGRAM, variable).source(), nl=False)
