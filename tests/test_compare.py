"""``drasat compare`` and ``compare()``: greedy and CP-SAT side by side, both answers verified."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from drasat.cli.main import cli, load_all_commands
from drasat.models.loader import load_paths
from drasat.solver.allocation.problem import Problem, claim_key, problem_from_objects
from drasat.solver.report.comparison import ALLOCATED, TIMEOUT, UNSCHEDULABLE, Comparison, compare
from drasat.solver.verification.verifier import verify

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = str(ROOT / "examples")
PRIORITIZED = str(ROOT / "tests" / "data" / "prioritized-beats-first-fit.yaml")


def _problem(path: str, node: str | None = None) -> Problem:
    return problem_from_objects([loaded.obj for loaded in load_paths([path]).objects], node=node)


def _verified(problem: Problem, comparison: Comparison) -> None:
    for side in (comparison.greedy, comparison.cp_sat):
        if side.verdict == ALLOCATED:
            assert set(side.results) == {claim_key(claim) for claim in problem.claims}
            assert verify(problem, side.results) == [], side.search


def run(*args: str, stdin: str | None = None) -> Result:
    load_all_commands()
    return CliRunner().invoke(cli, ["compare", *args], input=stdin, catch_exceptions=False)


NOTHING = "notice: nothing to allocate: the input has no ResourceClaim without status.allocation\n"


@pytest.mark.parametrize("command", ["solve", "explain", "compare"])
def test_nothing_to_allocate_is_one_notice_exit_0_for_solve_explain_and_compare(command: str) -> None:
    """No pending claim on the node: the same notice and exit 0 from all three, no error, no empty table."""
    load_all_commands()
    cluster = str(ROOT / "examples" / "cluster.yaml")
    text = CliRunner().invoke(cli, [command, "--node", "gpu-node-1", "-o", "name", cluster])
    assert (text.exit_code, text.stdout, text.stderr) == (0, "", NOTHING)
    if command != "explain":  # explain has no table form; its text is nothing
        table = CliRunner().invoke(cli, [command, "--node", "gpu-node-1", "-o", "table", cluster])
        assert (table.exit_code, table.stdout, table.stderr) == (0, "", NOTHING + "No resources found\n")
    plain = CliRunner().invoke(cli, [command, "--node", "gpu-node-1", cluster])
    assert plain.exit_code == 0 and plain.stderr.startswith(NOTHING) and "identical choices" not in plain.stdout


def test_compare_of_empty_claims_in_json_is_an_empty_list() -> None:
    result = run("--node", "gpu-node-1", "-o", "json", str(ROOT / "examples" / "cluster.yaml"))
    assert result.exit_code == 0 and json.loads(result.stdout) == {"apiVersion": "v1", "kind": "List", "items": []}


def test_compare_schedule_with_no_pending_pod_compares_nothing() -> None:
    result = run("--schedule", str(ROOT / "examples" / "cluster.yaml"))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "notice: no pending pods in the input (pods without spec.nodeName)\nNo resources found\n"


def test_example_first_fit_is_identical_on_both_sides() -> None:
    problem = _problem(EXAMPLES, "gpu-node-1")
    comparison = compare(problem)
    _verified(problem, comparison)
    assert comparison.greedy.verdict == comparison.cp_sat.verdict == ALLOCATED
    assert comparison.identical and comparison.differences == []
    assert comparison.greedy.devices == comparison.cp_sat.devices
    assert comparison.greedy.devices["default/two-gpus"]["gpus"] == [
        "gpu.example.com/gpu-node-1/gpu-1",
        "gpu.example.com/gpu-node-1/gpu-2",
    ]
    assert comparison.greedy.statistics["greedyTries"] > 0
    assert comparison.cp_sat.statistics["cpSatSolves"] > 0  # CP-SAT alone, not greedy within a budget


def test_prioritized_list_differs_from_first_fit_and_names_the_differences() -> None:
    problem = _problem(PRIORITIZED)
    comparison = compare(problem, objective="prioritized-list")
    _verified(problem, comparison)
    assert comparison.greedy.devices["default/a"] == {
        "gpus/two": ["gpu.example.com/node-1/gpu-0", "gpu.example.com/node-1/gpu-1"]
    }
    assert comparison.greedy.devices["default/b"] == {"gpus/one": ["gpu.example.com/node-1/gpu-2"]}
    assert set(comparison.cp_sat.devices["default/a"]) == {"gpus/one"}
    assert set(comparison.cp_sat.devices["default/b"]) == {"gpus/three"}
    assert not comparison.identical
    assert any(line.startswith("claim default/b, request gpus/three:") for line in comparison.differences)


def test_same_input_first_fit_on_both_sides_is_identical() -> None:
    problem = _problem(PRIORITIZED)
    comparison = compare(problem, objective="first-fit")
    _verified(problem, comparison)
    assert comparison.identical, comparison.differences


def test_unschedulable_on_both_sides_is_reported_not_raised() -> None:
    text = Path(PRIORITIZED).read_text().replace("count: 1}", "count: 5}")  # b's last choice wants 5 GPUs
    problem = problem_from_objects([loaded.obj for loaded in load_paths(["-"], io.StringIO(text)).objects])
    comparison = compare(problem)
    assert comparison.greedy.verdict == comparison.cp_sat.verdict == UNSCHEDULABLE
    assert "no allocation exists" in comparison.greedy.message
    # a "no" is where the statistics matter most: what proving it took on each side
    assert comparison.greedy.statistics["greedyTries"] > 0 and comparison.greedy.statistics["greedyBacktracks"] > 0
    assert comparison.cp_sat.statistics["cpSatSolves"] >= 1 and "cpSatConflicts" in comparison.cp_sat.statistics
    assert comparison.identical


def test_a_side_that_runs_out_of_time_is_a_timeout_verdict(shared: Path) -> None:
    pigeon = shared / "scenarios" / "perf" / "pigeon-4x12-13.yaml"
    problem = _problem(str(pigeon))
    comparison = compare(problem, time_limit=0.05)  # greedy needs about a second, CP-SAT milliseconds
    assert comparison.greedy.verdict == TIMEOUT
    assert comparison.cp_sat.verdict == UNSCHEDULABLE
    assert comparison.differences == ["verdict: greedy timeout, cp-sat unschedulable"]


def test_cli_table_json_and_yaml() -> None:
    table = run("--node", "gpu-node-1", EXAMPLES)
    assert table.exit_code == 0, table.stderr
    rows = [line.split() for line in table.stdout.splitlines()]
    assert (
        "identical choices" in table.stdout and ["default/trainer-0-gpu-and-nic-kmq86", "gpu", "gpu-0", "gpu-0"] in rows
    )
    assert ["CLAIM", "REQUEST", "GREEDY", "CP-SAT"] in rows and "SEARCH" not in table.stdout.upper()
    assert "search" in run("--node", "gpu-node-1", "-o", "wide", EXAMPLES).stdout
    named = run("--node", "gpu-node-1", "--claims", "single-gpu,two-gpus", EXAMPLES)
    assert named.exit_code == 0 and "trainer-0" not in named.stdout
    assert any(line.split()[:2] == ["default/two-gpus", "gpus"] for line in named.stdout.splitlines())
    as_json = run("--node", "gpu-node-1", "-o", "json", EXAMPLES)
    data = json.loads(as_json.stdout)
    assert data["kind"] == "AllocationComparison" and data["metadata"] == {"name": "gpu-node-1"}
    assert run("--node", "gpu-node-1", "-o", "name", EXAMPLES).stdout == (
        "resourceclaim.resource.k8s.io/trainer-0-gpu-and-nic-kmq86\n"
        "resourceclaim.resource.k8s.io/notebook-0-extended-resources-vqtlt\n"
    )
    assert data["identical"] is True and data["node"] == "gpu-node-1"
    assert data["greedy"]["verdict"] == data["cpSat"]["verdict"] == "allocated"
    as_yaml = yaml.safe_load(run("--node", "gpu-node-1", "-o", "yaml", EXAMPLES).stdout)
    for side in ("greedy", "cpSat"):  # the same data but for the clock
        assert as_yaml[side].pop("seconds") > 0 and data[side].pop("seconds") > 0
    assert as_yaml == data


def test_cli_objective_prioritized_list_lists_differences() -> None:
    result = run("--objective", "prioritized-list", PRIORITIZED)
    assert result.exit_code == 0, result.stderr
    assert ["objective", "first-fit", "prioritized-list"] in [line.split() for line in result.stdout.splitlines()]
    assert "the choices differ:" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--node", "nope", EXAMPLES], "nope"),
        (["--claims", "missing", "--node", "gpu-node-1", EXAMPLES], "missing"),
        (["/no/such/file.yaml"], "no such file"),
    ],
)
def test_cli_bad_input_exits_2_with_nothing_on_stdout(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr and "Traceback" not in result.stderr


def test_the_public_api_is_listed_and_documented() -> None:
    import drasat.solver as solver

    public = [name for name in dir(solver) if not name.startswith("_")]
    assert public == sorted(solver.__all__)
    for name in public:
        assert callable(getattr(solver, name)), f"{name} is a module, not the function or class"
        assert getattr(solver, name).__doc__, f"{name} has no docstring"
