"""The command line as a newcomer meets it: bare commands, odd options, odd environments, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import _register, cli

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")


def drasat(*args: str, stdin: str | None = None):
    _register()
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False, prog_name="drasat")


def process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "drasat.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_bare_drasat_prints_help_and_succeeds() -> None:
    result = drasat()
    assert result.exit_code == 0 and result.stdout.startswith("Usage: drasat") and "solve" in result.stdout
    done = process()
    assert done.returncode == 0 and done.stdout.startswith("Usage: drasat") and done.stderr == ""


@pytest.mark.parametrize("timeout", ["nan", "inf", "-inf", "1e400", "0", "-1", "0.0"])
def test_timeouts_no_solver_can_keep_are_refused(timeout: str) -> None:
    result = drasat("solve", "--node", "gpu-node-1", "--timeout", timeout, EXAMPLES)
    assert result.exit_code == 2 and result.stdout == ""
    assert f"'{timeout}' is not a time limit: give a finite number of seconds above 0" in result.stderr


def test_a_fractional_timeout_is_fine() -> None:
    assert drasat("solve", "--node", "gpu-node-1", "--timeout", "0.5e1", EXAMPLES).exit_code == 0
