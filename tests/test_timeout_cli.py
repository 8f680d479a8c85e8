"""--timeout on solve: a best-so-far answer (verified, exit 4) or "no answer within N s" (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from drasat.cli.main import cli, load_all_commands
from drasat.models.errors import SolveTimeout
from drasat.models.loader import load_paths
from drasat.solver.allocation.problem import problem_from_objects
from drasat.solver.verification.verifier import verify

from .printed import printed_allocations

EXAMPLES = str(Path(__file__).resolve().parents[1] / "examples")


def test_time_up_after_an_allocation_prints_it_verified_with_exit_4(monkeypatch) -> None:
    from drasat.solver.allocation.cp_sat import stages

    real = stages.Stages.solve

    def solve(self, *assume, **options):  # type: ignore[no-untyped-def]
        if self.solves >= 1:  # the first solve answers; the prioritized-list stage finds the time up
            raise SolveTimeout("the CP-SAT solver ran out of time (raise --timeout)")
        return real(self, *assume, **options)

    monkeypatch.setattr(stages.Stages, "solve", solve)
    load_all_commands()
    result = CliRunner().invoke(
        cli,
        [
            "solve",
            "--node",
            "gpu-node-1",
            "--claims",
            "single-gpu,two-gpus",
            "--objective",
            "prioritized-list",
            "--timeout",
            "5",
            "-o",
            "json",
            EXAMPLES,
        ],
    )
    assert result.exit_code == 4, result.stderr
    assert "may not be the prioritized-list answer" in result.stderr
    items = json.loads(result.stdout)["items"]
    problem = problem_from_objects(list(load_paths([EXAMPLES])), node="gpu-node-1", claims=["single-gpu", "two-gpus"])
    assert verify(problem, printed_allocations(items)) == []


def test_no_answer_in_time_says_so_with_exit_1(shared: Path) -> None:
    pigeon = shared / "scenarios" / "perf" / "pigeon-4x16-17.yaml"  # depth-first search needs many seconds
    load_all_commands()
    result = CliRunner().invoke(cli, ["solve", "--solver", "greedy", "--timeout", "0.2", str(pigeon)])
    assert result.exit_code == 1 and result.stdout == ""
    assert "\nerror: no answer within 0.2 s: " in result.stderr


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_timeouts_that_are_no_time_limit_are_refused(value: str) -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, ["solve", "--timeout", value, EXAMPLES])
    assert result.exit_code == 2 and result.stdout == ""


@pytest.mark.parametrize("command", [["schedule"], ["explain", "--node", "gpu-node-1"]])
def test_every_command_that_solves_says_no_answer_within_the_limit(command: list[str]) -> None:
    load_all_commands()
    result = CliRunner().invoke(cli, [*command, "--timeout", "0.000001", EXAMPLES])
    assert result.exit_code == 1 and result.stdout == ""
    assert "error: no answer within 1e-06 s:" in result.stderr
