"""`drasat explain` on every unschedulable scenario of ../shared/scenarios: an explanation, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands

from .scenario_runner import SHARED, cli_args, scenario_doc, scenario_files
from .shared_inputs import params

ALL = scenario_files(*(SHARED / "scenarios" / folder for folder in ("upstream", "cel", "perf", "scale")))
UNSCHEDULABLE = [
    p
    for p in ALL
    if "unschedulable: true" in p.read_text()  # cheap first, then exact
    and (scenario_doc(p).get("expect") or {}).get("unschedulable")
]
ENDINGS = (
    "cause: too few candidates for ",
    "dropping any one of them would let the claims fit",
    "independent conflicts stand in the way",
    "(without any one of them the others hold",
    "but this rule cannot hold:",
)


@pytest.mark.parametrize("path", params(UNSCHEDULABLE), ids=lambda p: p.stem if p else "none")
def test_explain_names_a_cause_or_a_conflict(shared: Path, path: Path) -> None:
    load_all_commands()
    doc = scenario_doc(path)
    options = [a for a in cli_args(path, doc, "cp-sat")[5:] if a != path.name]  # drop: solve -o json --solver X
    result = CliRunner().invoke(cli, ["explain", *options], catch_exceptions=False)
    assert result.exit_code == 1, result.stderr
    assert any(ending in result.stdout for ending in ENDINGS), result.stdout
    assert "Traceback" not in result.stderr
